"""GLEU (pedit/bench/gleu.py): the field's score of a correction against a human one, by
its definition's counts: a hand-computed case, its bounds, and the penalty for an error
left as it was."""

from __future__ import annotations

import pytest

from pedit.bench import gleu

SOURCE = "a b c d e f g h i"
REFERENCE = "a b c d X f g h i"  # the correction: e -> X


def test_a_wrong_correction_scores_its_hand_counted_gleu():
    # n = 1..4: matches 8/9, 6/8, 4/7, 2/6 (no n-gram of the source that the reference
    # dropped is in the output), lengths equal (no brevity penalty)
    assert gleu.counts(SOURCE, "a b c d Y f g h i", REFERENCE) == [9, 9, 8, 9, 6, 8, 4, 7, 2, 6]
    expected = (8 / 9 * 6 / 8 * 4 / 7 * 2 / 6) ** 0.25
    assert gleu.corpus([(SOURCE, "a b c d Y f g h i", REFERENCE)]) == pytest.approx(expected)


def test_the_error_left_as_it_was_takes_back_its_ngrams():
    # each n-gram through "e" is the source's, not the reference's: it counts against
    assert gleu.counts(SOURCE, SOURCE, REFERENCE) == [9, 9, 7, 9, 4, 8, 1, 7, 0, 6]
    assert gleu.corpus([(SOURCE, SOURCE, REFERENCE)]) == 0.0
    assert gleu.corpus([(SOURCE, REFERENCE, REFERENCE)]) == 1.0


def test_a_corpus_sums_its_counts_before_the_formula_and_a_short_output_pays_for_it():
    one, two = gleu.counts(SOURCE, REFERENCE, REFERENCE), gleu.counts(SOURCE, SOURCE, REFERENCE)
    both = gleu.corpus([(SOURCE, REFERENCE, REFERENCE), (SOURCE, SOURCE, REFERENCE)])
    assert both == pytest.approx(gleu.score([a + b for a, b in zip(one, two, strict=True)]))
    assert 0.0 < both < 1.0
    short = gleu.corpus([(SOURCE, "a b c d X f g h", REFERENCE)])  # every n-gram right, one word short
    precision = 1.0  # 8/8, 7/7, 6/6, 5/5
    assert short == pytest.approx(precision * 2.718281828459045 ** (1 - 9 / 8))
