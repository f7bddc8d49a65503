"""A remote backend: any OpenAI-compatible server (`pedit serve`, vLLM, llama.cpp's server,
OpenAI itself), through the `openai` client.

It returns text, not logits: a RemoteBackend (base.py), declaring `Capabilities(logits=False)`,
and the engine runs engine/remote.py's loop for it, not the local one. The file goes to the server as OpenAI's
`prediction` (the server drafts from it, if it can), and the answer comes back as a stream
of text deltas and, last, the server's usage.

Priming: pedit opens the answer with the fence line ("```python\\n") so the model starts on
the file's first token. A server that continues a final assistant message gets that line as
one (`continue_final_message`, vLLM's extension, which `pedit serve` honours too; llama.cpp's
server continues a final assistant message by itself). Which servers do: the `owned_by` of
the model in /v1/models says ("pedit", "vllm", "llamacpp"); any other gets a plain request,
and engine/remote.py strips what the model writes before its fence.

The tokenizer is on the server: `count_tokens` is an estimate (UTF-8 bytes / 3, rounded up;
byte-pair vocabularies average 3.5 to 4.5 bytes a token on English and code), used only to
size chunks and limits, where too many is the safe side.

Errors are one line each (RemoteError), naming the server: connection refused, timeouts, 401,
404 (no such model), 429 and 5xx after the client's bounded retries with backoff (`retries`,
honouring Retry-After), a 400 with the server's own message, and what is not OpenAI's shape
(a /v1/models that is not a list of models, a stream event that is not JSON or not a chunk,
a 200 that is not an event stream): the server's failure, never pedit's.

Limits: `timeout` bounds each wait for the server (each read); an answer has `deadline`
seconds in all, from its request (a timer shuts its connection down then, which wakes a read
that waits: httpx's `network_stream`), and may not go past the `max_tokens` it asked for,
counted from below (each delta at least one token, every TOKEN_BYTES bytes at least one): a
server that trickles or never stops is abandoned, not waited for.
"""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from urllib.parse import urlsplit

from .base import Capabilities, Delta, RemoteError, Usage

CONTINUING = ("pedit", "vllm", "llamacpp")  # owned_by of servers that continue a final assistant turn
DEFAULT_N_CTX = 32768  # when the server does not say (vLLM and pedit serve say: max_model_len)
DEADLINE = 1800.0  # seconds for a whole answer: 16,384 tokens (half the default context) at 10 a second
TOKEN_BYTES = 16  # no real answer averages more bytes a token (BPE: 3.5 to 4.5)


def key_problem(key: str) -> str | None:
    """What makes `key` unusable in an HTTP header (`Authorization: Bearer KEY`: visible
    ASCII, no spaces; RFC 6750's token), or None."""
    if not key.isascii() or not key.isprintable() or " " in key:
        return "an API key must be visible ASCII characters without spaces (an HTTP header carries no other)"
    return None


