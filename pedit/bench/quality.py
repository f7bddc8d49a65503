"""How right a `fix` is: the output scored against the known correct text.

Texts are compared as word tokens: a word (letters, digits, inner apostrophes) or one
punctuation mark; whitespace is not a token, so a missing comma costs one token and
spacing is judged apart (layout, below).

- The gold edits are the differences source -> reference (each introduced error, as
  SOURCES.md lists them). An error is *fixed* when the output, between the nearest
  tokens that all three texts share on either side of it, reads as the reference does.
- Every other changed token of the output (source -> output differences outside the
  fixed errors) is *collateral*, and so is each line whose words the output kept but not
  their spacing or line breaks (`layout_changes`: a change of layout is a wrong change,
  though the score, of words, does not see it).
- recall = fixed / errors; precision = fixed / (fixed + collateral), 1 when nothing
  changed; F0.5 = 1.25 P R / (0.25 P + R) (precision weighs more, as in grammatical-
  error-correction practice).
- score = 1 - d(output, reference) / d(source, reference), d the token-level edit
  (Levenshtein) distance: 1 a perfect fix, 0 no change, below 0 worse than the source
  ("made worse").
- skeleton pieces changed: the source's skeleton (tools/skeleton: links' targets, code,
  markup) lost, changed or added in the output, piece by piece (skeleton.changed); a fix
  must change none.
- Per kind of error (corpus.KINDS): an error's kind is its annotation's (SOURCES.md), a
  collateral change's the one its shape shows (`change_kind`: "an" for "a" is a/an, a
  word's case alone capital, a word spelt as another variety of English spells it
  variety, ...; "other" when none does), so
      recall_k = fixed_k / errors_k,  precision_k = fixed_k / (fixed_k + collateral_k).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import asdict, dataclass, field

from ..tools import dialect, skeleton

_TOKEN = re.compile(r"\w+(?:['\u2019]\w+)*|[^\w\s]")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})", re.M)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def distance(a: list[str], b: list[str]) -> int:
    """Levenshtein distance between two token lists (insert, delete, substitute: 1 each)."""
    if len(a) < len(b):
        a, b = b, a
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def _equal_map(a: list[str], b: list[str]) -> dict[int, int]:
    """Index in `b` of every token of `a` that the alignment a -> b keeps."""
    out: dict[int, int] = {}
    for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            out[block.a + k] = block.b + k
    return out


@dataclass(frozen=True)
class FixScore:
    errors: int
    fixed: int
    collateral: int  # changed tokens that fix no error
    score: float
    missed: tuple[str, ...]  # the reference's reading of each error left unfixed
    stray_fence: bool  # the output has fence lines the source does not
    kinds: dict[str, list[int]] = field(default_factory=dict)  # kind: [errors, fixed, collateral]
    skeleton_changed: int = 0  # pieces of the source's skeleton lost, changed or added (tools/skeleton)

    @property
    def recall(self) -> float:
        return self.fixed / self.errors if self.errors else 1.0

    @property
    def precision(self) -> float:
        changed = self.fixed + self.collateral
        return self.fixed / changed if changed else 1.0

    @property
    def f05(self) -> float:
        p, r = self.precision, self.recall
        return 1.25 * p * r / (0.25 * p + r) if p + r else 0.0

    @property
    def worse(self) -> bool:
        return self.score < 0

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(recall=self.recall, precision=self.precision, f05=self.f05, worse=self.worse)
        return d


def score_fix(
    source: str, output: str, reference: str, kinds: list[tuple[str, str]] = (), name: str = ""
) -> FixScore:
    """`kinds`: (the error as the source has it, its kind) for each annotated error; `name`:
    the file's, whose kind says its skeleton (none counted without it)."""
    src, out, ref = tokens(source), tokens(output), tokens(reference)
    starts = [m.start() for m in _TOKEN.finditer(source)]
    where = [(source.find(e), source.find(e) + len(e), k) for e, k in kinds if e in source]
    per: dict[str, list[int]] = {}
    to_out, to_ref = _equal_map(src, out), _equal_map(src, ref)
    ops = difflib.SequenceMatcher(None, src, ref, autojunk=False).get_opcodes()
    gold = [(i1, i2) for tag, i1, i2, _, _ in ops if tag != "equal"]
    fixed, missed, covered = 0, [], []  # covered: source windows of the fixed errors
    for i1, i2 in gold:
        left, right = i1 - 1, i2
        while left >= 0 and not (left in to_out and left in to_ref):
            left -= 1
        while right < len(src) and not (right in to_out and right in to_ref):
            right += 1
        o1 = to_out[left] + 1 if left >= 0 else 0
        o2 = to_out[right] if right < len(src) else len(out)
        r1 = to_ref[left] + 1 if left >= 0 else 0
        r2 = to_ref[right] if right < len(src) else len(ref)
        at = starts[min(i1, len(starts) - 1)] if starts else 0
        kind = next((k for a, b, k in where if a <= at < b or (i1 == i2 and a <= at <= b)), "other")
        counts = per.setdefault(kind, [0, 0, 0])
        counts[0] += 1
        if out[o1:o2] == ref[r1:r2]:
            fixed += 1
            counts[1] += 1
            covered.append((left, right))
        else:
            missed.append(" ".join(ref[max(r1 - 2, 0) : r2 + 2]))
    collateral = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, src, out, autojunk=False).get_opcodes():
        if tag != "equal" and not any(lo < i1 and i2 <= hi for lo, hi in covered):
            collateral += max(i2 - i1, j2 - j1)
            kind = change_kind(src, i1, i2, out[j1:j2])
            per.setdefault(kind, [0, 0, 0])[2] += max(i2 - i1, j2 - j1)
    moved = layout_changes(source, output)
    if moved:
        collateral += moved
        per.setdefault("layout", [0, 0, 0])[2] += moved
    base = distance(src, ref)
    score = 1 - distance(out, ref) / base if base else float(out == ref) * 2 - 1
    stray = len(FENCE.findall(output)) != len(FENCE.findall(source))
    return FixScore(
        errors=len(gold), fixed=fixed, collateral=collateral, score=score, missed=tuple(missed),
        stray_fence=stray, kinds=per, skeleton_changed=skeleton.changed(source, output, name) if name else 0,
    )  # fmt: skip


