"""Drafters, unit-tested on plain lists of ints."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pedit.engine.drafters.compose import NO_DRAFT, Composite
from pedit.engine.drafters.ngram import NGramDrafter
from pedit.engine.drafters.predicted import PredictedOutput
from pedit.engine.drafters.prompt_lookup import PromptLookup

# --- prompt lookup ----------------------------------------------------------------------


def test_lookup_prefers_the_longest_match():
    #        0  1  2  3  4  5  6  7  8  9 10 11 12
    ctx = [1, 2, 3, 40, 41, 9, 3, 50, 51, 9, 1, 2, 3]
    # the 3-gram (1, 2, 3) occurred at 0..2 and was followed by 40, 41; the 1-gram (3) last
    # occurred at 6, followed by 50: the longer context wins.
    assert PromptLookup().propose(ctx, 2) == [40, 41]


def test_lookup_prefers_the_most_recent_of_equal_matches():
    ctx = [7, 8, 1, 7, 8, 2, 7, 8]
    assert PromptLookup(max_n=2).propose(ctx, 1) == [2]


def test_lookup_falls_back_to_shorter_ngrams_and_respects_k():
    ctx = [5, 6, 7, 8, 9, 1, 2, 9, 3, 3, 9]  # (3, 9) never seen before; (9) last at 7
    assert PromptLookup(max_n=3).propose(ctx, 3) == [3, 3, 9]
    assert PromptLookup(max_n=3).propose(ctx, 1) == [3]
    assert PromptLookup(max_n=3, min_n=2).propose(ctx, 3) == []
    assert PromptLookup().propose([1, 2, 3], 4) == []
    assert PromptLookup().propose(ctx, 0) == []


@settings(max_examples=60, deadline=None)
@given(seq=st.lists(st.integers(0, 4), min_size=2, max_size=60), k=st.integers(1, 6))
def test_lookup_incremental_equals_fresh(seq, k):
    """Fed token by token (as in decoding), the index gives what a fresh one gives."""
    grown = PromptLookup()
    for end in range(2, len(seq) + 1):
        assert grown.propose(seq[:end], k) == PromptLookup().propose(seq[:end], k)


# --- adaptive n-grams -------------------------------------------------------------------


def test_ngram_largest_context_decides():
    # after (1, 2) came 3 and then 4; after (9, 1, 2) came 5: the 4-gram (9, 1, 2) -> 5
    # is more specific than the 3-gram (1, 2) -> 4 (its latest continuation).
    ctx = [1, 2, 3, 1, 2, 4, 9, 1, 2, 5, 8, 9, 1, 2]
    assert NGramDrafter(n=4, threshold=0.0).propose(ctx, 1) == [5]
    assert NGramDrafter(n=3, threshold=0.0).propose(ctx, 1) == [5]  # (1,2) -> 3, 4, 5: latest


def test_ngram_drafts_on_its_own_tokens_and_adapts():
    d = NGramDrafter(n=3, threshold=0.0)
    ctx = [1, 2, 3, 4, 5, 1, 2]
    assert d.propose(ctx, 4) == [3, 4, 5, 1]
    ctx += [7, 7, 1, 2]  # the model now continued (1, 2) with 7: tables updated
    assert d.propose(ctx, 1) == [7]  # (1, 2) -> {3: 1, 7: 1}: the latest of the tied wins


def test_ngram_probability_threshold_stops_the_draft():
    ctx = [1, 2, 3, 1, 2, 4, 1, 2, 3, 0, 3, 9, 0, 1, 2]
    # (1, 2) -> 3 twice, 4 once: p = 2/3; then (2, 3) -> 1 or 0, tied, the latest (0)
    # wins: p = 2/3 * 1/2 = 1/3; then (3, 0) -> 3, (0, 3) -> 9, (3, 9) -> 0 are certain.
    assert NGramDrafter(n=3, threshold=0.4).propose(ctx, 5) == [3]
    assert NGramDrafter(n=3, threshold=0.3).propose(ctx, 5) == [3, 0, 3, 9, 0]
    assert NGramDrafter(n=3, threshold=0.7).propose(ctx, 5) == []


@settings(max_examples=60, deadline=None)
@given(seq=st.lists(st.integers(0, 3), min_size=2, max_size=50), k=st.integers(1, 5))
def test_ngram_incremental_equals_fresh(seq, k):
    grown = NGramDrafter(n=4, threshold=0.1)
    for end in range(2, len(seq) + 1):
        assert grown.propose(seq[:end], k) == NGramDrafter(n=4, threshold=0.1).propose(seq[:end], k)


# --- predicted output -------------------------------------------------------------------

PROMPT = [900, 901, 902]
FILE = list(range(100, 160))  # 60 distinct tokens


def follow(draft: list[int], target: list[int], k: int = 8) -> list[bool]:
    """Drive a PredictedOutput as if the model wrote `target`: before each target token,
    did the drafter's first proposed token equal it?"""
    d = PredictedOutput(draft, start=len(PROMPT))
    ctx, hits = list(PROMPT), []
    for tok in target:
        proposal = d.propose(ctx, k)
        hits.append(bool(proposal) and proposal[0] == tok)
        ctx.append(tok)
    return hits


