"""Accepting a rewrite hunk by hunk: every subset of hunks merges to a consistent text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pedit.app.hunks import hunks, merge

lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n", "e", "\n"]), max_size=12).map("".join)


@given(old=lines, new=lines, data=st.data())
def test_all_hunks_give_the_new_text_none_the_old(old, new, data):
    hs = hunks(old, new)
    assert merge(old, hs, range(len(hs))) == new
    assert merge(old, hs, []) == old
    chosen = data.draw(st.sets(st.integers(0, max(0, len(hs) - 1))))
    merged = merge(old, hs, chosen)
    # a partial choice: applying the rest of the hunks on top of it gives the new text
    rest = hunks(merged, new)
    assert merge(merged, rest, range(len(rest))) == new
    assert (old == new) == (hs == [])


def test_two_separate_changes_are_two_hunks():
    old = "one\ntwo\nthree\nfour\nfive\n"
    new = "one\n2\nthree\nfour\nFIVE\n"
    hs = hunks(old, new)
    assert [(h.old, h.new) for h in hs] == [(("two\n",), ("2\n",)), (("five\n",), ("FIVE\n",))]
    assert merge(old, hs, [1]) == "one\ntwo\nthree\nfour\nFIVE\n"
