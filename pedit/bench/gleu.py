"""GLEU: the grammatical-error-correction field's n-gram score of a corrected text against
a human correction (Napoles, Sakaguchi, Post and Tetreault, 2015; the revised form of
2016 that the JFLEG benchmark's `gleu.py` computes), with one reference per text.

For a source S, a hypothesis H (the fix's output) and a reference R, over n = 1..4:

    S\\R      = the n-grams of S that R does not have (all their occurrences)
    match_n  = max(0, |H ∩ R| − |H ∩ (S\\R)|)      (∩: the multiset intersection)
    total_n  = max(0, |H| − n + 1)
    GLEU     = BP · exp(¼ Σ_n log(match_n / total_n)),   BP = min(1, exp(1 − |R| / |H|))

so an n-gram of the source that the correction changed, left in the output, takes back
what it would have earned: GLEU rewards a correction and penalizes an error left as it
was, where BLEU against the reference would reward copying the source. A corpus's GLEU
sums the counts (match_n, total_n, |H|, |R|) over its texts before the formula, as the
reference implementation does; any zero count makes it 0 (no smoothing). Texts are
tokens as the quality report reads them (quality.tokens: a word or one punctuation mark).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from .quality import tokens

ORDER = 4


def _ngrams(words: list[str], n: int) -> Counter:
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def counts(source: str, hypothesis: str, reference: str) -> list[int]:
    """[|H|, |R|, match_1, total_1, ..., match_4, total_4] of one text."""
    s, h, r = tokens(source), tokens(hypothesis), tokens(reference)
    out = [len(h), len(r)]
    for n in range(1, ORDER + 1):
        hn, rn, sn = _ngrams(h, n), _ngrams(r, n), _ngrams(s, n)
        unwanted = Counter({g: c for g, c in sn.items() if g not in rn})  # S\R
        match = sum((hn & rn).values()) - sum((hn & unwanted).values())
        out += [max(0, match), max(0, len(h) - n + 1)]
    return out


def score(stats: list[int]) -> float:
    """GLEU of summed counts (module docstring), between 0 and 1."""
    if any(x == 0 for x in stats):
        return 0.0
    h, r = stats[:2]
    precision = sum(math.log(m / t) for m, t in zip(stats[2::2], stats[3::2], strict=True)) / ORDER
    return math.exp(min(0.0, 1 - r / h) + precision)


def total(each: Iterable[list[int]]) -> list[int]:
    """Texts' counts summed, as a corpus's (the formula is taken of the sums)."""
    out = [0] * (2 + 2 * ORDER)
    for c in each:
        out = [a + b for a, b in zip(out, c, strict=True)]
    return out


def corpus(triples: Iterable[tuple[str, str, str]]) -> float:
    """GLEU of (source, hypothesis, reference) texts taken as one corpus."""
    return score(total(counts(*t) for t in triples))