def misses_after(hits: list[bool], start: int) -> int:
    """Tokens from `start` until the drafter predicts correctly again."""
    n = 0
    for hit in hits[start:]:
        if hit:
            return n
        n += 1
    return n


def test_unchanged_file_is_predicted_entirely():
    d = PredictedOutput(FILE, start=len(PROMPT))
    assert d.propose(PROMPT, 10) == FILE[:10]
    assert all(follow(FILE, FILE))


def test_resync_after_edits_anywhere_takes_a_handful_of_tokens():
    for at in (0, 1, 30, 58, 59):
        inserted = FILE[:at] + [7, 8] + FILE[at:]
        deleted = FILE[:at] + FILE[at + 3 :]
        replaced = FILE[:at] + [7, 8, 9] + FILE[at + 3 :]
        for target, edit_len in ((inserted, 2), (deleted, 0), (replaced, 3)):
            hits = follow(FILE, target)
            assert all(hits[:at])
            if at + edit_len < len(target):
                # the edited tokens are new text; after them, at most one token to re-sync
                assert misses_after(hits, at + edit_len) <= 1, (at, target[at : at + 6])
            assert sum(not h for h in hits) <= edit_len + 2


def test_repeated_lines_resume_at_the_occurrence_after_the_cursor():
    line = [1, 2, 3, 4, 10]  # a line that occurs three times
    draft = [50, 51] + line + [60, 61] + line + [70, 71] + line + [80]
    # the model changes 60 -> 65 in the middle block, then copies on
    target = [50, 51, *line, 65, 61, *line, 70, 71, *line, 80]
    d = PredictedOutput(draft, start=0)
    ctx = target[: 2 + len(line) + 2]  # up to and including the replaced 65, 61
    assert d.propose(ctx, 3) == [1, 2, 3]  # resumed right after 61 (second block)
    assert d.cursor == draft.index(61) + 1


def test_far_jumps_need_a_longer_match():
    draft = [1, 2, 3] + list(range(100, 180)) + [5, 6, 7, 8]
    d = PredictedOutput(draft, start=0, window=16, far_match=3)
    assert d.propose([1, 2, 3, 99, 7], 2) == []  # one token (7) far ahead: not enough
    d = PredictedOutput(draft, start=0, window=16, far_match=3)
    assert d.propose([1, 2, 3, 99, 5, 6, 7], 2) == [8]  # three tokens: jump


def test_preamble_and_extra_fence_before_the_file():
    fence = [11, 12, 13]  # e.g. "```", "python", "\n"
    hits = follow(FILE, fence + FILE)
    assert misses_after(hits, len(fence)) <= 1
    assert sum(not h for h in hits) <= len(fence) + 1


