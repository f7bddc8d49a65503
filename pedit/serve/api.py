"""OpenAI's chat-completions and completions request and response shapes, in plain
Python (no web framework here): a request body in, the engine's inputs out (Call); the
engine's text and figures in, the response bodies out (Shape). What OpenAI refuses with a prediction, pedit
refuses the same way."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from ..engine.decode import DecodeOptions
from ..engine.sampling import Sampling
from ..events import Stats, TokenGenerated, TokensAccepted


class ApiError(Exception):
    """An error with OpenAI's shape: {"error": {"message", "type", "param", "code"}}."""

    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code
        self.type = "invalid_request_error" if status < 500 else "server_error"

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


@dataclass(frozen=True)
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

    @property
    def param(self) -> str:
        """The request field the prompt came from."""
        return "prompt" if self.messages is None else "messages"


def _text(content, where: str) -> str:
    """A message's content: a string, or a list of {"type": "text", "text": ...} parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
        return "".join(str(p.get("text", "")) for p in content)
    raise ApiError(400, f"{where}: content must be a string or a list of text parts", where)


def parse_chat(body: dict, n_ctx: int) -> Call:
    _object(body)
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise ApiError(400, "messages must be a non-empty list", "messages")
    messages = []
    for i, m in enumerate(raw):
        if not isinstance(m, dict) or m.get("role") not in ("system", "developer", "user", "assistant"):
            roles = "system, developer, user or assistant"
            raise ApiError(400, f"messages[{i}]: role must be {roles}", "messages")
        role = "system" if m["role"] == "developer" else m["role"]
        messages.append({"role": role, "content": _text(m.get("content", ""), f"messages[{i}]")})
    continue_final = _continuation(body, messages)
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    return Call(messages, "", continue_final, *_decoding(body, limit, n_ctx))


def parse_completion(body: dict, n_ctx: int) -> Call:
    """OpenAI's legacy completions: one prompt, plain text; `prediction` is pedit's extension."""
    _object(body)
    for key in ("echo", "suffix", "logprobs"):
        if body.get(key) not in (None, False, ""):
            raise ApiError(400, f"{key} is not supported", key, "unsupported_value")
    if (body.get("best_of") or 1) != 1:
        raise ApiError(400, "pedit returns one choice: best_of must be 1", "best_of", "unsupported_value")
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) > 1 and all(isinstance(p, str) for p in prompt):
        raise ApiError(400, "one prompt per request", "prompt", "unsupported_value")
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if not isinstance(prompt, str) or not prompt:
        raise ApiError(400, "prompt must be a non-empty string (or a list of one)", "prompt")
    limit = body.get("max_tokens")
    return Call(None, prompt, False, *_decoding(body, 16 if limit is None else limit, n_ctx))


def _object(body) -> None:
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")


def _decoding(body: dict, limit, n_ctx: int) -> tuple:
    """What both endpoints share: (prediction, options, stop, stream, include_usage)."""
    prediction = None
    if body.get("prediction") is not None:
        p = body["prediction"]
        if not isinstance(p, dict) or p.get("type") != "content":
            raise ApiError(400, 'prediction must be {"type": "content", "content": ...}', "prediction")
        prediction = _text(p.get("content", ""), "prediction")
        _refuse_with_prediction(body)
    if (body.get("n") or 1) != 1:
        raise ApiError(400, "pedit returns one choice: n must be 1", "n", "unsupported_value")
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise ApiError(400, "max_tokens must be a positive integer", "max_tokens")
    try:
        sampling = Sampling(
            temperature=float(body.get("temperature", 1.0)),
            top_p=float(body.get("top_p", 1.0)),
            seed=body.get("seed"),
        )
    except (TypeError, ValueError) as exc:
        raise ApiError(400, str(exc), "temperature") from None
    stop = body.get("stop") or ()
    stop = (stop,) if isinstance(stop, str) else tuple(stop)
    if not all(isinstance(s, str) and s for s in stop) or len(stop) > 4:
        raise ApiError(400, "stop must be a string or a list of up to 4 strings", "stop")
    include = bool((body.get("stream_options") or {}).get("include_usage"))
    options = DecodeOptions(limit or n_ctx, sampling)
    return prediction, options, stop, bool(body.get("stream")), include


def _flag(body: dict, key: str, default: bool) -> bool:
    value = body.get(key, default)
    if not isinstance(value, bool):
        raise ApiError(400, f"{key} must be true or false", key)
    return value


def _continuation(body: dict, messages: list[dict]) -> bool:
    """vLLM's continue_final_message, with its rules: the last message is the assistant's,
    and the client turns add_generation_prompt off. pedit's prompt always has an open
    assistant turn (a new one, or the one it continues), so add_generation_prompt false
    alone is refused."""
    cont = _flag(body, "continue_final_message", False)
    opened = _flag(body, "add_generation_prompt", True)
    if cont and messages[-1]["role"] != "assistant":
        raise ApiError(400, "continue_final_message: the last message must be the assistant's", "messages")
    if cont and opened:
        both = "continue_final_message and add_generation_prompt cannot both be true"
        raise ApiError(400, both, "add_generation_prompt")
    if not cont and not opened:
        alone = "add_generation_prompt false is served only with continue_final_message true"
        raise ApiError(400, alone, "add_generation_prompt", "unsupported_value")
    return cont


def _refuse_with_prediction(body: dict) -> None:
    """OpenAI's limits on Predicted Outputs (its documentation), with its error shape."""
    if (body.get("n") or 1) > 1:
        raise ApiError(400, "n > 1 is not supported with a prediction", "n", "unsupported_value")
    if body.get("logprobs") or body.get("top_logprobs"):
        raise ApiError(400, "logprobs are not supported with a prediction", "logprobs", "unsupported_value")
    for key in ("presence_penalty", "frequency_penalty"):
        if (body.get(key) or 0) > 0:
            raise ApiError(400, f"{key} > 0 is not supported with a prediction", key, "unsupported_value")
    if body.get("tools") or body.get("functions"):
        raise ApiError(400, "tools are not supported with a prediction", "tools", "unsupported_value")


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


