"""OpenAI's chat-completions and completions shapes, in plain Python (no web framework
here): a request as the engine needs it (Call, parsed in schema.py); the engine's text and
figures in, the response bodies out (Shape); errors in OpenAI's shape (ApiError)."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from ..engine.decode import DecodeOptions
from ..events import Stats, TokenGenerated, TokensAccepted


class ApiError(Exception):
    """An error with OpenAI's shape: {"error": {"message", "type", "param", "code"}}."""

    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code
        self.type = "invalid_request_error" if status < 500 else "server_error"

    @property
    def closes(self) -> bool:
        """Whether the answer closes the connection: the body was not read whole (over the
        cap, too slow, the client gone), so a client still sending it is cut off, not read on."""
        return self.status in (408, 413, 499)

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


@dataclass(frozen=True, kw_only=True)
class Call:
    """One request, as the engine needs it: a conversation (/v1/chat/completions) or a
    plain-text prompt (/v1/completions)."""

    messages: list[dict] | None  # None: `text` is the prompt, with no chat template
    text: str
    continue_final: bool  # vLLM's continue_final_message: the answer continues the last message
    prediction: str | None
    options: DecodeOptions
    stop: tuple[str, ...]
    stream: bool
    include_usage: bool
    draft_from: str = ""  # where `prediction` came from: "prediction", "fenced file" or "" (none)

    @property
    def param(self) -> str:
        """The request field the prompt came from."""
        return "prompt" if self.messages is None else "messages"


def finish_reason(stats: Stats, stopped: bool) -> str:
    return "stop" if stopped or stats.stop_reason == "eos" else "length"


def usage(stats: Stats) -> dict:
    return {
        "prompt_tokens": stats.prompt_tokens,
        "completion_tokens": stats.completion_tokens,
        "total_tokens": stats.prompt_tokens + stats.completion_tokens,
        # OpenAI's name for the prompt's start found in the cache (the model's KV cache here:
        # the tokens this request shares with the one before it, the system prompt at least)
        "prompt_tokens_details": {"cached_tokens": stats.cached_tokens},
        "completion_tokens_details": {
            "accepted_prediction_tokens": stats.accepted_prediction_tokens,
            "rejected_prediction_tokens": stats.rejected_prediction_tokens,
        },
    }


def figures(stats: Stats, draft: str = "") -> dict:
    """pedit's own figures, an extension field standard clients ignore: the engine's
    passes, accepted tokens per drafter, its own time (prefill and decode, seconds; the
    rest of a client's time is HTTP, JSON and the queue), and where the answer's draft came
    from ("prediction", "fenced file": the one file a chat's latest fenced message holds,
    or "none")."""
    return {
        "forward_passes": stats.forward_passes, "accepted_by_drafter": stats.accepted_by_drafter,
        "prefill_seconds": stats.prefill_seconds, "decode_seconds": stats.decode_seconds,
        "draft": draft or "none",
    }  # fmt: skip


class Shape:
    """The objects of one response: the whole answer, or the stream's chunks (a content
    chunk per engine event, with its provenance; the finish chunk; the usage chunk)."""

    prefix = whole = part = ""  # the id's prefix, the answer's and the chunks' "object"

    def __init__(self, model: str, draft: str = ""):
        self.id, self.model, self.created = self.prefix + uuid.uuid4().hex[:24], model, int(time.time())
        self.draft = draft  # Call.draft_from
        self.tools: dict = {}  # the tool that drafted and its check's verdict, once the text is whole

    def response(self, text: str, stats: Stats, stopped: bool) -> dict:
        choice = self._whole_choice(text, finish_reason(stats, stopped))
        head = self._head(self.whole)
        return {
            **head,
            "choices": [choice],
            "usage": usage(stats),
            "pedit": figures(stats, self.draft) | self.tools,
        }

    def opening(self) -> list[dict]:
        return []

    def content(self, text: str, source: str) -> dict:
        """A content chunk, with where its tokens came from (an extension field)."""
        choice = self._part_choice(text, None)
        return {**self._head(self.part), "choices": [choice], "pedit": {"source": source}}

    def finish(self, reason: str) -> dict:
        return {**self._head(self.part), "choices": [self._part_choice(None, reason)]}

    def usage_chunk(self, stats: Stats) -> dict:
        head = self._head(self.part)
        return {
            **head,
            "choices": [],
            "usage": usage(stats),
            "pedit": figures(stats, self.draft) | self.tools,
        }

    def _head(self, obj: str) -> dict:
        return {"id": self.id, "object": obj, "created": self.created, "model": self.model}

    def _whole_choice(self, text: str, finish: str) -> dict:
        raise NotImplementedError

    def _part_choice(self, text: str | None, finish: str | None) -> dict:
        raise NotImplementedError


class ChatShape(Shape):
    prefix, whole, part = "chatcmpl-", "chat.completion", "chat.completion.chunk"

    def opening(self) -> list[dict]:
        """The role chunk a chat stream starts with."""
        delta = {"role": "assistant", "content": ""}
        return [{**self._head(self.part), "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}]

    def _whole_choice(self, text: str, finish: str) -> dict:
        return {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}

    def _part_choice(self, text: str | None, finish: str | None) -> dict:
        return {"index": 0, "delta": {} if text is None else {"content": text}, "finish_reason": finish}


class TextShape(Shape):
    prefix, whole, part = "cmpl-", "text_completion", "text_completion"

    def _whole_choice(self, text: str, finish: str) -> dict:
        return {"index": 0, "text": text, "finish_reason": finish, "logprobs": None}

    def _part_choice(self, text: str | None, finish: str | None) -> dict:
        return self._whole_choice(text or "", finish)


def source(event: TokenGenerated | TokensAccepted) -> str:
    """Where an event's tokens came from: the drafter that proposed them ("predicted",
    "lookup", "ngram"), "grammar" for forced tokens, "model" for the model's own."""
    return event.source if isinstance(event, TokensAccepted) else "model"


class StopText:
    """Cuts the streamed text at the first stop string: passes on what can no longer be
    the start of one, holds back the rest."""

    def __init__(self, stops: tuple[str, ...]):
        self.stops, self.held, self.stopped = stops, "", False
        self._keep = max((len(s) for s in stops), default=1) - 1

    def feed(self, text: str) -> str:
        if self.stopped:
            return ""
        self.held += text
        hits = [i for i in (self.held.find(s) for s in self.stops) if i >= 0]
        if hits:
            self.stopped = True
            out, self.held = self.held[: min(hits)], ""
            return out
        cut = max(0, len(self.held) - self._keep) if self.stops else len(self.held)
        out, self.held = self.held[:cut], self.held[cut:]
        return out

    def close(self) -> str:
        out, self.held = ("" if self.stopped else self.held), ""
        return out