def test_token_boundary_difference_at_an_edit():
    # the draft spells a word as one token (120), the model as two (500, 501) and carries on
    target = FILE[:20] + [500, 501] + FILE[21:]
    hits = follow(FILE, target)
    assert misses_after(hits, 22) <= 1


# --- composition ------------------------------------------------------------------------


class Fixed:
    def __init__(self, name, tokens):
        self.name, self.tokens = name, tokens
        self.label, self.priors = name, {name: (1.0, 1.0)}

    def propose(self, context, k):
        return self.tokens[:k]


def test_composite_takes_the_primary_when_it_has_a_draft():
    value = {"predicted": 0.1, "lookup": 5.0, "ngram": 9.0}
    c = Composite(
        [Fixed("predicted", [1, 2]), Fixed("lookup", [3]), Fixed("ngram", [4])],
        lambda s, n: value[s],
        primary=True,
    )
    draft = c.propose([0], 4)
    assert (draft.tokens, draft.source) == ([1, 2], "predicted")


def test_composite_fills_in_with_the_most_valuable_proposal():
    value = {"predicted": 0.0, "lookup": 1.0, "ngram": 2.0}
    c = Composite(
        [Fixed("predicted", []), Fixed("lookup", [3]), Fixed("ngram", [4])],
        lambda s, n: value[s],
        primary=True,
    )
    assert c.propose([0], 4).source == "ngram"
    assert c.propose([0], 0) == NO_DRAFT
    assert Composite([Fixed("lookup", [])], lambda s, n: 1.0).propose([0], 3) == NO_DRAFT


def test_of_the_predicted_variants_the_one_in_sync_longest_drafts():
    """A tool's edit the model refuses: the file's own variant drafts on at once, in sync,
    where the tool's alone has nothing to propose until it re-syncs."""
    edited = FILE[:20] + [7] + FILE[21:]  # the tool's edit at 20
    tool, file = PredictedOutput(edited, start=len(PROMPT)), PredictedOutput(FILE, start=len(PROMPT))
    c = Composite([tool, file, PromptLookup()], lambda s, n: 1.0, primary=2)
    assert c.primary == 2
    assert c.propose(PROMPT + FILE[:10], 8).tokens == FILE[10:18]  # both in sync: the first
    assert (tool.streak, file.streak) == (10, 10)
    wrote = PROMPT + FILE[:21]  # the model wrote the file's token where the tool edited it
    proposals = c.propose_all(wrote, 8)
    assert proposals[0].tokens == FILE[21:29] and proposals[0].source == "predicted"
    assert [p.tokens for p in proposals[1:]] == [[], []]  # the others are not asked
    assert (tool.streak, file.streak) == (0, 21)
    alone = PredictedOutput(edited, start=len(PROMPT))
    alone.propose(PROMPT + FILE[:10], 8)
    assert alone.propose(wrote, 8) == []  # alone: nothing until a re-sync


def test_a_variant_group_with_nothing_to_propose_lets_the_others_fill_in():
    value = {"lookup": 1.0, "ngram": 2.0}
    group = [Fixed("predicted", []), Fixed("predicted", [])]
    c = Composite([*group, Fixed("lookup", [3]), Fixed("ngram", [4])], lambda s, n: value[s], primary=2)
    assert c.propose([0], 4).source == "ngram"
    assert len(c.propose_all([0], 4)) == 4


# --- learned substitutions ----------------------------------------------------------------


def drive(d: PredictedOutput, target: list[int], k: int = 8) -> list[bool]:
    """As `follow`, on a drafter built by the caller."""
    ctx, hits = [], []
    for tok in target:
        proposal = d.propose(ctx, k)
        hits.append(bool(proposal) and proposal[0] == tok)
        ctx.append(tok)
    return hits


X, COUNT = 5, 6
# a "file" where the name X occurs five times, among distinct tokens
RENAME_FILE = [
    100,
    X,
    101,
    102,
    103,
    104,
    X,
    105,
    106,
    107,
    108,
    109,
    X,
    110,
    111,
    112,
    113,
    X,
    114,
    115,
    116,
    X,
    117,
]


