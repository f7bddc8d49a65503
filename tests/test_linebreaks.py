"""keep_line_breaks: a fix that joined a hard-wrapped paragraph gets its line breaks back;
only whitespace inside paragraphs ever changes."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from pedit.app.linebreaks import keep_line_breaks

ESSAY = (
    "# Why I like reading\n\n"
    "Their is many reasons why peoples enjoys reading. A good book take you to another world,\n"
    "and it teach you new things every day. When I was a child, my grandmother read to me\n"
    "every night before bed, and I still remember the storys she choose.\n"
)
JOINED = (
    "# Why I like reading\n\n"
    "There are many reasons why people enjoy reading. A good book takes you to another world, and it "
    "teaches you new things every day. When I was a child, my grandmother read to me every night "
    "before bed, and I still remember the stories she chose.\n"
)


def test_a_joined_paragraph_is_wrapped_where_the_source_was():
    assert keep_line_breaks(ESSAY, JOINED) == (
        "# Why I like reading\n\n"
        "There are many reasons why people enjoy reading. A good book takes you to another world,\n"
        "and it teaches you new things every day. When I was a child, my grandmother read to me\n"
        "every night before bed, and I still remember the stories she chose.\n"
    )


def test_what_it_leaves_alone():
    assert keep_line_breaks(ESSAY, ESSAY) == ESSAY
    # a break the output wrote itself, blank lines, and a join that would start a list
    assert keep_line_breaks("a b\nc d\n", "a b\nc\nd\n") == "a b\nc\nd\n"
    assert keep_line_breaks("one\n\ntwo\n", "one two\n") == "one two\n"
    assert keep_line_breaks("item one\n- two\n", "item one - two\n") == "item one - two\n"
    assert keep_line_breaks("", "x\n") == "x\n"
    # indentation of a continuation line comes back with it
    assert keep_line_breaks("- a long\n  item\n", "- a longer item\n") == "- a longer\n  item\n"


WORDS = st.lists(
    st.sampled_from(["the", "a", "cat", "sat", "on", "mat", ",", "1.", "-"]), min_size=1, max_size=30
)


@given(WORDS, WORDS, st.randoms(use_true_random=False))
def test_only_whitespace_changes(src_words, out_words, rnd):
    source = "".join(w + rnd.choice([" ", "\n", " ", "\n\n"]) for w in src_words)
    output = " ".join(out_words) + "\n"
    fixed = keep_line_breaks(source, output)
    assert fixed.split() == output.split()
    assert re.sub(r"\s", "", fixed) == re.sub(r"\s", "", output)
    assert "\n\n" not in fixed.rstrip("\n")
