"""Instruction + file -> chat messages -> prompt tokens; and the answer back to file text.

The prompt puts the file in a Markdown fence and *primes* the assistant turn with the
opening fence line, so the model's first token is already the file's first token: no
preamble ("Sure! Here is..."), and the original file is a draft that lines up from token
one. The answer ends with the closing fence, which `strip_fence` removes. The fence is
longer than any run of backticks inside the file (CommonMark), so a Markdown file with
code blocks cannot close it early.

Control tokens: the file is tokenized with special=False, so a file that contains the text
"<|im_end|>" cannot end the prompt's user turn; only the template's own markup is parsed
for control tokens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import PurePath

from ..request import EditRequest

# fmt: off
REWRITE_SYSTEM = (
    "You are pedit, a careful text and code editor. You receive a file and an instruction. "
    "Reply with the complete rewritten file inside a fenced block, changing only what the "
    "instruction asks for and keeping everything else exactly as it is: wording, "
    "formatting, indentation and line breaks. No explanations before or after the block."
)
SUMMARY_SYSTEM = (
    "You are pedit. You receive a file and write a faithful, concise summary of it in "
    "plain prose: what it is, its main points, and anything a reader must not miss. "
    "Do not invent facts that are not in the file."
)
EXTRACT_SYSTEM = (
    "You are pedit. You read a file and write one JSON document that matches the JSON Schema "
    "you are given, filled with facts taken from the file only: names, dates and amounts "
    "exactly as the file writes them. Reply with the JSON only."
)

LANGS = {
    ".py": "python", ".md": "markdown", ".rst": "rst", ".txt": "text", ".js": "javascript",
    ".ts": "typescript", ".rs": "rust", ".go": "go", ".c": "c", ".h": "c", ".cpp": "cpp",
    ".java": "java", ".sh": "bash", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml",
    ".json": "json", ".html": "html", ".css": "css", ".rb": "ruby", ".tex": "latex",
}
# fmt: on


def fence_for(text: str) -> str:
    """A backtick fence longer than any backtick run in `text` (at least three)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def language(filename: str) -> str:
    return LANGS.get(PurePath(filename).suffix.lower(), "")


@dataclass(frozen=True, kw_only=True)
class Prompt:
    tokens: list[int]  # the whole prompt, primed assistant turn included
    fence: str  # the fence around the file; the answer should end with it
    prime: str  # text the assistant turn was primed with (the opening fence line)
    draft: list[int]  # the answer if nothing changed: the file, then the closing fence
    guess: list[int]  # what the predicted output copies: the request's guess, else the draft


def fenced_body(text: str) -> str:
    """The file as it sits inside the fence: ending with a newline, so the fence has a line."""
    return text if text.endswith("\n") or not text else text + "\n"


def messages(req: EditRequest, fence: str) -> list[dict]:
    """[system, user: instruction + fenced file (the file first where `req.file_first`)];
    in a session with accepted turns, the conversation: the first instruction with the
    starting file (in the same order), then for each turn the
    accepted text as the assistant's answer and the next instruction, so the prompt of
    turn n+1 begins with the tokens of turn n (prompt and answer) and reuses their cache."""
    name = req.filename or "the file"
    lang = language(req.filename)
    system = {"role": "system", "content": req.system or REWRITE_SYSTEM}

    def asked(instruction: str, text: str) -> str:
        file = f"{name}:\n{fence}{lang}\n{fenced_body(text)}{fence}"
        return f"{file}\n\n{instruction.strip()}" if req.file_first else f"{instruction.strip()}\n\n{file}"

    if not req.history:
        return [system, {"role": "user", "content": asked(req.instruction, req.text)}]
    out = [system, {"role": "user", "content": asked(req.history[0].instruction, req.start)}]
    asks = [h.instruction for h in req.history[1:]] + [req.instruction]
    for turn, ask in zip(req.history, asks, strict=True):
        out.append({"role": "assistant", "content": f"{fence}{lang}\n{fenced_body(turn.result)}{fence}"})
        again = f"Apply this to the latest version of {name} above and write the whole file again."
        out.append({"role": "user", "content": f"{ask.strip()}\n\n({again})"})
    return out