def test_a_rename_is_missed_once_then_drafted_at_every_occurrence():
    target = [COUNT if t == X else t for t in RENAME_FILE]
    hits = drive(PredictedOutput(RENAME_FILE, start=0), target)
    where = [i for i, t in enumerate(RENAME_FILE) if t == X]
    assert not hits[where[0]]  # the first occurrence is the model's to write
    assert all(hits[i] for i in where[1:])  # every later one is drafted as renamed
    # the model's own token there, and the one after it that re-syncs the drafter
    assert sum(not h for h in hits) == 2
    # without learning, every occurrence costs the same two
    plain = drive(PredictedOutput(RENAME_FILE, start=0, learn=False), target)
    assert sum(not h for h in plain) == 2 * len(where)


def test_a_type_hint_insertion_is_learned_on_the_token_before_it():
    a, colon, flt, close, defn = 7, 8, 9, 10, 11
    draft = [
        defn,
        20,
        21,
        a,
        close,
        30,
        31,
        32,
        defn,
        40,
        21,
        a,
        close,
        50,
        51,
        52,
        defn,
        60,
        21,
        a,
        close,
        70,
    ]
    target = []
    for t in draft:
        target += [a, colon, flt] if t == a else [t]
    hits = drive(PredictedOutput(draft, start=0), target)
    firsts = [i for i, t in enumerate(target) if t == colon]
    assert not hits[firsts[0]] and all(hits[i] for i in firsts[1:])
    assert all(hits[firsts[1] :])  # the rest, hints included, is drafted right


def test_a_learned_substitution_does_not_apply_inside_a_longer_word():
    texts = {
        1: b"def",
        2: b" f",
        3: b"(",
        4: b"x",
        5: b")",
        6: b" count",
        7: b" ma",
        8: b" =",
        9: b" 1",
        10: b"\n",
    }
    texts |= {11: b"count", 12: b" y"}
    draft = [1, 2, 3, 4, 5, 10, 7, 4, 8, 9, 10, 12, 8, 4, 10]  # def f(x)\n max = 1\n y = x\n
    #         "x" alone          "max": x continues " ma"    "x" alone again
    target = [1, 2, 3, 11, 5, 10, 7, 4, 8, 9, 10, 12, 8, 11, 10]  # the model renames x only as a word
    d = PredictedOutput(draft, start=0, token_bytes=texts.__getitem__)
    hits = drive(d, target)
    assert d.rules and list(d.rules.values())[0].new == (11,)
    assert hits[7]  # inside " max": the file's own token, not the rename
    assert hits[13]  # the word x again: renamed
    # without the boundary check the rule would have been drafted inside " max"
    blind = PredictedOutput(draft, start=0)
    assert not drive(blind, target)[7]


def test_a_rejected_learned_draft_falls_back_to_the_file_and_is_forgotten_after_two():
    target = [COUNT if t == X else t for t in RENAME_FILE[:6]] + RENAME_FILE[6:]  # renamed once only
    d = PredictedOutput(RENAME_FILE, start=0)
    hits = drive(d, target)
    where = [i for i, t in enumerate(RENAME_FILE) if t == X]
    assert [hits[i] for i in where] == [False, False, False, True, True]  # wrong twice, then forgotten
    assert not d.rules
    # each wrong learned draft was a single token: an unproven rule risks only its own tokens
    d2 = PredictedOutput(RENAME_FILE, start=0)
    ctx = target[: where[1]]
    for i in range(len(ctx)):
        d2.propose(ctx[:i], 8)
    assert d2.propose(ctx, 8) == [COUNT]


def test_keep_bias_cursor_does_not_learn():
    target = [COUNT if t == X else t for t in RENAME_FILE]
    assert sum(not h for h in drive(PredictedOutput(RENAME_FILE, start=0, learn=False), target)) == 10
