"""The benchmark's tasks: corpus/tasks.toml and the files it names (sources and licences
in corpus/SOURCES.md). A task becomes the same EditRequest the CLI would build, with the
built-in templates (user overrides would make runs incomparable)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..app.templates import BUILTIN, templates
from ..request import EditRequest

CORPUS = Path(__file__).parent / "corpus"
CATEGORIES = ("prose", "markdown", "code", "summary", "open")


@dataclass(frozen=True, kw_only=True)
class Task:
    id: str
    file: str
    command: str  # a template: fix, refactor, summarize, edit
    instruction: str
    category: str
    quick: bool
    max_tokens: int | None
    source: str
    license: str
    heldout: bool = False  # not looked at while tuning prompts and settings (docs/quality.md)
    natural: bool = False  # the natural-error corpus: the errors writers make, annotated by kind
    learner: bool = False  # the learner corpus (issue 57): the errors English learners make, by kind
    skeleton: bool = False  # the skeleton set: READMEs with links, badges, code and tables (issue 53)
    # the learner sentences (issue 70): a sentence a line, three to six errors each, often
    # overlapping and misspelt, as learners' essays have them (also `learner`)
    multi: bool = False
    check: dict = field(default_factory=dict, hash=False, compare=False)  # refactor checks

    @property
    def kind(self) -> str:
        return BUILTIN[self.command].kind

    def text(self) -> str:
        return (CORPUS / self.file).read_text(encoding="utf-8")

    def reference(self) -> str | None:
        """The correct text of a `fix` input: its introduced errors (SOURCES.md) undone."""
        errors = introduced_errors().get(self.file)
        if self.command != "fix" or errors is None:
            return None
        text = self.text()
        for error, original in errors:
            if text.count(error) != 1:
                raise ValueError(f"SOURCES.md: {self.file}: {error!r} is not in the file exactly once")
            text = text.replace(error, original)
        return text

    def kinds(self) -> list[tuple[str, str]]:
        """(error, its kind) for each introduced error of a `fix` input (SOURCES.md)."""
        errors = introduced_errors().get(self.file) or []
        return [(e, k) for (e, _), k in zip(errors, error_kinds().get(self.file, []), strict=True)]

    def request(self, model: str | None = None) -> EditRequest:
        """The task's request as `pedit COMMAND` asks it of `model` (templates.for_model)."""
        template = templates({}, model)[self.command]
        return EditRequest(self.text(), template.render(self.instruction), self.file, template.system)


def load_tasks(path: Path = CORPUS / "tasks.toml") -> list[Task]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    tasks = []
    for t in data["task"]:
        task = Task(
            id=t["id"], file=t["file"], command=t["command"], instruction=t.get("instruction", ""),
            category=t["category"], quick=bool(t.get("quick", False)), max_tokens=t.get("max_tokens"),
            source=t.get("source", ""), license=t.get("license", ""),
            heldout=bool(t.get("heldout", False)), natural=bool(t.get("natural", False)),
            learner=bool(t.get("learner", False)), skeleton=bool(t.get("skeleton", False)),
            multi=bool(t.get("multi", False)),
            check=t.get("check", {}),
        )  # fmt: skip
        if task.command not in BUILTIN or task.category not in CATEGORIES:
            raise ValueError(f"{path}: task {task.id}: bad command or category")
        tasks.append(task)
    return tasks


def select(tasks: list[Task], *, quick: bool = False, ids: str | None = None) -> list[Task]:
    """The --quick subset, or the tasks whose id contains one of the comma-separated ids."""
    if ids:
        wanted = [w.strip() for w in ids.split(",") if w.strip()]
        return [t for t in tasks if any(w in t.id for w in wanted)]
    return [t for t in tasks if t.quick] if quick else list(tasks)


_SECTION = re.compile(r"^## `([^`]+)`$", re.M)
_ERROR = re.compile(r"^  - `(.+?)` \u2190 `(.+?)`(?: \(|$)", re.M)
_KIND = re.compile(r"^  - `.+?` \u2190 `.+?`(?: \(([^:;)]+))?", re.M)
# The kinds of error an introduced error is annotated with (SOURCES.md: "(kind: note)"), as
# the quality report counts them apart: the errors writers make.
KINDS = (
    "spelling", "a/an", "article", "agreement", "verb form", "homophone", "doubled word",
    "preposition", "real word", "apostrophe", "capital", "punctuation", "word choice",
    "missing word", "tense", "number",
)  # fmt: skip


def _error_lists(path: Path) -> dict[str, str]:
    """{file: the text of its "Introduced errors" list} from SOURCES.md's sections."""
    text = path.read_text(encoding="utf-8")
    heads = list(_SECTION.finditer(text))
    out = {}
    for head, nxt in zip(heads, [*heads[1:], None], strict=True):
        body = text[head.end() : nxt.start() if nxt else len(text)]
        if "- Introduced errors:" in body:
            out[head.group(1)] = body.split("- Introduced errors:", 1)[1]
    return out


@cache
def introduced_errors(path: Path = CORPUS / "SOURCES.md") -> dict[str, list[tuple[str, str]]]:
    """{file: [(error, original), ...]} from SOURCES.md's "Introduced errors" lists."""
    return {name: _ERROR.findall(listed) for name, listed in _error_lists(path).items()}


@cache
def error_kinds(path: Path = CORPUS / "SOURCES.md") -> dict[str, list[str]]:
    """{file: [kind, ...]}, one per introduced error in SOURCES.md's order (the word before
    the note's colon; "" where the note names no kind of KINDS)."""
    return {
        name: [k.strip() if k.strip() in KINDS else "" for k in _KIND.findall(listed)]
        for name, listed in _error_lists(path).items()
    }