class OpenAIBackend:
    name = "openai"

    def __init__(
        self,
        model: str | None,
        base_url: str,
        api_key: str | None = None,
        *,
        n_ctx: int | None = None,
        timeout: float = 300.0,
        deadline: float = DEADLINE,
        retries: int = 3,
    ):
        import openai

        self._openai = openai
        if not urlsplit(base_url).scheme.startswith("http"):
            raise RemoteError(f"--base-url {base_url!r} is not an http(s) URL")
        self.base_url, self.deadline = base_url.rstrip("/"), deadline
        self.client = openai.OpenAI(
            base_url=self.base_url, api_key=api_key or "none", max_retries=retries,
            timeout=openai.Timeout(timeout, connect=min(timeout, 10.0)),
        )  # fmt: skip
        self._listed = {m["id"]: m for m in self._models() if isinstance(m.get("id"), str)}
        self._n_ctx = n_ctx
        self.capabilities = Capabilities(rollback=False, device=f"remote {urlsplit(self.base_url).netloc}",
                                         logits=False)  # fmt: skip
        self.model, self.continues, self.n_ctx = None, False, n_ctx or DEFAULT_N_CTX
        if model or self.served:
            self.use(model or self.served[0])

    @property
    def served(self) -> list[str]:
        """The models the server lists in /v1/models."""
        return list(self._listed)

    def use(self, model: str | None) -> None:
        """Ask the server for this model; what it says of it (/v1/models) decides whether
        it continues a primed answer and the context window."""
        if not model:
            raise RemoteError(f"{self.base_url} lists no model: name one with -m")
        entry = self._listed.get(model, {})
        self.model = model
        self.continues = entry.get("owned_by") in CONTINUING
        told = entry.get("max_model_len")
        self.n_ctx = self._n_ctx or (told if isinstance(told, int) and told > 0 else DEFAULT_N_CTX)

    def count_tokens(self, text: str) -> int:
        return math.ceil(len(text.encode("utf-8")) / 3)

    def _models(self) -> list[dict]:
        """The server's /v1/models entries (a server without the route: none); read here, not
        by the client's models, so that one of another shape is the server's error."""
        try:
            text = self.client.models.with_raw_response.list().text
        except self._openai.APIStatusError as exc:
            if exc.status_code in (404, 405):
                return []
            raise self._error(exc) from None
        except Exception as exc:
            raise self._error(exc) from None
        try:
            entries = json.loads(text)["data"]
            if not isinstance(entries, list) or not all(isinstance(m, dict) for m in entries):
                raise TypeError
        except (ValueError, TypeError, KeyError, IndexError):
            raise RemoteError(f"{self.base_url}/models is not a list of models: {_excerpt(text)}") from None
        return entries

    def stream(
        self,
        messages: Sequence[dict],
        *,
        prime: str = "",
        prediction: str | None = None,
        max_tokens: int,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int | None = None,
    ) -> Iterator[Delta | Usage]:
        """The answer's text deltas, then its Usage (if the server sends one). `prime`: text
        the answer starts with, sent as a final assistant message to a server that continues
        it (`self.continues`); else dropped (the caller strips the model's own opening).
        RemoteError once the answer is past `self.deadline` or `max_tokens` (module doc)."""
        if not self.model:
            raise RemoteError(f"{self.base_url} lists no model: name one with -m")
        msgs = list(messages)
        extra: dict = {}
        if prime and self.continues:
            msgs.append({"role": "assistant", "content": prime})
            extra = {"continue_final_message": True, "add_generation_prompt": False}
        kwargs: dict = {"model": self.model, "messages": msgs, "stream": True, "max_tokens": max_tokens,
                        "temperature": temperature, "top_p": top_p,
                        "stream_options": {"include_usage": True}}  # fmt: skip
        if seed is not None:
            kwargs["seed"] = seed
        if prediction:
            kwargs["prediction"] = {"type": "content", "content": prediction}
        if extra:
            kwargs["extra_body"] = extra
        limits = Limits(self.base_url, time.monotonic() + self.deadline, self.deadline, max_tokens)
        chunks = self._call(self.client.chat.completions.create, **kwargs)
        timer = _cut_at(chunks.response, limits.end)
        seen = False
        try:
            for chunk in self._guarded(chunks, limits):
                seen = True
                try:
                    usage, deltas = _read(chunk)
                except (AttributeError, TypeError, ValueError):
                    raise RemoteError(f"{self.base_url}: sent a stream chunk that is not OpenAI's shape: "
                                      f"{_excerpt(_sent(chunk))}") from None  # fmt: skip
                if usage is not None:
                    yield usage
                for delta in deltas:
                    limits.spend(delta.text)
                    yield delta
        finally:
            timer.cancel()
            chunks.close()  # a reader that stops early closes the connection: the server stops
        kind = chunks.response.headers.get("content-type", "")
        if not seen and not kind.lower().startswith("text/event-stream"):
            what = kind or "a body of no type"
            raise RemoteError(f"{self.base_url}: answered with {what}, not an event stream")

    def _guarded(self, chunks, limits: Limits) -> Iterator:
        """The stream's chunks; what ends or breaks it past the deadline is the deadline."""
        it = iter(chunks)
        while True:
            try:
                chunk = next(it)
            except StopIteration:
                limits.check()
                return
            except Exception as exc:
                limits.check()
                if isinstance(exc, ValueError):  # json's: an event whose data is not JSON
                    raise RemoteError(f"{self.base_url}: sent a stream event that is not JSON: "
                                      f"{_excerpt(getattr(exc, 'doc', str(exc)))}") from None  # fmt: skip
                raise self._error(exc) from None
            limits.check()
            yield chunk

    def _call(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            raise self._error(exc) from None

    def _error(self, exc: Exception) -> Exception:
        """One line for what the client raised (its retries are spent by then)."""
        o, where = self._openai, self.base_url
        if isinstance(exc, o.APITimeoutError):
            return RemoteError(f"{where}: no answer in time (timed out)")
        if isinstance(exc, o.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            why = f": {cause}" if cause and str(cause) else ""
            return RemoteError(f"cannot reach {where}{why}")
        if isinstance(exc, o.APIStatusError):
            status, message = exc.status_code, _message(exc)
            what = {
                401: "the server refused the API key (401; --api-key-file, PEDIT_API_KEY or OPENAI_API_KEY)",
                403: "the server refused the request (403)",
                404: f"{status} not found: {message}",
                429: f"the server is busy (429) and stayed so after retries: {message}",
            }.get(status)
            if what is None:
                what = f"server error {status}: {message}" if status >= 500 else f"{status}: {message}"
            return RemoteError(f"{where}: {what}")
        if isinstance(exc, o.APIError):
            return RemoteError(f"{where}: {exc}")
        return exc

    def close(self) -> None:
        self.client.close()


class Limits:
    """One answer's bounds: the deadline (`end`, time.monotonic()) and its `max_tokens`, the
    tokens received counted from below (module doc); `check` and `spend` raise RemoteError
    naming the limit and the server."""

    def __init__(self, where: str, end: float, seconds: float, max_tokens: int):
        self.where, self.end, self.seconds, self.max_tokens = where, end, seconds, max_tokens
        self.deltas = self.size = 0

    def check(self) -> None:
        if time.monotonic() >= self.end:
            raise RemoteError(f"{self.where}: no whole answer within the deadline ({self.seconds:g} s, "
                              "the `deadline` setting); abandoned")  # fmt: skip

    def spend(self, text: str) -> None:
        self.deltas += bool(text)
        self.size += len(text.encode("utf-8", "replace"))
        if max(self.deltas, math.ceil(self.size / TOKEN_BYTES)) > self.max_tokens:
            raise RemoteError(f"{self.where}: the answer went on past max_tokens ({self.max_tokens}) "
                              "without stopping; abandoned")  # fmt: skip


def _cut_at(response, end: float) -> threading.Timer:
    """A timer that shuts the answer's connection down at `end` (time.monotonic()): a read
    that waits wakes up, the stream ends, and the reader finds itself past the deadline.
    Without the socket (another transport), closing the response stops the next read."""
    stream = getattr(response, "extensions", {}).get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None

    def cut() -> None:
        try:
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
            else:
                response.close()
        except OSError:  # closed already: the answer is over
            pass

    timer = threading.Timer(max(0.0, end - time.monotonic()), cut)
    timer.daemon = True
    timer.start()
    return timer


def _read(chunk) -> tuple[Usage | None, list[Delta]]:
    """One stream chunk's usage (if any) and text deltas; AttributeError, TypeError or
    ValueError for a chunk that is not OpenAI's shape (the client parses without checking)."""
    figures = (chunk.model_extra or {}).get("pedit") or {}
    usage = getattr(chunk, "usage", None)  # the last chunk's; a server may leave the field out
    usage = _usage(usage, figures) if usage is not None else None
    source, deltas = figures.get("source"), []
    for choice in getattr(chunk, "choices", None) or ():
        delta, finish = getattr(choice, "delta", None), getattr(choice, "finish_reason", None)
        text = (delta.content if delta is not None else None) or ""
        if not (isinstance(text, str) and isinstance(finish, str | None) and isinstance(source, str | None)):
            raise TypeError("a delta's content, finish_reason or source is not a string")
        if text or finish:
            deltas.append(Delta(text, source, finish))
    return usage, deltas


def _sent(chunk) -> str:
    """A chunk as the server sent it (JSON), as far as the client kept it."""
    try:
        return chunk.model_dump_json(warnings=False, exclude_unset=True)
    except Exception:  # not a model at all (a list, a string): its own text
        return json.dumps(chunk) if isinstance(chunk, list | str | int | float) else repr(chunk)


def _excerpt(text: str, n: int = 60) -> str:
    """The start of what a server sent, on one line."""
    text = " ".join(str(text).split())
    return repr(text if len(text) <= n else text[:n] + "...")


def _message(exc) -> str:
    """The server's own error message (OpenAI's shape), on one line."""
    body = exc.body if isinstance(exc.body, dict) else {}
    err = body.get("error", body)
    text = err.get("message") if isinstance(err, dict) else None
    text = text or body.get("detail") or exc.message
    return " ".join(str(text).split())


def _usage(usage, figures: dict | None) -> Usage:
    """The server's usage; TypeError where a count is not one."""
    details = usage.completion_tokens_details
    figures = figures or {}
    counts = (
        usage.prompt_tokens or 0, usage.completion_tokens or 0,
        getattr(details, "accepted_prediction_tokens", None) if details else None,
        getattr(details, "rejected_prediction_tokens", None) if details else None,
        figures.get("forward_passes"),
    )  # fmt: skip
    if not all(n is None or (isinstance(n, int) and not isinstance(n, bool)) for n in counts):
        raise TypeError("a usage count is not an integer")
    by = figures.get("accepted_by_drafter")
    if by is not None and not isinstance(by, dict):
        raise TypeError("accepted_by_drafter is not a table")
    return Usage(*counts, by)
