"""The author's English (tools/dialect.py): the variety a document is spelt in, and a fix
that never corrects a word right in it (issue 39: "organised" became "organized")."""

from __future__ import annotations

import pytest

from pedit.bench.corpus import load_tasks
from pedit.tools import dialect, grammarcheck
from pedit.tools.spelling import spellcheck

BRITISH = "The colour of the centre was organised by the neighbours, whose behaviour was odd.\n"
AMERICAN = "The color of the center was organized by the neighbors, whose behavior was odd.\n"


def test_the_variety_is_the_one_that_spells_the_most_of_the_document_s_words():
    assert dialect.detect(BRITISH) == "british"
    assert dialect.detect(AMERICAN) == "american"
    assert dialect.detect("Nothing here is spelled two ways.\n") == "american"
    assert dialect.detect("Nothing here is spelt two ways.\n") == "british"  # spelt: British
    # colour and organized: British and Canadian both spell every word so (a tie: the first)
    assert dialect.detect("The colour was organized.\n") == "british"
    # one British word among many American ones: American flags one word the British
    # accept, the British three the Americans accept
    assert dialect.detect("The grey color of the center, a favorite.\n") == "american"
    assert dialect.resolve("canadian", BRITISH) == "canadian"
    assert dialect.resolve("auto", BRITISH) == "british"


def test_a_word_right_in_the_variety_is_not_a_spelling_correction():
    text = "Its behaviour is odd, and teh rest is fine.\n"
    assert spellcheck(text, "a.txt", "british") == "Its behaviour is odd, and the rest is fine.\n"
    assert spellcheck(text, "a.txt", "american") == "Its behavior is odd, and the rest is fine.\n"
    assert spellcheck(text, "a.txt") == spellcheck(text, "a.txt", "american")
    # words pyspellchecker does not know and Harper does are never corrected
    assert spellcheck("A runtime for versioning.\n", "a.md", "american") == "A runtime for versioning.\n"


def test_a_word_replaced_by_one_the_variety_does_not_spell_so_is_put_back():
    source = "Her demeanour and teh colour were grey.\n"
    answer = "Her demeanor and the color were gray.\n"
    # color and gray British does not spell so; demeanor it does, but demeanour is its own
    # spelling (American flags it), and a fix does not respell it American
    assert dialect.keep_words(source, answer, "british") == "Her demeanour and the colour were grey.\n"
    organised = dialect.keep_words("the organised teh\n", "the organized the\n", "british")
    assert organised == "the organised the\n"
    # a word both spell so, replaced by another: a fix's own business
    assert dialect.keep_words("their colour\n", "there colour\n", "british") == "there colour\n"
    assert dialect.keep_words(source, answer, "american") == answer  # American flags the old words
    assert dialect.keep_words(source, source, "british") == source
    # not one word for one: left as the answer has it
    assert dialect.keep_words("a colour\n", "a red color\n", "british") == "a red color\n"


@pytest.mark.parametrize(
    "task, word", [("nat-imperialist", "demeanour"), ("nat-packaging-readme", "behaviour")]
)
def test_the_fix_draft_of_a_commonwealth_text_keeps_its_spelling(task, word):
    t = next(t for t in load_tasks() if t.id == task)
    text = t.text()
    assert dialect.detect(text) == "british" and word in text
    assert word in grammarcheck.draft(text, t.file)
    assert word not in grammarcheck.draft(text, t.file, variety="american")
