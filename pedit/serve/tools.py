"""pedit serve's tools: the CLI's tools and checks for a chat that sends a file to edit.

    instruction = the latest user message, its fenced blocks left out
    file        = the prediction's (inside its fences, when it has them), named by the line
                  above the file's fence in that message ("textwrap.py:", aider's `path`),
                  else by the fence's language, else as Python when it parses, else text
    proposal    = a rename (intent.parse):  the exact rename (tools/rename.py)
                  f-strings, logging:       the tool's conversion (app/refactor.proposal)
                  a fix (the instruction asks for spelling, grammar, typos, punctuation):
                                            Harper's and the spelling's suggestions
                                            (app/grammarcheck.draft)
    draft       = the prediction with the proposal in place of its file
    variants    = the other predictions drafted from beside it (engine/drafters/compose.py):
                  the prediction as sent, when a tool changed it (the model may refuse the
                  edit), and for a prose file each with its paragraphs unwrapped
                  (app/linebreaks.unwrapped: a model asked to fix a hard-wrapped text often
                  writes each paragraph on one line)
    verdict     = the CLI's check of the answer: a refactor's intentcheck.check, a fix's
                  guard.judge

A server changes the draft only: no keep-bias, no grammar, no tool's edit written in the
model's place. The answer is plain decoding's whatever the draft (lossless), and a check
that refuses it says so in the extension field (`pedit.check`); the text goes back as the
model wrote it. A tool that fails leaves the prediction as it was.
"""

from __future__ import annotations

import ast
import dataclasses
import logging
import re
from dataclasses import dataclass
from pathlib import PurePath

from ..app.linebreaks import unwrapped
from ..app.refactor import proposal
from ..checks import guard, intentcheck
from ..engine.prompt import LANGS
from ..tools import grammarcheck
from ..tools import intent as intents
from .schema import FENCE, fenced_blocks

log = logging.getLogger("pedit.serve")

FIX = re.compile(r"\b(fix|correct|proofread)\w*\b.*\b(spelling|grammar|typos?|punctuation)\b", re.I | re.S)
SUFFIX = {lang: suffix for suffix, lang in reversed(LANGS.items())} | {"py": ".py", "js": ".js"}
PROSE = (".md", ".markdown", ".txt", ".rst", "")  # files whose paragraphs a model may unwrap


@dataclass(frozen=True)
class Tooled:
    """A prediction with a tool's edit in it, and how to check the answer."""

    draft: str  # the prediction to draft from
    tool: str = ""  # "rename", "fstrings", "logging", "fix", or "" (the prediction as sent)
    filename: str = ""
    before: str = ""  # the file as sent
    exact: str | None = None  # the tool's edit of it
    intent: intents.Intent | None = None  # a refactor's; None: a fix
    variants: tuple[str, ...] = ()  # other predictions of the answer, drafted from beside it

    def verdict(self, answer: str) -> dict | None:
        """The CLI's check of the answer's file (None: no tool, nothing to check)."""
        if not self.tool:
            return None
        blocks = fenced_blocks(answer) or []  # an answer with words around its file: the file
        after = split(blocks[0] if len(blocks) == 1 else answer)[1]
        try:
            if self.intent is None:
                refusal = guard.judge(self.filename, self.before, after, judged=True)  # a fix's checks
                why = {"reason": refusal.reason} if refusal else {}
                return {"check": "fix", "passed": refusal is None, **why}
            return intentcheck.check(self.intent, self.filename, self.before, after, self.exact).to_dict()
        except Exception:  # a check that fails is no verdict, not a failed request
            log.exception("the %s check failed", self.tool)
            return None


def propose(messages: list[dict], prediction: str) -> Tooled:
    """The draft for a chat's answer, the prediction with a tool's edit of its file, and the
    variants beside it."""
    tooled = _propose(messages, prediction)
    head, before, _ = split(prediction)
    name = tooled.filename or _filename(_instruction(messages)[1], head, before)
    found = [prediction] if tooled.draft != prediction else []
    if PurePath(name).suffix.lower() in PROSE:
        found += [_unwrapped(tooled.draft), _unwrapped(prediction)]
    variants = tuple(dict.fromkeys(v for v in found if v != tooled.draft))
    return dataclasses.replace(tooled, variants=variants)


