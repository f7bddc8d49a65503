"""What a refactor asks, as an intent the tools and the checks understand.

    rename   {old: new, ...}   rename these names (every binding of each, scope by scope)
    hints                      add type hints to every parameter and return
    fstrings                   %-formatting and .format() to f-strings
    logging                    print() calls to logging
    extract  (name)            a piece of a function into a new function (named, if said)
    other                      anything else: the model alone, checked by the parse check

`parse(instruction)` reads the common phrasings with patterns ("rename x to count",
"rename the parameters `lo` and `hi` to `low` and `high`", "x -> count", "add type
hints", "annotate every function with types"). What no pattern reads is `other`, unless
it names a rename or type hints in words the patterns miss (`vague`): then the shell asks
the model itself, under a small JSON schema (pedit extract's machinery: the grammar forces
the keys, so it costs a few passes), and `from_extracted` reads its answer.
"""

from __future__ import annotations

import json
import keyword
import re
from dataclasses import dataclass, field

RENAME, HINTS, FSTRINGS, LOGGING, EXTRACT, OTHER = (
    "rename",
    "hints",
    "fstrings",
    "logging",
    "extract",
    "other",
)

_STOP = r"(?!(?:the|a|an|in|on|at|of|to|and|or|it|its|them|this|that|all|every|each|too|also|everywhere)\b)"
_NAME = rf"(?:`([A-Za-z_][A-Za-z0-9_]*)`|{_STOP}([A-Za-z_][A-Za-z0-9_]*))"  # `a` may be a stop word
_NAMES = rf"{_NAME}(?:\s*(?:,|,?\s*and)\s*{_NAME})?(?:\s*(?:,|,?\s*and)\s*{_NAME})?"
_WHAT = (
    r"(?:(?:the|a|its|this)\s+)?(?:(?:local|global|module|instance|class|private|public|exception|helper)\s+)?"
    r"(?:(?:parameters?|arguments?|args?|variables?|vars?|locals?|functions?|methods?|classes|class|"
    r"attributes?|fields?|constants?|names?|identifiers?|properties|property)\s+)?"
)
_KIND = (
    r"(?:\s+(?:parameters?|arguments?|variables?|functions?|methods?|class|attributes?|fields?|constants?))?"
)
_RENAME = re.compile(
    rf"\b(?:rename|renaming)\s+{_WHAT}{_NAMES}{_KIND}\s+(?:to|into|as|->|=>|→)\s+{_NAMES}", re.I
)
_CALL = re.compile(
    rf"\b(?:change|call)\s+(?:the\s+name\s+of\s+)?{_WHAT}{_NAMES}\s+(?:to|->)\s+{_NAMES}", re.I
)
_ARROW = re.compile(rf"^\s*{_NAME}\s*(?:->|=>|→)\s*{_NAME}\s*$")
_HINTS = re.compile(
    r"\b(?:add|write|insert|put)\b.*\b(?:type\s*hints?|type\s*annotations?|annotations|typing|types)\b"
    r"|\b(?:type[- ]?annotate|type[- ]?hint|annotate)\b.*\b(?:types?|functions?|parameters?|"
    r"arguments?|signatures?|everything|file|code|module|it)\b"
    r"|^\s*(?:type\s*hints?|type\s*annotations?)\s*\.?\s*$",
    re.I,
)
_WITHIN = re.compile(
    r"\s*,?\s*(?:only\s+)?(?:in|inside|within)\s+(?:the\s+)?(?:function|method|class|def)?\s*"
    r"(?!(?:the|a|an|this|its|docstrings?|comments?|messages?|strings?|docs|code|file|module|whole|every)\b)"
    r"`?([A-Za-z_][A-Za-z0-9_]*)`?(?:\(\))?(?!\w)",
    re.I,
)
_WITHIN_BEFORE = re.compile(
    r"\b(?:in|inside|within)\s+(?:the\s+)?(?:function|method|class|def)?\s*`?([A-Za-z_][A-Za-z0-9_]*)`?"
    r"(?:\(\))?(?:\s+only)?\s*,\s*$",
    re.I,
)
_FSTRINGS = re.compile(r"\bf-?strings?\b", re.I)
_LOGGING = re.compile(r"\blog(?:ging|ger)?\b.*\bprint|\bprint.*\blog(?:ging|ger)?\b", re.I)
_EXTRACT = re.compile(
    r"\b(?:extract|move|factor|pull|split)\b.*\b(?:into|to|as|out)\b.*\b(?:function|helper|method)\b"
    r"(?:\s+(?:called|named)?\s*`([A-Za-z_][A-Za-z0-9_]*)[`(]|\s+(?:called\s+|named\s+)?([A-Za-z_][A-Za-z0-9_]*)\()?",
    re.I,
)
_DOCS = re.compile(
    r"\b(?:docstrings?|comments?|messages?|strings?|docs|documentation|everywhere|text)\b", re.I
)
_VAGUE = re.compile(r"\b(?:renam\w*|name|names|hints?|annotat\w*|typ(?:e|es|ing))\b", re.I)


