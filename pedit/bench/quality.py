"""How right a `fix` is: the output scored against the known correct text.

Texts are compared as word tokens: a word (letters, digits, inner apostrophes) or one
punctuation mark; whitespace is not a token, so a re-wrapped line costs nothing and a
missing comma costs one token.

- The gold edits are the differences source -> reference (each introduced error, as
  SOURCES.md lists them). An error is *fixed* when the output, between the nearest
  tokens that all three texts share on either side of it, reads as the reference does.
- Every other changed token of the output (source -> output differences outside the
  fixed errors) is *collateral*.
- recall = fixed / errors; precision = fixed / (fixed + collateral), 1 when nothing
  changed; F0.5 = 1.25 P R / (0.25 P + R) (precision weighs more, as in grammatical-
  error-correction practice).
- score = 1 - d(output, reference) / d(source, reference), d the token-level edit
  (Levenshtein) distance: 1 a perfect fix, 0 no change, below 0 worse than the source
  ("made worse").
"""

from __future__ import annotations

import difflib
import re
from dataclasses import asdict, dataclass

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


def score_fix(source: str, output: str, reference: str) -> FixScore:
    src, out, ref = tokens(source), tokens(output), tokens(reference)
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
        if out[o1:o2] == ref[r1:r2]:
            fixed += 1
            covered.append((left, right))
        else:
            missed.append(" ".join(ref[max(r1 - 2, 0) : r2 + 2]))
    collateral = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, src, out, autojunk=False).get_opcodes():
        if tag != "equal" and not any(lo < i1 and i2 <= hi for lo, hi in covered):
            collateral += max(i2 - i1, j2 - j1)
    base = distance(src, ref)
    score = 1 - distance(out, ref) / base if base else float(out == ref) * 2 - 1
    stray = len(FENCE.findall(output)) != len(FENCE.findall(source))
    return FixScore(
        errors=len(gold), fixed=fixed, collateral=collateral, score=score, missed=tuple(missed),
        stray_fence=stray,
    )  # fmt: skip