def _unwrapped(prediction: str) -> str:
    head, file, tail = split(prediction)
    return head + unwrapped(file) + tail


def _propose(messages: list[dict], prediction: str) -> Tooled:
    instruction, named = _instruction(messages)
    head, before, tail = split(prediction)
    if not before.strip():
        return Tooled(prediction)
    filename = _filename(named, head, before)
    try:
        found = intents.parse(instruction)
        if found.kind != intents.OTHER:
            exact = proposal(found, before, filename, instruction)[0]
            tool = found.kind.lower()
        elif FIX.search(instruction):
            exact, found, tool = grammarcheck.draft(before, filename), None, "fix"
        else:
            return Tooled(prediction)
    except Exception:  # a tool that fails: the prediction as sent
        log.exception("a tool failed on the prediction")
        return Tooled(prediction)
    if exact is None:
        return Tooled(prediction)
    return Tooled(head + exact + tail, tool=tool, filename=filename, before=before, exact=exact, intent=found)


def split(text: str) -> tuple[str, str, str]:
    """(head, file, tail): the lines before the file (a name line and the opening fence),
    the file, and the closing fence after it; ("", text, "") for a text with no fence."""
    lines = text.splitlines(keepends=True)
    named = len(lines) > 2 and len(lines[0].split()) == 1 and not FENCE.match(lines[0].rstrip("\r\n"))
    top = next((i for i in range(1 + named) if FENCE.match(lines[i].rstrip("\r\n"))), None) if lines else None
    if top is None:  # a continued answer (continue_final_message): the file, then the fence
        closing = bool(lines) and re.fullmatch(r"\s*(`{3,}|~{3,})\s*", lines[-1]) is not None
        return ("", "".join(lines[:-1]), lines[-1]) if closing else ("", text, "")
    mark = FENCE.match(lines[top].rstrip("\r\n")).group(1)
    end = next((j for j in range(len(lines) - 1, top, -1) if _closing(lines[j], mark)), len(lines))
    return "".join(lines[: top + 1]), "".join(lines[top + 1 : end]), "".join(lines[end:])


def _closing(line: str, mark: str) -> bool:
    bare = line.strip()
    return len(bare) >= len(mark) and set(bare) == {mark[0]}


def _instruction(messages: list[dict]) -> tuple[str, str]:
    """(the latest user message without its fenced blocks, the name on the line above its
    first fenced file: "textwrap.py:" or aider's "textwrap.py"; "" when there is none). A
    block the system prompt shows too is the answer format's example, not a file."""
    text = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    shown = "\n".join(m["content"] for m in messages if m["role"] == "system")
    lines, kept, name, mark, top = text.splitlines(keepends=True), [], "", "", 0
    for i, line in enumerate(lines):
        fence = FENCE.match(line.rstrip("\r\n"))
        if not mark and fence:
            mark, top = fence.group(1), i
        elif mark and _closing(line, mark):
            above = lines[top - 1].strip().rstrip(":") if top else ""
            example = shown and "".join(lines[top + 1 : i]) in shown  # the format's, not a file
            if not (name or example) and len(above.split()) == 1 and PurePath(above).suffix:
                name = above
            mark = ""
        elif not mark:
            kept.append(line)
    return "".join(kept), name


def _filename(named: str, head: str, text: str) -> str:
    """The file's name: the prediction's name line, else the message's, else the fence's
    language as a suffix, else a Python file when it parses as one, else text."""
    lines = head.splitlines()
    if len(lines) == 2 or named:  # the prediction's own name (aider's `path`), or the message's
        return lines[0].strip() if len(lines) == 2 else named
    info = FENCE.match(lines[-1]).group(2).strip().lower() if lines else ""
    if info in SUFFIX:
        return "file" + SUFFIX[info]
    try:
        ast.parse(text)
        return "file.py"
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # a client's nesting too deep
        return "file.txt"
