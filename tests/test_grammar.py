"""Constrained output (engine/grammar.py, engine/constrained.py).

Lossless: on the reference backend, coalescence and coalescence with drafts emit exactly
the tokens of plain constrained decoding, greedy and seeded sampling, every drafter and
planner, JSON (free and with a schema, pretty and compact) and a regex. Counts: every
forced token that coalesces saves exactly one forward pass. The padded vocabulary is
never drawn; malformed or unsatisfiable grammars are one-line errors, not hangs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pedit.backends import open_backend
from pedit.backends.reference import ReferenceBackend
from pedit.engine.constrained import GrammarRule
from pedit.engine.costmodel import CostModel
from pedit.engine.decode import DecodeOptions
from pedit.engine.edit import EditOptions, edit_events
from pedit.engine.grammar import (
    Constraint,
    GrammarError,
    Matcher,
    check,
    compile_constraint,
    grammar,
    tokenizer_for,
)
from pedit.engine.sampling import Sampling
from pedit.engine.speculative import speculative_generate
from pedit.request import EditRequest

PACKAGE = '{\n  "name": "pedit",\n  "version": "0.1.0",\n  "scripts": {"build": "make"}\n}\n'
SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "version": {"type": "string"},
            "scripts": {"type": "object", "additionalProperties": {"type": "string"}},
            "private": {"type": "boolean"},
        },
        "required": ["name", "version", "scripts", "private"],
        "additionalProperties": False,
    }
)
CONSTRAINTS = [
    Constraint("json", ""),
    Constraint("json", SCHEMA),
    Constraint("json", SCHEMA, compact=True),
    Constraint("regex", r"\{[^`]*\}"),
    Constraint("lark", 'start: "{" ITEM ("," ITEM)* "}"\nITEM: /[ \\n]*"[a-z]+": "[a-z0-9.]*"/\n'),
]
TEXTS = [PACKAGE, '{"a": 1}\n', "[1, 2, 3]"]
FLAT = CostModel.table({1: 1.0, 64: 1.5}, 1e-3)  # drafting always looks worth it
GREEDY = Sampling()
SAMPLINGS = st.one_of(
    st.just(Sampling()),
    st.builds(
        Sampling,
        temperature=st.sampled_from([0.7, 1.0]),
        top_k=st.sampled_from([0, 8]),
        top_p=st.sampled_from([1.0, 0.9]),
        seed=st.integers(0, 2**16),
    ),
)


@pytest.fixture(scope="module")
def ref():
    return open_backend("reference")


def run(backend, text, c, sampling=GREEDY, speculate="off", coalesce=True, **kw):
    req = EditRequest(text, "add a test script", "package.json")
    events = edit_events(
        backend,
        req,
        EditOptions(
            sampling=sampling,
            speculate=speculate,
            coalesce=coalesce,
            constraint=c,
            cost=FLAT,
            max_tokens=kw.pop("max_tokens", 200),
            **kw,
        ),
    )
    return list(events)[-1]


SLOW_OK = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


@settings(max_examples=100, deadline=None, suppress_health_check=SLOW_OK)
@given(
    text=st.sampled_from(TEXTS),
    c=st.sampled_from(CONSTRAINTS),
    sampling=SAMPLINGS,
    speculate=st.sampled_from(["fixed", "auto"]),
    drafters=st.sampled_from([("predicted",), ("lookup", "ngram"), ("predicted", "lookup", "ngram")]),
    draft_max=st.sampled_from([1, 4, 64]),
)
def test_coalescence_and_drafts_emit_what_plain_constrained_decoding_emits(
    ref, text, c, sampling, speculate, drafters, draft_max
):
    plain = run(ref, text, c, sampling, coalesce=False)
    coalesced = run(ref, text, c, sampling)
    drafted = run(ref, text, c, sampling, speculate, drafters=drafters, draft_max=draft_max)
    # drafts with each forced token read in a pass of its own: the same loop, no coalescence
    apart = run(ref, text, c, sampling, speculate, coalesce=False, drafters=drafters, draft_max=draft_max)
    for other in (coalesced, drafted, apart):
        assert other.tokens == plain.tokens
        assert other.text == plain.text
        assert other.stats.stop_reason == plain.stats.stop_reason
    # every coalesced token is one pass plain decoding made and coalescence did not
    assert plain.stats.forward_passes == coalesced.stats.forward_passes + coalesced.stats.coalesced_tokens
    assert plain.stats.coalesced_tokens == 0
    # the tokens the grammar forced are the output's, whatever pass read them
    assert {x.stats.forced_tokens for x in (coalesced, drafted, apart)} == {plain.stats.forced_tokens}
    assert coalesced.stats.forced_tokens >= coalesced.stats.coalesced_tokens


def test_a_compact_schema_forces_its_keys_and_saves_their_passes(ref):
    c = Constraint("json", SCHEMA, compact=True)
    plain, coalesced = run(ref, PACKAGE, c, coalesce=False), run(ref, PACKAGE, c)
    answer = json.loads(coalesced.text)
    assert list(answer) == ["name", "version", "scripts", "private"]
    assert isinstance(answer["private"], bool)
    forced_keys = len(ref.tokenize('{"name": "", "version": "", "scripts": {}, "private": }'))
    assert coalesced.stats.coalesced_tokens >= forced_keys - 4  # the keys and separators
    assert plain.stats.forward_passes - coalesced.stats.forward_passes == coalesced.stats.coalesced_tokens


def test_forced_tokens_are_reported_with_their_own_provenance(ref):
    from pedit.events import TokensAccepted

    req = EditRequest(PACKAGE, "x", "package.json")
    events = list(
        edit_events(
            ref, req, EditOptions(speculate="off", constraint=Constraint("json", SCHEMA, compact=True))
        )
    )
    forced = [e for e in events if isinstance(e, TokensAccepted) and e.source == "grammar"]
    assert forced and "".join(e.text for e in forced).startswith('{"name": "')
    assert events[-1].stats.forced_tokens == sum(len(e.tokens) for e in forced)


class Padded(ReferenceBackend):
    """The reference model with 64 more logit columns than its tokenizer has tokens (a
    padded LM head, vLLM #16210), each far likelier than any real token."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.real = self.n_vocab
        self.n_vocab += 64

    def token_bytes(self, token):
        return b"" if token >= self.real else super().token_bytes(token)

    def eval(self, tokens, *, n_logits=1):
        rows = super().eval(tokens, n_logits=n_logits)
        return np.concatenate([rows, np.full((rows.shape[0], 64), 100.0, rows.dtype)], axis=1)


@pytest.mark.parametrize("sampling", [Sampling(), Sampling(temperature=1.0, seed=1)])
def test_the_padding_past_the_tokenizer_is_never_drawn(sampling):
    b = Padded()
    fin = run(b, '{"a": 1}\n', Constraint("json", ""), sampling, speculate="fixed", max_tokens=60)
    assert fin.tokens and max(fin.tokens) < b.real


@pytest.mark.parametrize(
    "c, words",
    [
        (Constraint("json", "{not json"), "not JSON"),
        (Constraint("json", '{"type": "nonsense"}'), "nonsense"),
        (Constraint("regex", "(("), "regex"),
        (Constraint("lark", "start: undefined_rule\n"), "undefined_rule"),
    ],
)
def test_a_malformed_constraint_is_a_one_line_error(ref, c, words):
    with pytest.raises(GrammarError) as e:
        compile_constraint(ref, c)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_an_unsatisfiable_schema_is_an_error_not_a_hang(ref):
    c = Constraint("json", json.dumps({"type": "string", "minLength": 5, "maxLength": 2}))
    with pytest.raises(GrammarError):
        run(ref, PACKAGE, c, speculate="off")


@pytest.mark.parametrize(
    ("c", "says"),
    [
        (Constraint("regex", "[^\\s\\S]"), "no text matches it"),
        (Constraint("regex", "a[^\\s\\S]|[a&&b]"), "no text matches it"),
        (Constraint("regex", "(ab)*[^\\s\\S]|"), "only the empty text matches it"),
        (Constraint("lark", 'start: "" | NONE\nNONE: /[^\\s\\S]/\n'), "only the empty text matches it"),
        (Constraint("json", "false"), "schema is false"),
    ],
)
def test_a_constraint_no_text_matches_is_found_without_a_model(c, says):
    """check() needs no vocabulary (the 256 bytes stand in for one): what only the empty
    text, or no text, matches is an error before a model loads (issue 28 #10)."""
    with pytest.raises(GrammarError) as e:
        check(c)
    assert says in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    "c",
    [Constraint("regex", "[a-z]+"), Constraint("regex", "a?"), Constraint("regex", "é|東京"),
     Constraint("json", ""), Constraint("lark", 'start: "yes" | "no"\n')],
)  # fmt: skip
def test_a_constraint_some_text_matches_passes_the_check(c):
    check(c)


