"""The request bodies of /v1/chat/completions and /v1/completions as pydantic models
(FastAPI's convention), and what pedit does with each parameter OpenAI's API defines:

- honoured: messages, prompt, prediction, max_tokens, max_completion_tokens, temperature,
  top_p, seed, stop, stream, stream_options; vLLM's continue_final_message and
  add_generation_prompt;
- no effect on the answer, accepted: model (the server has one), user, metadata, store,
  service_tier, prompt_cache_key, safety_identifier, parallel_tool_calls;
- accepted at their neutral value only, otherwise a 400 naming them (as llama-server and
  vLLM answer what they do not serve): n and best_of (1), logprobs and echo (false),
  top_logprobs, penalties (0), logit_bias ({}), tools, functions, tool_choice and
  function_call ("none"), response_format ({"type": "text"}), modalities (["text"]),
  audio, reasoning_effort, verbosity, web_search_options, suffix;
- any other key: ignored, as OpenAI ignores it.

Strict types (no "false" for false, no 1.5 for a seed), finite numbers only, the JSON
parsed by pydantic's own parser (its depth limit and its refusal of a lone surrogate
escape are a 400 like any other)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..engine.decode import DecodeOptions
from ..engine.sampling import Sampling
from .api import ApiError, Call

Finite = Annotated[float, Field(allow_inf_nan=False)]
Positive = Annotated[int, Field(ge=1)]
Stop = Annotated[str, Field(min_length=1)]


class Body(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


class Part(Body):
    type: Literal["text"]
    text: str = ""


Content = str | list[Part]


class Message(Body):
    role: Literal["system", "developer", "user", "assistant"]
    content: Content | None = None


class Prediction(Body):
    type: Literal["content"]
    content: Content


class StreamOptions(Body):
    include_usage: bool = False


class Common(Body):
    """What both endpoints take."""

    model: str | None = None
    prediction: Prediction | None = None
    max_tokens: Positive | None = None
    temperature: Annotated[Finite, Field(ge=0, le=2)] = 1.0
    top_p: Annotated[Finite, Field(gt=0, le=1)] = 1.0
    seed: Annotated[int, Field(ge=0, lt=2**63)] | None = None
    stop: Stop | Annotated[list[Stop], Field(max_length=4)] | None = None
    stream: bool = False
    stream_options: StreamOptions | None = None
    n: int | None = None
    logprobs: Any = None
    top_logprobs: Any = None
    presence_penalty: Finite | None = None
    frequency_penalty: Finite | None = None
    logit_bias: dict[str, Any] | None = None


class ChatBody(Common):
    messages: Annotated[list[Message], Field(min_length=1)]
    max_completion_tokens: Positive | None = None
    continue_final_message: bool = False
    add_generation_prompt: bool = True
    tools: list[Any] | None = None
    functions: list[Any] | None = None
    tool_choice: Any = None
    function_call: Any = None
    response_format: dict[str, Any] | None = None
    modalities: list[str] | None = None
    audio: Any = None
    reasoning_effort: Any = None
    verbosity: Any = None
    web_search_options: Any = None


class CompletionBody(Common):
    prompt: str | Annotated[list[str], Field(min_length=1)]
    best_of: int | None = None
    echo: bool | None = None
    suffix: str | None = None


# What pedit cannot honour, at the value that means "not asked": a request that asks for
# more gets a 400 naming the parameter. (key, neutral values)
NEUTRAL: tuple[tuple[str, tuple], ...] = (
    ("n", (None, 1)), ("best_of", (None, 1)), ("logprobs", (None, False, 0)), ("top_logprobs", (None, 0)),
    ("echo", (None, False)), ("suffix", (None, "")), ("presence_penalty", (None, 0)),
    ("frequency_penalty", (None, 0)), ("logit_bias", (None, {})), ("tools", (None, [])),
    ("functions", (None, [])), ("tool_choice", (None, "none")), ("function_call", (None, "none")),
    ("response_format", (None, {"type": "text"})), ("modalities", (None, ["text"])), ("audio", (None,)),
    ("reasoning_effort", (None,)), ("verbosity", (None,)), ("web_search_options", (None,)),
)  # fmt: skip


def parse_chat(raw: bytes, n_ctx: int) -> Call:
    body = _validate(ChatBody, raw)
    messages = [
        {"role": "system" if m.role == "developer" else m.role, "content": _text(m.content)}
        for m in body.messages
    ]
    continue_final = _continuation(body, messages)
    limit = body.max_completion_tokens or body.max_tokens
    call = Call(messages=messages, text="", continue_final=continue_final, **_decoding(body, limit, n_ctx))
    if call.prediction is not None:
        return replace(call, draft_from="prediction")
    found = fenced_file(messages)
    return call if found is None else replace(call, prediction=found, draft_from="fenced file")


# a fence line: three or more backticks or tildes, then an info string (Markdown's)
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def fenced_file(messages: list[dict]) -> str | None:
    """The draft a chat without `prediction` gets: the latest user message that holds a
    fenced block, when it holds exactly one, as that block stands there (the file's name
    on the line just above, if it is there; the fences and the file). Clients send a file
    so and ask for it whole back: aider's whole-file format sends `path`, then the fenced
    file, and its answer is the same with the edits; a chat that pastes one file and asks
    for it rewritten, the same. A block whose text the system prompt already shows is an
    example of the answer's format, not a file (aider repeats its example after the
    instruction), and is passed over. Unclosed, or two or more blocks: no draft (which
    file would come back?)."""
    shown = "\n".join(m["content"] for m in messages if m["role"] == "system")
    for m in reversed(messages):
        if m["role"] != "user":
            continue
        blocks = fenced_blocks(m["content"])
        if blocks is None:
            return None
        files = [b for b in blocks if not (shown and inside(b) in shown)]
        if files:
            return files[0] if len(files) == 1 else None
    return None


def inside(block: str) -> str:
    """A fenced block's text between its fence lines."""
    lines = block.splitlines(keepends=True)
    top = next(i for i, line in enumerate(lines) if FENCE.match(line.rstrip("\r\n")))
    return "".join(lines[top + 1 : -1])