def layout_changes(source: str, output: str) -> int:
    """Lines whose words the output kept but not their spacing or breaks ("n//d" ->
    "n // d", a leading space dropped, a paragraph re-wrapped, a blank line added or
    removed): each a wrong change, as a word changed for nothing is. Lines are aligned by
    difflib; a changed run whose words are all kept counts its lines, any other run is
    aligned again by each line's words, and counts the lines kept with other spacing and
    the blank lines added or removed."""
    a, b = source.splitlines(), output.splitlines()
    n = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        x, y = a[i1:i2], b[j1:j2]
        if tag == "equal":
            continue
        if any(line.strip() for line in x) and tokens("\n".join(x)) == tokens("\n".join(y)):
            n += max(len(x), len(y))
            continue
        keys = [tuple(tokens(line)) for line in x], [tuple(tokens(line)) for line in y]
        for t, p1, p2, q1, q2 in difflib.SequenceMatcher(None, *keys, autojunk=False).get_opcodes():
            if t == "equal":
                n += sum(u != v for u, v in zip(x[p1:p2], y[q1:q2], strict=True))
            else:
                n += sum(not line.strip() for line in x[p1:p2] + y[q1:q2])
    return n


ARTICLES = {"a", "an", "the"}
PREPOSITIONS = {
    "of", "in", "on", "at", "to", "for", "from", "with", "by", "about", "into", "onto", "over", "under",
    "between", "among", "through",
}  # fmt: skip
HOMOPHONES = [set(s.split()) for s in (
    "its it's", "their there they're", "your you're", "then than", "to too two", "lose loose",
    "affect effect", "whose who's", "were where we're", "hear here", "know no", "new knew",
)]  # fmt: skip


def change_kind(src: list[str], i1: int, i2: int, new: list[str]) -> str:
    """The kind of error a change of src[i1:i2] into `new` would mend, from its shape
    alone: what the quality report files a collateral change under."""
    old = src[i1:i2]
    low_old, low_new = [w.lower() for w in old], [w.lower() for w in new]
    if low_old == low_new:
        return "capital"
    if (low_old, low_new) in ((["a"], ["an"]), (["an"], ["a"])):
        return "a/an"
    if not new and len(old) == 1 and (i1 and src[i1 - 1].lower() == low_old[0]
                                      or i2 < len(src) and src[i2].lower() == low_old[0]):  # fmt: skip
        return "doubled word"
    if set(low_old + low_new) <= ARTICLES:
        return "article"
    if not any(w[:1].isalnum() for w in old + new):
        return "punctuation"
    if len(old) == len(new) == 1:
        a, b = low_old[0], low_new[0]
        if any({a, b} <= s for s in HOMOPHONES):
            return "homophone"
        if a.replace("'", "").replace("\u2019", "") == b.replace("'", "").replace("\u2019", ""):
            return "apostrophe"
        if a in PREPOSITIONS and b in PREPOSITIONS:
            return "preposition"
        if _varieties(a, b):
            return "variety"
        return "word"
    return "other"


def _varieties(a: str, b: str) -> bool:
    """Are a and b one word as two varieties of English spell it (colour, color; grey,
    gray; demeanour, demeanor)? American spells exactly one of them so, and another
    variety the other (tools/dialect.py's Harper spellers)."""
    if not (a.isalpha() and b.isalpha()):
        return False
    american = dialect.flagged([a, b], "american")
    if len(american) != 1:
        return False
    (theirs,) = american
    return any(theirs not in dialect.flagged([theirs], name) for name in dialect.NAMES[1:])
