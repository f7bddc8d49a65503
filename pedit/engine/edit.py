"""An edit request to decoder events: the one place shells go through to run a rewrite.

    EditRequest -> build_prompt -> plain or speculative decoding (until the closing fence)

With speculation, the request's own text is the predicted-output draft, and prompt lookup
and the n-gram drafter fill in where the output departs from it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TypeGuard

from ..backends import AnyBackend, Backend, LocalBackend
from ..events import Event
from ..request import EditRequest
from .constrained import GrammarRule
from .costmodel import measure
from .decode import DecodeOptions, PromptTooLong, generate
from .drafters.compose import Composite, priors
from .drafters.ngram import NGramDrafter
from .drafters.predicted import PredictedOutput
from .drafters.prompt_lookup import PromptLookup
from .grammar import GrammarError, Matcher, grammar, tokenizer_for
from .keepbias import KeepBias, suggested
from .names import DRAFTERS
from .options import EditOptions
from .planner import Acceptance, CostPlanner, FixedPlanner
from .prompt import FenceStream, Prompt, build_prompt, build_summary_prompt
from .remote import remote_generate, remote_size
from .speculative import FREE, Drafting, speculative_generate


def local(backend: AnyBackend) -> TypeGuard[LocalBackend]:
    """Which loop this backend runs, the one place that asks: a LocalBackend's (tokens and
    logits here: drafts verified, a keep-bias, a grammar, a cached prompt start) or a
    RemoteBackend's (text from a server: engine/remote.py; no keep-bias, no grammar)."""
    return backend.capabilities.logits


def prompt_size(backend: AnyBackend, req: EditRequest, kind: str) -> int:
    """The prompt's tokens: counted on a local backend, estimated for a server's."""
    if local(backend):
        build = build_summary_prompt if kind == "summary" else build_prompt
        return len(build(backend, req).tokens)
    return remote_size(backend, req, kind)


def default_max_tokens(backend: Backend, text: str) -> int:
    """Room for a rewrite twice as long as the file, plus a margin for what a short file
    may grow into (an instruction can ask for new text)."""
    return 2 * len(backend.tokenize(text)) + 1024


def make_drafters(names: Sequence[str], prompt: Prompt, token_bytes=None) -> list:
    """Drafters by name, predicted output first (it is the primary when present);
    token_bytes(token) lets the predicted drafter apply learned substitutions at word
    boundaries only."""
    unknown = set(names) - set(DRAFTERS)
    if unknown or not names:
        raise ValueError(f"drafters must be a non-empty subset of {', '.join(DRAFTERS)}")
    make = {
        "predicted": lambda: PredictedOutput(prompt.guess, start=len(prompt.tokens), token_bytes=token_bytes),
        "lookup": PromptLookup,
        "ngram": NGramDrafter,
    }
    return [make[name]() for name in DRAFTERS if name in names]


def _keep_bias(backend, req: EditRequest, prompt: Prompt, o: EditOptions):
    """The run's KeepBias: β on the draft's next token, β_suggest where a tool changed the
    draft (keepbias.suggested, with o.suggest_deletions after a deletion too), β_sure where
    the draft differs from req.doubtful (the suggestions the model's reading is sure of);
    None when nothing is biased."""
    if not (o.keep_bias or o.suggest_bias):
        return None
    boost = None
    if o.suggest_bias is not None and o.suggest_bias != o.keep_bias and req.draft not in (None, req.text):
        file = build_prompt(backend, replace(req, draft=None)).draft
        marks = suggested(prompt.draft, file, deletions=o.suggest_deletions)
        boost = [(o.suggest_bias - o.keep_bias) * s for s in marks]
        if o.sure_bias is not None and req.doubtful not in (None, req.draft):
            doubt = build_prompt(backend, replace(req, draft=req.doubtful)).draft
            sure = suggested(prompt.draft, doubt, deletions=o.suggest_deletions)
            boost = [b + (o.sure_bias - o.suggest_bias) * s for b, s in zip(boost, sure, strict=True)]
    return KeepBias(o.keep_bias, prompt.draft, prompt.tokens, boost)


DEFAULTS = EditOptions()


def edit_events(
    backend: AnyBackend, req: EditRequest, options: EditOptions = DEFAULTS, *, rng=None
) -> Iterator[Event]:
    """Events of one answer about `req`: a local backend's loop (speculative.py, or plain
    decoding), or a server's (remote.py). The prefix the prompt shares with what the
    backend's cache holds (a session's previous turn, a file's previous paragraph:
    backend.held) is kept (decode.prefill). rng: the draws' Generator (default: seeded
    with options.sampling.seed)."""
    if not local(backend):
        return _remote(backend, req, options)
    o = options
    if o.kind == "summary":
        prompt, until = build_summary_prompt(backend, req), None
        drafters = [d for d in o.drafters if d != "predicted"] or ["lookup", "ngram"]
        keep = None
    else:
        prompt, drafters = build_prompt(backend, req), o.drafters
        until = FenceStream(prompt.fence, req.text)
        keep = _keep_bias(backend, req, prompt, o)
    room = max(1, backend.n_ctx - len(prompt.tokens))
    decode = DecodeOptions(o.max_tokens or min(default_max_tokens(backend, req.text), room), o.sampling)
    rule = FREE
    if o.constraint is not None:
        text = grammar(o.constraint, after="" if until is None else "\n" + prompt.fence)
        rule = GrammarRule(Matcher(tokenizer_for(backend), text), o.forced_run)
    common = {"until": until, "rng": rng, "keep": keep}
    if o.speculate == "off" and rule is FREE:
        return generate(backend, prompt.tokens, decode, **common)
    drafting, cost = None, o.cost
    if o.speculate != "off":
        drafting, cost = _drafting(backend, prompt, drafters, o)
    return speculative_generate(
        backend, prompt.tokens, decode, drafting, rule=rule, coalesce=o.coalesce, cost=cost, **common
    )


def _drafting(backend: Backend, prompt: Prompt, drafters: Sequence[str], o: EditOptions):
    """(Drafting, cost model): the drafters by name, and the planner: every draft up to
    draft_max ("fixed"), or k chosen from the cost model, measured now if not given."""
    chosen = make_drafters(drafters, prompt, backend.token_bytes)
    acceptance = Acceptance(priors(chosen))
    composite = Composite(chosen, acceptance.expected, primary=chosen[0].name == "predicted")
    cost = o.cost
    if o.speculate == "fixed":
        planner = FixedPlanner()
    else:
        cost = cost if cost is not None else measure(backend)
        planner = CostPlanner(cost, acceptance)
    return Drafting(composite, planner, acceptance, o.draft_max), cost


def _remote(backend, req: EditRequest, o: EditOptions) -> Iterator[Event]:
    """A server that returns text (engine/remote.py): it drafts from the file, if it can;
    no grammar and no keep-bias, which need the logits. A prompt the server's context
    cannot take (estimated) is refused as a local one is, before anything is sent."""
    if o.constraint is not None:
        raise GrammarError(
            "needs a local backend (llama.cpp or transformers): a server gives no logits to mask"
        )
    size = remote_size(backend, req, o.kind)
    if size >= backend.n_ctx:
        raise PromptTooLong(0, size, backend.n_ctx)
    limit = o.max_tokens or max(1, min(2 * backend.count_tokens(req.text) + 1024, backend.n_ctx // 2))
    s = o.sampling
    return remote_generate(backend, req, kind=o.kind, max_tokens=limit, temperature=s.temperature,
                           top_p=s.top_p, seed=s.seed)  # fmt: skip