def figures(stats: Stats) -> dict:
    """pedit's own figures, an extension field standard clients ignore: the engine's
    passes, accepted tokens per drafter, and its own time (prefill and decode, seconds; the
    rest of a client's time is HTTP, JSON and the queue)."""
    return {
        "forward_passes": stats.forward_passes, "accepted_by_drafter": stats.accepted_by_drafter,
        "prefill_seconds": stats.prefill_seconds, "decode_seconds": stats.decode_seconds,
    }  # fmt: skip


class Shape:
    """The objects of one response: the whole answer, or the stream's chunks (a content
    chunk per engine event, with its provenance; the finish chunk; the usage chunk)."""

    prefix = whole = part = ""  # the id's prefix, the answer's and the chunks' "object"

    def __init__(self, model: str):
        self.id, self.model, self.created = self.prefix + uuid.uuid4().hex[:24], model, int(time.time())

    def response(self, text: str, stats: Stats, stopped: bool) -> dict:
        choice = self._whole_choice(text, finish_reason(stats, stopped))
        return {**self._head(self.whole), "choices": [choice], "usage": usage(stats), "pedit": figures(stats)}

    def opening(self) -> list[dict]:
        return []

    def content(self, text: str, source: str) -> dict:
        """A content chunk, with where its tokens came from (an extension field)."""
        choice = self._part_choice(text, None)
        return {**self._head(self.part), "choices": [choice], "pedit": {"source": source}}

    def finish(self, reason: str) -> dict:
        return {**self._head(self.part), "choices": [self._part_choice(None, reason)]}

    def usage_chunk(self, stats: Stats) -> dict:
        return {**self._head(self.part), "choices": [], "usage": usage(stats), "pedit": figures(stats)}

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
