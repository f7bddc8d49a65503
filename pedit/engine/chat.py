"""A chat request to decoder events: what `pedit serve` runs for /v1/chat/completions.

    messages -> the model's chat template -> prompt tokens
    prediction (OpenAI's Predicted Outputs) -> the predicted-output draft, then the end of
    the assistant turn, with prompt lookup and n-grams beside it

Without a prediction, prompt lookup and n-grams draft alone. The output is plain
decoding's, whatever the drafts (speculative.py); `speculate="off"` is plain decoding.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..backends import Backend
from ..events import Event
from .costmodel import CostModel, measure
from .decode import DecodeOptions, generate
from .drafters.compose import Composite, priors
from .drafters.ngram import NGramDrafter
from .drafters.predicted import PredictedOutput
from .drafters.prompt_lookup import PromptLookup
from .planner import Acceptance, CostPlanner, FixedPlanner
from .prompt import encode_chat, end_of_turn
from .speculative import speculative_generate


def chat_prompt(backend: Backend, messages: Sequence[dict]) -> list[int]:
    """The prompt tokens of a conversation, the assistant's turn opened (message contents
    tokenized without control tokens, as a file is)."""
    return encode_chat(backend, list(messages))


def chat_events(
    backend: Backend,
    messages: Sequence[dict],
    options: DecodeOptions,
    *,
    prediction: str | None = None,
    speculate: str = "auto",
    cost: CostModel | None = None,
    reuse: Sequence[int] = (),
) -> Iterator[Event]:
    """Events of one chat completion. `reuse`: what the backend's cache holds (the previous
    request's tokens), whose prefix shared with this prompt is not evaluated again."""
    prompt = chat_prompt(backend, messages)
    if speculate == "off":
        return generate(backend, prompt, options, reuse=reuse)
    drafters: list = [PromptLookup(), NGramDrafter()]
    if prediction:
        draft = backend.tokenize(prediction) + end_of_turn(backend)
        drafters.insert(0, PredictedOutput(draft, start=len(prompt), token_bytes=backend.token_bytes))
    acceptance = Acceptance(priors(drafters))
    composite = Composite(drafters, acceptance.expected, primary=bool(prediction))
    if speculate == "fixed":
        planner = FixedPlanner()
    else:
        cost = cost or measure(backend)
        planner = CostPlanner(cost, acceptance)
    return speculative_generate(
        backend, prompt, options, composite, planner, acceptance, cost=cost, reuse=reuse
    )
