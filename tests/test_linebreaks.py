"""keep_line_breaks: a fix that joined a hard-wrapped paragraph gets its line breaks back;
only whitespace inside paragraphs ever changes. unwrapped, the other way (a draft of what
such a fix writes): each paragraph on one line, nothing else changed."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from pedit.app.linebreaks import keep_line_breaks, unwrapped

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


def test_unwrapped_writes_each_paragraph_on_one_line_as_a_fix_often_does():
    assert unwrapped(ESSAY) == (
        "# Why I like reading\n\n"
        "Their is many reasons why peoples enjoys reading. A good book take you to another world, and it "
        "teach you new things every day. When I was a child, my grandmother read to me every night "
        "before bed, and I still remember the storys she choose.\n"
    )
    assert keep_line_breaks(ESSAY, unwrapped(ESSAY)) == ESSAY  # the one undoes the other


def test_unwrapped_leaves_every_other_line_break():
    kept = (
        "# A heading\nunder it\n\n"  # a heading's line
        "- an item\n  its continuation\n- two\n\n"  # lists and indented lines
        "> quoted\n> on\n\n| a | b |\n| c | d |\n\n"  # quotes, tables
        "```\ncode on\ntwo lines\n```\n~~~~\nmore\ncode\n~~~~\n\n"  # fenced code
        "a hard break  \nafter two spaces\\\nand a backslash\n1. a number\n<b>html</b>\nx\n"
    )
    assert unwrapped(kept) == kept
    assert unwrapped("") == "" and unwrapped("one\n") == "one\n"
    assert unwrapped("```\nin\ncode\n```\nout\nside\n") == "```\nin\ncode\n```\nout side\n"


@given(WORDS, st.randoms(use_true_random=False))
def test_unwrapped_changes_single_line_breaks_to_spaces_only(words, rnd):
    text = "".join(w + rnd.choice([" ", "\n", " ", "\n\n"]) for w in words)
    joined = unwrapped(text)
    assert joined.split() == text.split()
    assert joined.count("\n\n") == text.count("\n\n")  # paragraphs stay apart
    assert [i for i, c in enumerate(joined) if c != text[i]] == [
        i for i, c in enumerate(text) if c == "\n" and joined[i] == " "
    ]
