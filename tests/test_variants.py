"""A prompt's variants tokenized by splicing (pedit/engine/variants.py, issue 71): each is
exactly what tokenizing the whole changed prompt gives, on the tiny byte-level BPE and on
the default model's tokenizer; a tokenizer that does not split at lines is found out."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pedit.backends import open_backend
from pedit.engine import variants
from pedit.engine.variants import spliced, splits_at_lines


@pytest.fixture(scope="module")
def backend():
    b = open_backend("reference")
    yield b
    b.close()


FRAME = "<|im_start|>user\nFix it.\n\n```text\n{}```<|im_end|>\n"
WORDS = ["Their", "there", "is", "many", "reasons,", "it's", "a", "-", "#", "`code`", "café", "3", "\"q\"", "."]


def whole(backend, text: str) -> list[int]:
    return backend.tokenize(FRAME.format(text), special=True)


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(st.tuples(st.sampled_from(["", " ", "  "]), st.lists(st.sampled_from(WORDS), max_size=8)),
                   min_size=1, max_size=8),  # fmt: skip
    edits=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 3), st.sampled_from(["", "the ", ",", "X", "\n"])),
                   min_size=1, max_size=8),  # fmt: skip
)
def test_a_spliced_variant_is_the_whole_prompt_tokenized_again(backend, lines, edits):
    text = "".join(lead + " ".join(words) + "\n" for lead, words in lines)
    base = whole(backend, text)
    asked = []
    for at, width, rep in edits:
        s = min(at, len(text))
        asked.append([(s, min(s + width, len(text)), rep)])
    got = spliced(lambda s: backend.tokenize(s), [backend.token_bytes(t) for t in base], base, text, asked)
    for edit, tokens in zip(asked, got, strict=True):
        (s, e, rep), = edit
        if tokens is not None:
            assert tokens == whole(backend, text[:s] + rep + text[e:])


def test_the_tiny_tokenizer_splits_at_lines_and_one_that_adds_a_space_does_not(backend):
    assert splits_at_lines(backend)

    class Spaced:  # SentencePiece's way: a space before a text's first word
        def tokenize(self, text, special=False):
            return backend.tokenize(" " + text)

        def token_bytes(self, t):
            return backend.token_bytes(t)

    assert not splits_at_lines(Spaced())


def test_a_text_found_twice_in_the_prompt_is_not_spliced(backend):
    text = "the cat sat.\n"
    base = backend.tokenize(f"{text}\n{text}")
    got = spliced(backend.tokenize, [backend.token_bytes(t) for t in base], base, text, [[(4, 7, "dog")]])
    assert got == [None]
    assert variants.splits_at_lines(backend)


def test_a_word_swapped_in_a_middle_line_is_spliced(backend):
    text = "First line here.\nTheir is many reasons.\nLast line.\n"
    base = whole(backend, text)
    got = spliced(backend.tokenize, [backend.token_bytes(t) for t in base], base, text, [[(17, 22, "There")]])
    assert got == [whole(backend, text.replace("Their", "There"))]


def test_the_default_models_variants_of_real_paragraphs_are_spliced_exactly(default_model_env):
    """The default model's tokenizer (Qwen2's byte-level BPE), on the swaps a fix scores in
    make demo's essay and a Walden paragraph: every spliced variant is its whole prompt
    tokenized again, and all but the last line's (no line break after it) are spliced."""
    from dataclasses import replace
    from pathlib import Path

    from pedit import models
    from pedit.engine.prompt import prompt_tokens
    from pedit.request import EditRequest
    from pedit.tools import confusables, fix
    from pedit.tools.options import ToolOptions

    gen = models.load(models.DEFAULT_MODEL, n_ctx=2048)
    try:
        while True:
            next(gen)
    except StopIteration as done:
        backend = done.value
    root = Path(__file__).parent.parent
    texts = [(root / "examples" / "essay.md").read_text(), (root / "pedit/bench/corpus/walden.txt").read_text()]
    assert splits_at_lines(backend)
    read = joined = 0
    for text in texts:
        req = EditRequest(text, "Fix the grammar.", "essay.md", None)
        swaps = fix.swaps_of(req, ToolOptions())
        base = prompt_tokens(backend, req)
        got = spliced(backend.tokenize, [backend.token_bytes(t) for t in base], base, text, [w.edits() for w in swaps])
        for w, tokens in zip(swaps, got, strict=True):
            read += 1
            if tokens is not None:
                joined += 1
                assert tokens == prompt_tokens(backend, replace(req, text=confusables.apply(text, [w])))
    assert read > 200 and joined == read
    backend.close()
