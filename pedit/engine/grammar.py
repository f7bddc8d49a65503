"""A grammar beside verify: which tokens may come next, and which are forced.

llguidance's `LLMatcher` (a Rust Earley parser over the backend's vocabulary) follows the
answer token by token. pedit's constrained decoding rule, at every state S of the answer:
    F = forced(S)           # the bytes the grammar forces, tokenized canonically
    F non-empty:  emit F    # no draw, no row of logits needed
    else:         y = one draw from the row's logits with every token the grammar rejects
                  at -inf (greedy: the argmax of that row)
    the grammar complete (nothing may follow): stop, as EOS would.
The rule is a function of the state only, so plain constrained decoding (one forward pass
per token, forced ones included) and coalescence (forced tokens ride in the next pass
with the draft; .txt's "Coalescence") emit the same tokens seed for seed. Forced text is tokenized
canonically, as Outlines' coalescence does, rather than left to the model's sampling of
one of its spellings: that is the one place where this rule differs from masking alone.

The matcher never raises on a bad grammar or token: it enters an error state, which
`Matcher` turns into `GrammarError` (one line), for the shells to report with exit 2.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

KINDS = ("json", "regex", "lark")


class GrammarError(ValueError):
    """A schema, regex or grammar that is malformed or cannot be matched (one line)."""


@dataclass(frozen=True)
class Constraint:
    """What the answer must match: a JSON Schema (text), a regex, or a Lark grammar
    (llguidance's syntax). `compact`: JSON without optional whitespace (the most forced
    bytes: extraction); else any whitespace (an edit of a pretty-printed file)."""

    kind: str
    source: str
    compact: bool = False

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"constraint kind must be one of {', '.join(KINDS)}")


def json_grammar(text: str, name: str) -> Constraint | None:
    """JSON (any whitespace) for a .json file that parses; None for any other file, and for
    one that is not JSON yet (a grammar would forbid the edit that makes it so)."""
    if not name.lower().endswith(".json"):
        return None
    try:
        json.loads(text)
    except ValueError:
        return None
    return Constraint("json", "")


def _json_options(compact: bool) -> dict:
    if compact:
        return {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
    return {"whitespace_flexible": True}


def body_rule(c: Constraint) -> str:
    """The constraint as the right-hand side of one Lark rule."""
    if c.kind == "json":
        try:
            schema = json.loads(c.source) if c.source.strip() else {}
        except json.JSONDecodeError as e:
            raise GrammarError(f"the schema is not JSON: {e}") from None
        if not isinstance(schema, dict | bool):
            raise GrammarError("the schema must be a JSON object")
        if isinstance(schema, dict):
            schema = {**schema, "x-guidance": {**schema.get("x-guidance", {}), **_json_options(c.compact)}}
        return "%json " + json.dumps(schema)
    if c.kind == "regex":
        return "/" + c.source.replace("/", "\\/") + "/"
    return "@user"


def grammar(c: Constraint, after: str = "") -> str:
    """llguidance's grammar text for an answer that is the constraint's text, then
    `after` verbatim (a rewrite's answer: the file, then a newline and the closing fence)."""
    tail = f" {json.dumps(after)}" if after else ""
    top = f"start: body{tail}\nbody: {body_rule(c)}\n"
    if c.kind != "lark":
        return top
    return json.dumps({"grammars": [{"lark_grammar": top}, {"name": "user", "lark_grammar": c.source}]})


class _Vocab:
    """What llguidance's TokenizerWrapper reads from a tokenizer: every token's bytes (a
    control token as b"\\xff<name>", the padding past the tokenizer as b""), the EOS and
    special ids, and bytes -> ids."""

    def __init__(self, backend, tokens: list[bytes] | None = None):
        self._backend = backend
        self.tokens = (
            list(tokens) if tokens is not None else [backend.token_bytes(i) for i in range(backend.n_vocab)]
        )
        self.special_token_ids = [i for i, b in enumerate(self.tokens) if not b]
        for i in self.special_token_ids:
            self.tokens[i] = b"\xff<special_%d>" % i  # never text: only EOS is let through
        self.eos_token_id = min(backend.eos_ids)
        self.bos_token_id = None

    def __call__(self, data: bytes) -> list[int]:
        return self._backend.tokenize(data.decode("utf-8", errors="replace"))


# one per backend, built on first use and dropped with the backend: keyed weakly, so it
# holds no model alive. Building it for a 150k vocabulary takes about 0.3 s, and reading
# the token table from the backend 0.4 s more, unless a shell said where a cached table is
# (provide_tokens: machine/vocabulary.py keeps it on disk per model).
_TOKENIZERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def provide_tokens(backend, table) -> None:
    """`table(backend)` gives the backend's token table (token_bytes of every token) when a
    tokenizer is first built for it: a cached copy, read faster than the backend is asked
    (a function of the backend, so the entry holds no reference to it)."""
    _TABLES[backend] = table


def tokenizer_for(backend):
    """The backend's vocabulary as an llguidance LLTokenizer (logit rows' width: a model
    whose logits are wider than its tokenizer gets the padding, never allowed). Without
    llguidance's "slices": on the skeleton's grammars they made the tokenizer slower to
    build (0.50 s against 0.27 s for the default model) and each token's mask slower to
    compute (2.5 ms against 1.6 ms); a JSON mask stays under a quarter of a millisecond."""
    tok = _TOKENIZERS.get(backend)
    if tok is None:
        import llguidance

        table = _TABLES.get(backend)
        vocab = _Vocab(backend, table(backend) if table is not None else None)
        wrapper = llguidance.TokenizerWrapper(vocab)
        tok = llguidance.LLTokenizer(
            wrapper, n_vocab=backend.n_vocab, eos_token=sorted(backend.eos_ids), slices=[]
        )
        _TOKENIZERS[backend] = tok
    return tok


def _one_line(message: str) -> str:
    first = message.strip().splitlines()[0] if message.strip() else "invalid grammar"
    first = first.split("<state>")[0].strip().rstrip(":")
    return re.sub(r"^at \d+\(\d+\): ", "", first)  # a place in the grammar pedit wrote around it


def check(c: Constraint) -> None:
    """GrammarError (one line) if the constraint is malformed, or if no text but the empty
    one matches it (an answer under it could only be empty); no model's vocabulary needed,
    so the shells say it before a model loads."""
    import llguidance

    text = grammar(c)
    error = llguidance.LLMatcher.validate_grammar(text)
    if error and not error.startswith("WARNING"):
        raise GrammarError(_one_line(error))
    m = llguidance.LLMatcher(_bytes_tokenizer(), text, log_level=0)
    if m.is_error():
        raise GrammarError(_one_line(m.get_error()))
    # token b (< 256) is the byte b: a byte is allowed at the start iff some non-empty text
    # that starts with it matches (llguidance allows no byte that leads only to a dead end
    # of a regex; a Lark rule that never ends is beyond this check, and reaches --max-tokens)
    if not any(m.compute_bitmask()[:32]):
        raise GrammarError("only the empty text matches it" if m.is_accepting() else "no text matches it")


class _Bytes:
    """A vocabulary of the 256 bytes and an end-of-sequence token (TokenizerWrapper's reads)."""

    tokens = [bytes([b]) for b in range(256)] + [b"\xff<eos>"]
    special_token_ids = [256]
    eos_token_id, bos_token_id = 256, None

    def __call__(self, data: bytes) -> list[int]:
        return list(data)


def _bytes_tokenizer():
    import llguidance

    return llguidance.LLTokenizer(llguidance.TokenizerWrapper(_Bytes()), n_vocab=257, eos_token=[256])


class Matcher:
    """The answer's place in the grammar. Consume only tokens it allows."""

    def __init__(self, tokenizer, text: str):
        import llguidance

        self._m = llguidance.LLMatcher(tokenizer, text, log_level=0)
        self._n = tokenizer.vocab_size
        if self._m.is_error():
            raise GrammarError(_one_line(self._m.get_error()))

    def forced(self) -> list[int]:
        """Tokens the grammar forces next (canonical tokenization); [] if it has a choice."""
        return self._m.compute_ff_tokens()

    @property
    def done(self) -> bool:
        """Nothing may follow (the grammar is complete): the answer ends here."""
        return self._m.is_stopped()

    def valid_prefix(self, tokens: Sequence[int]) -> int:
        """How many of `tokens` the grammar allows, in order, from here."""
        return self._m.validate_tokens(list(tokens)) if tokens else 0

    def free_prefix(self, tokens: Sequence[int], run: int) -> int:
        """How many of `tokens` (all allowed) come before the first place after the first
        token where the grammar forces `run` tokens or more; len(tokens) if none. The state
        is walked and rolled back: the matcher ends where it began."""
        consumed = 0
        try:
            for j, tok in enumerate(tokens[:-1], 1):
                if not self._m.consume_token(tok):
                    break
                consumed += 1
                if len(self._m.compute_ff_tokens()) >= run:
                    return j
            return len(tokens)
        finally:
            if consumed:
                self._m.rollback(consumed)

    def allows(self, token: int) -> bool:
        return self._m.validate_tokens([token]) == 1

    def mask(self, row: np.ndarray) -> np.ndarray:
        """row ([n_vocab] logits) with every token the grammar rejects at -inf, in place."""
        bits = np.frombuffer(self._m.compute_bitmask(), dtype=np.uint8)
        allowed = np.unpackbits(bits, bitorder="little")[: row.shape[0]].astype(bool)
        if allowed.shape[0] < row.shape[0]:  # logits wider than the vocabulary: never allowed
            allowed = np.concatenate([allowed, np.zeros(row.shape[0] - allowed.shape[0], bool)])
        if not allowed.any():
            raise GrammarError("the grammar allows no token here (it cannot be satisfied)")
        row[~allowed] = -np.inf
        return row

    def consume(self, tokens: Sequence[int]) -> None:
        if not self._m.consume_tokens(list(tokens)):
            raise GrammarError(_one_line(self._m.get_error()))


def compile_constraint(backend, c: Constraint, after: str = "") -> str:
    """The grammar text, checked against the backend's vocabulary (GrammarError if it is
    malformed)."""
    text = grammar(c, after)
    Matcher(tokenizer_for(backend), text)  # raises GrammarError with the matcher's message
    return text