@dataclass(frozen=True)
class Intent:
    kind: str  # RENAME, HINTS or OTHER
    renames: dict[str, str] = field(default_factory=dict)  # old -> new (a rename)
    docs: bool = False  # a rename that names the docstrings/comments/messages too
    source: str = "pattern"  # how it was read: "pattern", "model", or "none" (other)
    within: str | None = None  # a rename "in NAME": only the bindings in that function or class
    function: str | None = None  # extract: the new function's name, when the instruction gives it

    def describe(self) -> str:
        if self.kind == RENAME:
            pairs = ", ".join(f"{o} -> {n}" for o, n in self.renames.items())
            where = f" in {self.within}" if self.within else ""
            return f"rename {pairs}{where}" + (" (docstrings and comments too)" if self.docs else "")
        if self.kind == EXTRACT:
            return "extract a function" + (f" {self.function}" if self.function else "")
        return {HINTS: "add type hints", FSTRINGS: "use f-strings", LOGGING: "print to logging"}.get(
            self.kind, "other"
        )


def parse(instruction: str | None) -> Intent:
    """The intent the patterns read in `instruction` (OTHER when none does)."""
    text = " ".join((instruction or "").split())
    for pattern in (_RENAME, _CALL):
        m = pattern.search(text)
        if m:
            renames = _pairs(m.groups())
            if renames:
                rest = text[m.end() :]
                within = _WITHIN.match(rest) or _WITHIN_BEFORE.search(text[: m.start()])
                docs = bool(_DOCS.search(rest + " " + text[: m.start()]))
                return Intent(RENAME, renames, docs, within=within.group(1) if within else None)
    m = _ARROW.match(text)
    renames = (
        _pairs((*m.groups()[:2], None, None, None, None, *m.groups()[2:], None, None, None, None))
        if m
        else {}
    )
    if renames:
        return Intent(RENAME, renames)
    if _HINTS.search(text):
        return Intent(HINTS)
    if _FSTRINGS.search(text):
        return Intent(FSTRINGS)
    if _LOGGING.search(text):
        return Intent(LOGGING)
    m = _EXTRACT.search(text)
    if m:
        name = m.group(1) or m.group(2)
        return Intent(EXTRACT, function=name if name and _valid(name) else None)
    return Intent(OTHER, source="none")


def vague(instruction: str | None, intent: Intent) -> bool:
    """Worth asking the model: no pattern read it, but it speaks of names or types."""
    return intent.kind == OTHER and bool(_VAGUE.search(instruction or ""))


def _pairs(groups: tuple[str | None, ...]) -> dict[str, str]:
    """Three old slots then three new ones (two groups each: backticked or bare), paired
    in order; a new slot past the old ones is the sentence going on ("... to Bar and
    update its uses"), not a name."""
    names = [a or b for a, b in zip(groups[::2], groups[1::2], strict=True)]
    old = [g for g in names[:3] if g]
    new = [g for g in names[3:] if g][: len(old)]
    if len(old) != len(new) or not all(map(_valid, old + new)):
        return {}
    pairs = {o: n for o, n in zip(old, new, strict=True) if o != n}
    return pairs if len(pairs) == len(old) else {}


def _valid(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


# what the model fills in when no pattern read the instruction (pedit extract's grammar)
SCHEMA = {
    "type": "object",
    "properties": {
        "kind": {"enum": [RENAME, HINTS, OTHER]},
        "renames": {
            "type": "array",
            "maxItems": 4,
            "items": {
                "type": "object",
                "properties": {
                    "old": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]{0,40}$"},
                    "new": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]{0,40}$"},
                },
                "required": ["old", "new"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["kind", "renames"],
    "additionalProperties": False,
}
ASK = (
    'Classify this request to refactor code. kind: "rename" if it asks to rename identifiers '
    '(then list each old and new name), "hints" if it asks to add type hints or annotations, '
    'else "other" (and no renames).\n\nRequest: {instruction}'
)


def from_extracted(answer: str, instruction: str) -> Intent:
    """The model's JSON answer to ASK as an intent (OTHER if it does not make sense: a
    rename naming nothing, or a name the instruction does not mention)."""
    try:
        data = json.loads(answer)
    except ValueError:
        return Intent(OTHER, source="none")
    kind = data.get("kind")
    if kind == HINTS:
        return Intent(HINTS, source="model")
    if kind != RENAME:
        return Intent(OTHER, source="model")
    renames = {}
    for pair in data.get("renames") or []:
        old, new = pair.get("old", ""), pair.get("new", "")
        # the model may only pick names the user wrote: it reads, it does not invent
        if _valid(old) and _valid(new) and old != new and re.search(rf"\b{old}\b", instruction) \
                and re.search(rf"\b{new}\b", instruction):  # fmt: skip
            renames[old] = new
    if not renames:
        return Intent(OTHER, source="model")
    return Intent(RENAME, renames, bool(_DOCS.search(instruction)), source="model")
