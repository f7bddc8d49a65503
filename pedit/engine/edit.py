"""An edit request to decoder events: the one place shells go through to run a rewrite.

    EditRequest -> build_prompt -> plain or speculative decoding (until the closing fence)

With speculation, the request's own text is the predicted-output draft, and prompt lookup
and the n-gram drafter fill in where the output departs from it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

import numpy as np

from ..backends import Backend
from ..events import Event
from ..request import EditRequest
from .constrained import GrammarRule
from .costmodel import CostModel, measure
from .decode import DecodeOptions, generate
from .drafters.compose import Composite, priors
from .drafters.ngram import NGramDrafter
from .drafters.predicted import PredictedOutput
from .drafters.prompt_lookup import PromptLookup
from .grammar import Constraint, GrammarError, Matcher, grammar, tokenizer_for
from .keepbias import KeepBias, suggested
from .planner import DRAFT_MAX, Acceptance, CostPlanner, FixedPlanner
from .prompt import FenceStream, Prompt, build_prompt, build_summary_prompt
from .remote import remote_generate
from .sampling import Sampling
from .speculative import FREE, Drafting, speculative_generate

DRAFTERS = ("predicted", "lookup", "ngram")
SPECULATE = ("auto", "fixed", "off")


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
        "predicted": lambda: PredictedOutput(prompt.draft, start=len(prompt.tokens), token_bytes=token_bytes),
        "lookup": PromptLookup,
        "ngram": NGramDrafter,
    }
    return [make[name]() for name in DRAFTERS if name in names]


def _keep_bias(backend, req: EditRequest, prompt: Prompt, keep_bias: float, suggest_bias: float | None):
    """The run's KeepBias: β on the draft's next token, β_suggest where a tool changed the
    draft (keepbias.suggested); None when neither biases anything."""
    if not (keep_bias or suggest_bias):
        return None
    boost = None
    if suggest_bias is not None and suggest_bias != keep_bias and req.draft not in (None, req.text):
        file = build_prompt(backend, replace(req, draft=None)).draft
        boost = [(suggest_bias - keep_bias) * s for s in suggested(prompt.draft, file)]
    return KeepBias(keep_bias, prompt.draft, prompt.tokens, boost)


def edit_events(
    backend: Backend,
    req: EditRequest,
    *,
    max_tokens: int | None = None,
    sampling: Sampling | None = None,
    speculate: str = "auto",
    drafters: Sequence[str] = DRAFTERS,
    draft_max: int = DRAFT_MAX,
    cost: CostModel | None = None,
    rng: np.random.Generator | None = None,
    kind: str = "rewrite",
    keep_bias: float = 0.0,
    suggest_bias: float | None = None,
    constraint: Constraint | None = None,
    coalesce: bool = True,
) -> Iterator[Event]:
    """Events of one rewrite (kind "rewrite": the file, primed, until the closing fence) or
    of new text about the file (kind "summary": no predicted draft). speculate: "off"
    (plain decoding), "fixed" (verify every draft up to draft_max), "auto" (the planner
    picks k from `cost`, measured now if not given). The prefix the prompt shares with
    what the backend's cache holds (a session's previous turn, a file's previous
    paragraph: backend.held) is kept (decode.prefill).
    keep_bias: β added to the logit of the file's next token (keepbias.py; a rewrite only),
    the same for every speculate mode; suggest_bias: the β on the draft's tokens that a
    tool changed (req.draft against req.text; None: keep_bias there too). constraint:
    what the answer must match (a rewrite:
    the file's text, before its closing fence); coalesce: forced tokens cost no pass of
    their own (constrained.py), with or without drafts."""
    if speculate not in SPECULATE:
        raise ValueError(f"speculate must be one of {', '.join(SPECULATE)}")
    if not backend.capabilities.logits:
        return _remote(backend, req, kind, max_tokens, sampling or Sampling(), constraint)
    if kind == "summary":
        prompt, until = build_summary_prompt(backend, req), None
        drafters = [d for d in drafters if d != "predicted"] or ["lookup", "ngram"]
    else:
        prompt = build_prompt(backend, req)
        until = FenceStream(prompt.fence, req.text)
    room = max(1, backend.n_ctx - len(prompt.tokens))
    limit = max_tokens or min(default_max_tokens(backend, req.text), room)
    options = DecodeOptions(limit, sampling or Sampling())
    keep = _keep_bias(backend, req, prompt, keep_bias, suggest_bias) if kind != "summary" else None
    rule = FREE
    if constraint is not None:
        text = grammar(constraint, after="" if until is None else "\n" + prompt.fence)
        rule = GrammarRule(Matcher(tokenizer_for(backend), text))
    if speculate == "off":
        if rule is FREE:
            return generate(backend, prompt.tokens, options, until=until, rng=rng, keep=keep)
        return speculative_generate(
            backend, prompt.tokens, options, rule=rule, coalesce=coalesce, until=until, rng=rng, keep=keep
        )
    chosen = make_drafters(drafters, prompt, backend.token_bytes)
    acceptance = Acceptance(priors(chosen))
    composite = Composite(chosen, acceptance.expected, primary=chosen[0].name == "predicted")
    if speculate == "fixed":
        planner = FixedPlanner()
    else:
        if cost is None:
            cost = measure(backend)
        planner = CostPlanner(cost, acceptance)
    drafting = Drafting(composite, planner, acceptance, draft_max)
    return speculative_generate(
        backend, prompt.tokens, options, drafting, rule=rule, coalesce=coalesce, cost=cost, until=until,
        rng=rng, keep=keep,
    )  # fmt: skip


def _remote(
    backend, req: EditRequest, kind: str, max_tokens, sampling: Sampling, constraint
) -> Iterator[Event]:
    """A server that returns text (engine/remote.py): it drafts from the file, if it can;
    no grammar and no keep-bias, which need the logits."""
    if constraint is not None:
        raise GrammarError(
            "needs a local backend (llama.cpp or transformers): a server gives no logits to mask"
        )
    limit = max_tokens or max(1, min(2 * backend.count_tokens(req.text) + 1024, backend.n_ctx // 2))
    s = sampling
    return remote_generate(backend, req, kind=kind, max_tokens=limit, temperature=s.temperature,
                           top_p=s.top_p, seed=s.seed)  # fmt: skip
