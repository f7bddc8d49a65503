"""A request to decoder events: what `pedit serve` runs for /v1/chat/completions and
/v1/completions.

    messages -> the model's chat template -> prompt tokens
    (continue_final_message: the last, assistant message primes the opened turn)
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
from .speculative import Drafting, speculative_generate


def chat_prompt(backend: Backend, messages: Sequence[dict], *, continue_final: bool = False) -> list[int]:
    """The prompt tokens of a conversation, the assistant's turn opened (message contents
    tokenized without control tokens, as a file is). `continue_final` (vLLM's
    continue_final_message): the last message is the assistant's unfinished answer; the
    turn is opened by the template's generation prompt and primed with its text, as
    pedit's rewrite prompt is primed with the opening fence (prompt.build_prompt)."""
    if continue_final:
        return encode_chat(backend, list(messages[:-1])) + backend.tokenize(messages[-1]["content"])
    return encode_chat(backend, list(messages))


def chat_draft(backend: Backend, prediction: str) -> list[int]:
    """A chat answer's predicted tokens: the prediction, then the end of the assistant turn."""
    return backend.tokenize(prediction) + end_of_turn(backend)


def completion_events(
    backend: Backend,
    prompt: Sequence[int],
    options: DecodeOptions,
    *,
    draft: Sequence[int] = (),
    variants: Sequence[Sequence[int]] = (),
    speculate: str = "auto",
    cost: CostModel | None = None,
) -> Iterator[Event]:
    """Events of one completion of `prompt`. `draft`: the predicted tokens of the answer
    (empty: none); `variants`: other predictions of it (the file before a tool's edit, its
    paragraphs unwrapped), each a predicted drafter beside the draft's (compose.py). The
    prefix this prompt shares with what the backend's cache holds (the previous request's
    tokens) is not evaluated again (decode.prefill)."""
    if speculate == "off":
        return generate(backend, prompt, options)
    predictions = [list(draft)] if draft else []
    for v in variants:
        if v and list(v) not in predictions:
            predictions.append(list(v))
    predicted = [PredictedOutput(p, start=len(prompt), token_bytes=backend.token_bytes) for p in predictions]
    drafters: list = [*predicted, PromptLookup(), NGramDrafter()]
    acceptance = Acceptance(priors(drafters))
    composite = Composite(drafters, acceptance.expected, primary=len(predicted))
    if speculate == "fixed":
        planner = FixedPlanner()
    else:
        cost = cost or measure(backend)
        planner = CostPlanner(cost, acceptance)
    return speculative_generate(backend, prompt, options, Drafting(composite, planner, acceptance), cost=cost)
