"""A remote backend: any OpenAI-compatible server (`pedit serve`, vLLM, llama.cpp's server,
OpenAI itself), through the `openai` client.

It returns text, not logits: it declares `Capabilities(logits=False)` and the engine runs
engine/remote.py's loop for it, not the local one. The file goes to the server as OpenAI's
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

Errors are one line each (RemoteError): connection refused, timeouts, 401, 404 (no such
model), 429 and 5xx after the client's bounded retries with backoff (`retries`, honouring
Retry-After), and a 400 with the server's own message.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from .base import BackendError, Capabilities

CONTINUING = ("pedit", "vllm", "llamacpp")  # owned_by of servers that continue a final assistant turn
DEFAULT_N_CTX = 32768  # when the server does not say (vLLM and pedit serve say: max_model_len)


class RemoteError(BackendError):
    """A remote server could not give an answer: one line that says why."""


@dataclass(frozen=True)
class Usage:
    """The server's figures for one answer (OpenAI's usage; None where it gave none)."""

    prompt_tokens: int
    completion_tokens: int
    accepted_prediction_tokens: int | None
    rejected_prediction_tokens: int | None
    forward_passes: int | None = None  # `pedit serve` says, in its extension field
    accepted_by_drafter: dict | None = None


@dataclass(frozen=True)
class Delta:
    """A piece of the answer's text; `source` the drafter that proposed it when the server
    says (`pedit serve`'s extension field), else None; `finish` OpenAI's finish_reason on
    the last one ("stop", "length")."""

    text: str
    source: str | None = None
    finish: str | None = None


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
        retries: int = 3,
    ):
        import openai

        self._openai = openai
        if not urlsplit(base_url).scheme.startswith("http"):
            raise RemoteError(f"--base-url {base_url!r} is not an http(s) URL")
        self.base_url = base_url.rstrip("/")
        self.client = openai.OpenAI(
            base_url=self.base_url, api_key=api_key or "none", max_retries=retries,
            timeout=openai.Timeout(timeout, connect=min(timeout, 10.0)),
        )  # fmt: skip
        self._listed = {m["id"]: m for m in self._models() if isinstance(m.get("id"), str)}
        self._n_ctx = n_ctx
        self.capabilities = Capabilities(rollback=False, device=f"remote {urlsplit(self.base_url).netloc}",
                                         logits=False)  # fmt: skip
        self.eos_ids: frozenset[int] = frozenset()
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
        self.n_ctx = self._n_ctx or int(entry.get("max_model_len") or DEFAULT_N_CTX)

    @property
    def n_past(self) -> int:
        return 0  # the server's cache is its own

    @property
    def held(self) -> Sequence[int]:
        return ()

    @property
    def first_read(self) -> int:
        return 0

    def count_tokens(self, text: str) -> int:
        return math.ceil(len(text.encode("utf-8")) / 3)

    def _models(self) -> list[dict]:
        """The server's /v1/models entries (a server without the route: none)."""
        try:
            page = self.client.models.list()
        except self._openai.APIStatusError as exc:
            if exc.status_code in (404, 405):
                return []
            raise self._error(exc) from None
        except Exception as exc:
            raise self._error(exc) from None
        return [m.model_dump() for m in page.data]

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
        it (`self.continues`); else dropped (the caller strips the model's own opening)."""
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
        chunks = self._call(self.client.chat.completions.create, **kwargs)
        try:
            for chunk in self._guarded(chunks):
                if chunk.usage is not None:
                    yield _usage(chunk.usage, (chunk.model_extra or {}).get("pedit"))
                for choice in chunk.choices:
                    text = (choice.delta.content if choice.delta is not None else None) or ""
                    if text or choice.finish_reason:
                        source = ((chunk.model_extra or {}).get("pedit") or {}).get("source")
                        yield Delta(text, source, choice.finish_reason)
        finally:
            chunks.close()  # a reader that stops early closes the connection: the server stops

    def _guarded(self, chunks) -> Iterator:
        it = iter(chunks)
        while True:
            try:
                chunk = next(it)
            except StopIteration:
                return
            except Exception as exc:
                raise self._error(exc) from None
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
                401: "the server refused the API key (401; --api-key or OPENAI_API_KEY)",
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


def _message(exc) -> str:
    """The server's own error message (OpenAI's shape), on one line."""
    body = exc.body if isinstance(exc.body, dict) else {}
    err = body.get("error", body)
    text = err.get("message") if isinstance(err, dict) else None
    text = text or body.get("detail") or exc.message
    return " ".join(str(text).split())


def _usage(usage, figures: dict | None) -> Usage:
    details = usage.completion_tokens_details
    figures = figures or {}
    return Usage(
        usage.prompt_tokens or 0, usage.completion_tokens or 0,
        getattr(details, "accepted_prediction_tokens", None) if details else None,
        getattr(details, "rejected_prediction_tokens", None) if details else None,
        figures.get("forward_passes"), figures.get("accepted_by_drafter"),
    )  # fmt: skip