def test_a_regex_answer_matches_it(ref):
    m = Matcher(tokenizer_for(ref), grammar(Constraint("regex", "[0-9]{3}-[a-z]{2}")))
    opts = DecodeOptions(50, Sampling(temperature=1.0, seed=4))
    prompt = ref.tokenize("write a code: ")
    fin = list(speculative_generate(ref, prompt, opts, rule=GrammarRule(m)))[-1]
    assert fin.stats.stop_reason == "eos"
    import re

    assert re.fullmatch("[0-9]{3}-[a-z]{2}", fin.text)


@pytest.mark.parametrize("kind", ["llama.cpp", "transformers"])
def test_real_backends_write_valid_json_under_the_schema(kind, tiny_hf, tiny_gguf):
    from conftest import model_for

    b = open_backend(kind, model_for(kind, tiny_hf, tiny_gguf), n_ctx=512)
    try:
        props = {"ok": {"type": "boolean"}, "n": {"enum": [1, 2]}}
        closed = {"required": ["ok", "n"], "additionalProperties": False}
        small = json.dumps({"type": "object", "properties": props, **closed})
        for speculate in ("off", "fixed"):
            c = Constraint("json", small, compact=True)
            fin = run(b, '{"ok": true, "n": 1}\n', c, speculate=speculate)
            answer = json.loads(fin.text)
            assert set(answer) == {"ok", "n"} and answer["n"] in (1, 2)
            assert fin.stats.coalesced_tokens > 0
    finally:
        b.close()
