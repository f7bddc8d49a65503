"""A rewrite on a server that returns text, not logits (backends/openai.py). No I/O here:
the backend's `stream` does it, as `eval` does for a local one.

    EditRequest -> the local run's messages and primed fence line
                -> backend.stream(messages, prime, prediction = the file) -> text deltas
                -> (a server that did not continue the prime: drop what precedes the
                    model's own opening fence) -> FenceStream -> TextReceived events

The prompt is the local run's (prompt.messages, the same fence and prime), so against
`pedit serve` on the same model, at temperature 0, the text is the local run's. Which
tokens were drafted is the server's business: the figures are its usage (accepted and
rejected prediction tokens where it reports them); a TextReceived carries the drafter's
name only when the server says (`pedit serve`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import replace

from ..backends import RemoteError, Usage
from ..events import Event, Finished, Prefilled, Progress, Stats, TextReceived
from ..request import EditRequest
from .prompt import SUMMARY_SYSTEM, FenceStream, fence_of, fenced_body, language, messages

AFTER_CLOSE = 32  # deltas read after the closing fence, waiting for the usage that follows them
_OPENING = re.compile(r"\s*`{3,}[^`]*")  # a fence line that opens the model's block


def remote_prompt(req: EditRequest, kind: str, continues: bool) -> tuple[list[dict], str, str, str | None]:
    """(messages, fence, prime, prediction): the local run's messages and primed fence line;
    the prediction is the answer if nothing changed (after the prime when the server
    continues it, else with it). A summary: no prime, no prediction."""
    fence = fence_of(req)
    if kind == "summary":
        return messages(replace(req, system=req.system or SUMMARY_SYSTEM), fence), fence, "", None
    prime = f"{fence}{language(req.filename)}\n"
    answer = fenced_body(next(t for t in (req.guess, req.draft, req.text) if t is not None)) + fence
    return messages(req, fence), fence, prime, answer if continues else prime + answer


def remote_size(backend, req: EditRequest, kind: str) -> int:
    """The prompt's tokens, estimated (backend.count_tokens), with a few for each message's
    template markup."""
    msgs, _, prime, _ = remote_prompt(req, kind, True)
    return sum(backend.count_tokens(m["content"]) + 8 for m in msgs) + backend.count_tokens(prime)


class Preamble:
    """For a server that did not continue the primed fence: drops what the model writes
    before its own opening fence line ("Here is the file:\\n```python\\n"), and that line."""

    def __init__(self):
        self.open, self._held = False, ""

    def feed(self, text: str) -> str:
        if self.open:
            return text
        self._held += text
        while "\n" in self._held:
            line, self._held = self._held.split("\n", 1)
            if _OPENING.fullmatch(line):
                self.open, rest, self._held = True, self._held, ""
                return rest
        return ""


def remote_generate(
    backend, req: EditRequest, *, kind: str, max_tokens: int, temperature: float = 0.0,
    top_p: float = 1.0, seed: int | None = None,
) -> Iterator[Event]:  # fmt: skip
    """Events of one rewrite (until the closing fence) or summary on a remote backend."""
    msgs, fence, prime, prediction = remote_prompt(req, kind, backend.continues)
    until = FenceStream(fence, req.text) if kind == "rewrite" else None
    preamble = Preamble() if until is not None and not backend.continues else None
    start = time.perf_counter()
    first: float | None = None
    pieces, deltas, usage, finish, after = [], 0, None, None, 0
    stream = backend.stream(msgs, prime=prime, prediction=prediction, max_tokens=max_tokens,
                            temperature=temperature, top_p=top_p, seed=seed)  # fmt: skip
    try:
        for item in stream:
            if isinstance(item, Usage):
                usage = item
                continue
            finish = item.finish or finish
            if until is not None and until.closed:
                after += 1
                if after > AFTER_CLOSE:
                    break
                continue
            if first is None:
                first = time.perf_counter()
                yield Prefilled(0, first - start)
            deltas += 1
            text = preamble.feed(item.text) if preamble else item.text
            text = until.feed(text) if until is not None else text
            if text:
                pieces.append(text)
                yield TextReceived(text, {"model": "generated"}.get(item.source or "", item.source))
            yield Progress(_stats(usage, deltas, start, first, ""))
    finally:
        stream.close()
    if until is not None and not until.closed:
        tail = until.close()
        if tail:
            pieces.append(tail)
            yield TextReceived(tail)
    first = first if first is not None else time.perf_counter()
    closed = until is not None and until.closed
    if finish is None and not closed:  # a proxy's timeout, a crashed server: never an answer
        where = getattr(backend, "base_url", backend.name)
        raise RemoteError(f"{where}: the stream ended before the answer did (no finish_reason)")
    stop = "fence" if closed else {"length": "max_tokens"}.get(finish, "eos")
    yield Finished((), "".join(pieces), _stats(usage, deltas, start, first, stop))


def _stats(usage: Usage | None, deltas: int, start: float, first: float | None, stop: str) -> Stats:
    """The server's figures when it sent them (else the deltas counted as tokens); times
    measured here: the prefill is the wait for the first delta."""
    now = time.perf_counter()
    first = first if first is not None else now
    u = usage or Usage(0, deltas, None, None)
    return Stats(
        prompt_tokens=u.prompt_tokens,
        completion_tokens=u.completion_tokens or deltas,
        forward_passes=u.forward_passes or 0,
        prefill_seconds=first - start,
        decode_seconds=now - first,
        stop_reason=stop,
        accepted_prediction_tokens=u.accepted_prediction_tokens or 0,
        rejected_prediction_tokens=u.rejected_prediction_tokens or 0,
        accepted_by_drafter=dict(u.accepted_by_drafter or {}),
    )
