"""An edit request to decoder events: the one place shells go through to run a rewrite.

    EditRequest -> build_prompt -> generate(..., until=closing fence) -> events

The speculative engine slots in here: the request's text is also the draft.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .backends import Backend
from .decode import DecodeOptions, generate
from .events import Event
from .prompt import FenceStream, build_prompt
from .request import EditRequest
from .sampling import Sampling


def default_max_tokens(backend: Backend, text: str) -> int:
    """Room for a rewrite twice as long as the file, plus a margin for short files."""
    return 2 * len(backend.tokenize(text)) + 256


def edit_events(
    backend: Backend,
    req: EditRequest,
    *,
    max_tokens: int | None = None,
    sampling: Sampling | None = None,
    rng: np.random.Generator | None = None,
) -> Iterator[Event]:
    prompt = build_prompt(backend, req)
    options = DecodeOptions(max_tokens or default_max_tokens(backend, req.text), sampling or Sampling())
    return generate(backend, prompt.tokens, options, until=FenceStream(prompt.fence), rng=rng)