def fence_of(req: EditRequest) -> str:
    """One fence for the whole conversation (turns share it, so their tokens line up)."""
    return fence_for("\n".join([req.text, req.start, *(h.result for h in req.history)]))


def build_prompt(backend, req: EditRequest) -> Prompt:
    fence = fence_of(req)
    prime = f"{fence}{language(req.filename)}\n"
    tokens = prompt_tokens(backend, req)
    draft = _answer(backend, req.text if req.draft is None else req.draft, fence)
    guess = draft if req.guess is None else _answer(backend, req.guess, fence)
    return Prompt(tokens=tokens, fence=fence, prime=prime, draft=draft, guess=guess)


def prompt_tokens(backend, req: EditRequest) -> list[int]:
    """build_prompt's tokens alone (no draft): the chat, then the primed fence line."""
    fence = fence_of(req)
    return encode_chat(backend, messages(req, fence)) + backend.tokenize(f"{fence}{language(req.filename)}\n")


def _answer(backend, text: str, fence: str) -> list[int]:
    """The answer's tokens were `text` what the model writes: the file, the fence, the turn's end."""
    return backend.tokenize(fenced_body(text) + fence) + end_of_turn(backend)


def build_summary_prompt(backend, req: EditRequest) -> Prompt:
    """A prompt whose answer is new text about the file (not primed, no predicted draft)."""
    fence = fence_of(req)
    msgs = messages(replace(req, system=req.system or SUMMARY_SYSTEM), fence)
    return Prompt(tokens=encode_chat(backend, msgs), fence=fence, prime="", draft=[], guess=[])


def end_of_turn(backend) -> list[int]:
    """[the token the chat template closes an assistant turn with], if it ends generation
    (<|im_end|> for ChatML): the last token of an unchanged answer, so a draft can carry
    the model all the way to its stop."""
    mark = "\x00pedit-answer\x00"
    turns = [{"role": "user", "content": "x"}, {"role": "assistant", "content": mark}]
    rendered = backend.render_chat(turns, add_generation_prompt=False)
    after = rendered.split(mark, 1)[1] if mark in rendered else ""
    tokens = backend.tokenize(after, special=True)[:1]
    return tokens if tokens and tokens[0] in backend.eos_ids else []


def encode_chat(backend, msgs: list[dict]) -> list[int]:
    """Render the model's chat template, then tokenize the template's own text with control
    tokens parsed and the message contents without (see the module docstring)."""
    marks = [f"\x00pedit-content-{i}\x00" for i in range(len(msgs))]
    rendered = backend.render_chat([{**m, "content": k} for m, k in zip(msgs, marks, strict=True)])
    if not all(rendered.count(k) == 1 for k in marks):  # a template that rewrites contents
        return backend.tokenize(backend.render_chat(msgs), special=True)
    contents = dict(zip(marks, (m["content"] for m in msgs), strict=True))
    tokens: list[int] = []
    for piece in re.split("(" + "|".join(map(re.escape, marks)) + ")", rendered):
        if piece in contents:
            tokens += backend.tokenize(contents[piece], special=False)
        elif piece:
            tokens += backend.tokenize(piece, special=True)
    return tokens


_FENCE_LINE = re.compile(r"(`{3,})([^`]*)")  # a line that opens or closes a code block
_MAY_BE_FENCE = re.compile(r"`*[ \t\r]*")  # an incomplete line that may still become one


def _fence_line(line: str) -> tuple[int, bool] | None:
    """(backticks, bare) for a fence-like line ("```", "```python"), else None."""
    m = _FENCE_LINE.fullmatch(line.rstrip(" \t\r"))
    return (len(m.group(1)), not m.group(2).strip()) if m else None


