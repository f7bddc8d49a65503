"""The token table cached on disk (pedit/machine/vocabulary.py): the same bytes as the
backend gives, read back without asking the backend; a damaged entry is built again; a
cache that cannot be written costs a warning, never the table; a grammar's tokenizer built
from it masks as one built from the backend does."""

from __future__ import annotations

import numpy as np

from pedit.backends.reference import ReferenceBackend
from pedit.engine import grammar
from pedit.engine.grammar import Constraint, Matcher
from pedit.machine import vocabulary


class Counting(ReferenceBackend):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.asked = 0

    def token_bytes(self, token):
        self.asked += 1
        return super().token_bytes(token)


def test_the_table_is_the_backends_and_read_back_from_disk():
    first = Counting()
    want = [first.token_bytes(i) for i in range(first.n_vocab)]
    first.asked = 0
    assert vocabulary.table(first) == want and first.asked == first.n_vocab
    again = Counting()
    assert vocabulary.table(again) == want and again.asked == 0  # from the cache
    assert vocabulary.path_for(again).read_bytes().startswith(vocabulary.MAGIC)


def test_a_damaged_entry_is_built_again():
    backend = Counting()
    want = vocabulary.table(backend)
    where = vocabulary.path_for(backend)
    for damaged in (b"", where.read_bytes()[:-1], b"PVOC1" + b"\xff" * 40, where.read_bytes() + b"x"):
        where.write_bytes(damaged)
        backend.asked = 0
        assert vocabulary.table(backend) == want and backend.asked == backend.n_vocab
        assert vocabulary.table(backend) == want  # and written again


def test_a_cache_that_cannot_be_written_costs_a_warning(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    said = []
    backend = Counting()
    assert vocabulary.table(backend, warn=said.append) == [
        backend.token_bytes(i) for i in range(backend.n_vocab)
    ]
    assert len(said) == 1 and said[0].startswith("cannot write the token table cache (")


def test_a_tokenizer_from_the_cached_table_masks_as_the_backends_does():
    plain, cached = ReferenceBackend(), ReferenceBackend()
    grammar.provide_tokens(cached, vocabulary.table)
    text = grammar.grammar(Constraint("regex", r"(yes|no|maybe)[a-z ]{0,12}\."))
    a, b = Matcher(grammar.tokenizer_for(plain), text), Matcher(grammar.tokenizer_for(cached), text)
    for token in plain.tokenize("maybe so."):
        rows = [m.mask(np.zeros(plain.n_vocab)) for m in (a, b)]
        assert np.array_equal(np.isinf(rows[0]), np.isinf(rows[1]))
        a.consume([token])
        b.consume([token])
