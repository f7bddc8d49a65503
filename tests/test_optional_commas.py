"""Issue 70: a comma the answer put after a short phrase of time or place ("Last weekend,")
is taken out unless the file or the draft has it (commas.optional_added)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pedit.tools.commas import optional_added


def test_a_short_phrase_of_time_or_place_loses_the_comma_the_answer_added():
    got = optional_added(
        "Last weekend my friends and I go to cinema. On fridays we meet.\n",
        None,
        "Last weekend, my friends and I went to the cinema. On Fridays, we meet.\n",
    )
    assert got == "Last weekend my friends and I went to the cinema. On Fridays we meet.\n"
    assert optional_added("In the future I want it.\n", "x", "In the future, I want it.\n") == "In the future I want it.\n"


def test_a_clause_a_linking_phrase_a_long_phrase_and_the_files_commas_stay():
    for source, output in [
        ("After I finished university I find a job.", "After I finished university, I found a job."),
        ("After the lesson finished we left.", "After the lesson finished, we left."),  # a clause
        ("In my opinion this is bad.", "In my opinion, this is bad."),  # a linking phrase
        ("However we left.", "However, we left."),
        ("After a long discussion we agreed.", "After a long discussion, we agreed."),  # 4 words
        ("We left early, in the end we won.", "We left early, in the end, we won."),  # not a sentence's start
        ("Last weekend, we left.", "Last weekend, we left."),  # the file's own
    ]:
        assert optional_added(source, None, output) == output


def test_the_drafts_comma_stays():
    """commas.candidates's comma, scored and taken into the draft, is the tools' choice."""
    output = "In my team, we review code.\n"
    assert optional_added("In my team we review code.\n", "In my team, we review code.\n", output) == output
    assert optional_added("In my team we review code.\n", "In my team we review code.\n", output) == (
        "In my team we review code.\n"
    )


WORDS = st.sampled_from(["Last", "week", "in", "the", "morning", "we", "left", "On", "Fridays", "I", "go", "."])


@settings(max_examples=200, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=12), st.lists(st.integers(0, 12), max_size=4))
def test_it_only_takes_out_commas_the_source_lacks(words, at):
    """Whatever the texts: the result is the output less some of its commas, and holds at
    least as many commas as the source."""
    source = " ".join(words)
    out_words = list(words)
    for i in sorted(set(at), reverse=True):
        if i < len(out_words):
            out_words[i] += ","
    output = " ".join(out_words)
    got = optional_added(source, None, output)
    assert got.replace(",", "") == output.replace(",", "")
    assert source.count(",") <= got.count(",") <= output.count(",")