def fenced_blocks(text: str) -> list[str] | None:
    """The fenced blocks of `text`, each with the name line just above it (None: a block
    is left open, so the message's blocks are not known)."""
    lines, blocks, i = text.splitlines(keepends=True), [], 0
    while i < len(lines):
        opened = FENCE.match(lines[i].rstrip("\r\n"))
        if not opened:
            i += 1
            continue
        mark = opened.group(1)
        j = next((j for j in range(i + 1, len(lines)) if _closes(lines[j], mark)), None)
        if j is None:
            return None
        top = i - 1 if i and _names_a_file(lines[i - 1]) else i
        blocks.append("".join(lines[top : j + 1]))
        i = j + 1
    return blocks


def _names_a_file(line: str) -> bool:
    """A line that can be the block's file name (aider's `path` line): one word, not a
    sentence's colon, not a fence."""
    bare = line.strip()
    return bool(bare) and len(bare.split()) == 1 and not bare.endswith(":") and not FENCE.match(bare)


def _closes(line: str, mark: str) -> bool:
    """Markdown's closing fence: the opening's character, at least as many, nothing else."""
    bare = line.strip()
    return len(bare) >= len(mark) and set(bare) == {mark[0]}


def parse_completion(raw: bytes, n_ctx: int) -> Call:
    """OpenAI's legacy completions: one prompt, plain text; `prediction` is pedit's extension."""
    body = _validate(CompletionBody, raw)
    prompt = body.prompt
    if isinstance(prompt, list):
        if len(prompt) > 1:
            raise ApiError(400, "one prompt per request", "prompt", "unsupported_value")
        prompt = prompt[0]
    if not prompt:
        raise ApiError(400, "prompt must be a non-empty string (or a list of one)", "prompt")
    call = Call(
        messages=None, text=prompt, continue_final=False, **_decoding(body, body.max_tokens or 16, n_ctx)
    )
    return call if call.prediction is None else replace(call, draft_from="prediction")


def _validate(model: type[Body], raw: bytes) -> Body:
    """The body as `model`, or OpenAI's 400 naming the first bad parameter."""
    try:
        body = model.model_validate_json(raw or b"null")
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = [str(p) for p in error["loc"] if not isinstance(p, int)][:1]
        if error["type"] == "json_invalid" or not where:
            raise ApiError(400, f"the request body is not this API's JSON object: {error['msg']}") from None
        path = ".".join(str(p) for p in error["loc"] if not re.search(r"[-\[]", str(p)))  # no union tags
        raise ApiError(400, f"{path}: {error['msg']}", where[0]) from None
    for key, neutral in NEUTRAL:
        if key in type(body).model_fields and getattr(body, key) not in neutral:
            raise ApiError(400, f"{key} is not supported by pedit serve", key, "unsupported_value")
    return body


def _text(content: Content | None) -> str:
    """A content: a string, or a list of text parts."""
    if content is None:
        return ""
    return content if isinstance(content, str) else "".join(p.text for p in content)


def _continuation(body: ChatBody, messages: list[dict]) -> bool:
    """vLLM's continue_final_message, with its rules: the last message is the assistant's,
    and the client turns add_generation_prompt off. pedit's prompt always has an open
    assistant turn (a new one, or the one it continues), so add_generation_prompt false
    alone is refused."""
    cont, opened = body.continue_final_message, body.add_generation_prompt
    if cont and messages[-1]["role"] != "assistant":
        raise ApiError(400, "continue_final_message: the last message must be the assistant's", "messages")
    if cont and opened:
        both = "continue_final_message and add_generation_prompt cannot both be true"
        raise ApiError(400, both, "add_generation_prompt")
    if not cont and not opened:
        alone = "add_generation_prompt false is served only with continue_final_message true"
        raise ApiError(400, alone, "add_generation_prompt", "unsupported_value")
    return cont


def _decoding(body: Common, limit: int | None, n_ctx: int) -> dict:
    """What both endpoints share: Call's prediction, options, stop, stream, include_usage.
    No limit: the context's room (the model clips it to what is left after the prompt)."""
    prediction = _text(body.prediction.content) if body.prediction else None
    sampling = Sampling(temperature=body.temperature, top_p=body.top_p, seed=body.seed)
    stop = (body.stop,) if isinstance(body.stop, str) else tuple(body.stop or ())
    include = bool(body.stream_options and body.stream_options.include_usage)
    return {"prediction": prediction, "options": DecodeOptions(limit or n_ctx, sampling), "stop": stop,
            "stream": body.stream, "include_usage": include}  # fmt: skip