class FenceStream:
    """Streams the file out of a primed answer: text passes through until a line that is
    exactly the closing fence; what follows (a remark the model adds) is dropped. Holds
    back only what may still turn out not to be content.

    What is not content, besides the closing fence and what follows it:
    - a re-opened fence on the answer's first line ("```markdown" again, though the prompt
      already opened the block), unless the file itself starts with that line;
    - a bare fence line of another length that ends the answer (the model closed the block
      with "```" where pedit's fence was "````"), when without it the answer's code blocks
      pair up as the file's do (`source`: same parity of fence-like lines). Followed by
      more text, that line is content (the model's own code block, or the file's).

    Nested blocks: the fence is longer than any backtick run in the *file*, but the model
    may write a new code block of the same length into its answer (a README gaining
    "```bash ... ```"). A line that is the fence followed by an info string ("```bash")
    opens a nested block, and the next bare fence line closes that block, not the answer.
    (Strict CommonMark would end the outer block there; models write Markdown this way.)

    `closed` tells whether the answer closed its fence: an answer that did not is not a
    whole rewrite (the model stopped early), and the caller must not write it.
    """

    def __init__(self, fence: str, source: str = ""):
        self.fence = fence
        self.closed = False
        self.depth = 0  # nested blocks opened by the answer itself
        lines = source.split("\n")
        self._first_line = lines[0]
        self._file_parity = sum(_fence_line(x) is not None for x in lines) % 2
        self._parity = 0  # fence-like lines passed as content so far, mod 2
        self._first = True
        self._line = ""  # the current, incomplete line
        self._sent = 0  # characters of _line already passed on
        self._held: list[str] = []  # a bare fence line (not the fence) and blank lines after it

    def feed(self, text: str) -> str:
        out = []
        while text and not self.closed:
            nl = text.find("\n")
            if nl < 0:
                self._line += text
                out.append(self._partial())
                break
            line, text = self._line + text[:nl], text[nl + 1 :]
            out.append(self._complete(line, "\n"))
            self._line, self._sent = "", 0
        return "".join(out)

    def close(self) -> str:
        """End of the answer: an incomplete last line, then a held bare fence line, decided."""
        out = ""
        if self._line and not self.closed:
            out = self._complete(self._line, "")
        self._line, self._sent = "", 0
        if self._held and not self.closed:
            if self._parity == self._file_parity:  # the held line is the model's closing fence
                self.closed, self._held = True, []
            else:
                out += self._flush()
        return out

    def _partial(self) -> str:
        """Pass on what of the incomplete line can no longer be anything but content."""
        line = self._line
        if _MAY_BE_FENCE.fullmatch(line) or (self._first and line.startswith("`")):
            return ""  # may become a fence line (or is blank: it may follow a held fence)
        out = self._flush() + line[self._sent :]
        self._sent = len(line)
        return out

    def _complete(self, line: str, end: str) -> str:
        first, self._first = self._first, False
        fence = _fence_line(line)
        exact = fence is not None and fence[1] and fence[0] == len(self.fence)
        if first and fence and not exact and line != self._first_line:
            return ""  # the model re-opened the block the prompt had opened
        if self._held and not line.strip():
            self._held.append(line + end)
            return ""
        if exact and self.depth == 0:
            out = self._flush()
            self.closed = True
            return out
        if fence and fence[1] and not exact and self.depth == 0:
            out = self._flush()
            self._held = [line + end]
            return out
        if exact:
            self.depth -= 1  # closes a nested block: content
        elif fence and fence[0] == len(self.fence):
            self.depth += 1  # "```bash": the answer opens its own block
        self._parity ^= fence is not None
        return self._flush() + line[self._sent :] + end

    def _flush(self) -> str:
        """Held lines turn out to be content (more text followed them)."""
        held, self._held = self._held, []
        self._parity ^= bool(held)  # one fence-like line among them
        return "".join(held)


def strip_fence(answer: str, fence: str, source: str = "") -> str:
    """The file inside a whole primed answer (FenceStream over one chunk)."""
    stream = FenceStream(fence, source)
    return stream.feed(answer) + stream.close()
