"""The prompt's shared start kept on disk (pedit/machine/prefixcache.py): a new process (a new
backend) loads it instead of reading it, and the answer is the same tokens as without the
cache, on the reference backend and on llama.cpp (a tiny model); a damaged, truncated or
foreign file is a miss that is read again and rewritten, never a crash or another answer."""

from __future__ import annotations

import pytest
from flat_options import engine_options

from pedit.app import wholefile
from pedit.app.jobs import Job
from pedit.app.options import EngineOptions
from pedit.app.templates import BUILTIN
from pedit.backends import open_backend
from pedit.engine.costmodel import CostModel
from pedit.engine.options import EditOptions
from pedit.errors import RefusedError
from pedit.events import Finished, Prefilled
from pedit.machine import prefixcache
from pedit.models import cache_root
from pedit.tools.options import ToolOptions
from pedit.ui.runs import answer

FLAT = CostModel.table({1: 1.0, 64: 1.5}, 1e-3)
TEXT = "Their is many reason why peoples enjoys reading.\n\nA good book take you to other worlds.\n"


def fix(backend, cache: bool, **kw):
    """`pedit fix` of TEXT in two paragraphs: (text, the runs' Prefilled events, figures)."""
    options = engine_options(cost=FLAT, max_tokens=60, prompt_cache=cache, **kw)
    job = Job(backend, BUILTIN["fix"], None, options, chunk_tokens=12)
    seen, runs = [], []

    def render(events, label):
        evs = list(events)
        seen.extend(e for e in evs if isinstance(e, Prefilled))
        runs.append(evs[-1].stats)
        return evs[-1] if isinstance(evs[-1], Finished) else None

    out = answer(wholefile.rewrite(job, TEXT, "essay.md"), render)
    return out.text, seen, runs


def files(_=None):
    return sorted((cache_root() / "prefixes").glob("*.kv"))


@pytest.fixture
def open_new(tiny_gguf):
    """A new backend each call: what a new process has (an empty cache)."""
    made = []

    def make(kind):
        b = open_backend(kind, tiny_gguf if kind == "llama.cpp" else None, n_ctx=1024)
        made.append(b)
        return b

    yield make
    for b in made:
        b.close()


@pytest.mark.parametrize("kind", ["reference", "llama.cpp"])
@pytest.mark.parametrize("speculate", ["off", "auto"])
def test_the_next_process_loads_the_start_and_writes_the_same_answer(tmp_path, open_new, kind, speculate):
    plain, first_pre, _ = fix(open_new(kind), False, speculate=speculate)
    assert files(tmp_path) == []
    assert first_pre[0].reused == 0 and first_pre[1].reused > 0  # the second paragraph shares the start
    saved, pre1, runs1 = fix(open_new(kind), True, speculate=speculate)
    assert len(files(tmp_path)) == 1
    loaded, pre2, runs2 = fix(open_new(kind), True, speculate=speculate)
    assert saved == plain and loaded == plain  # (exactly: a rewrite's text is its tokens')
    assert pre1[0].reused == 0  # the first time the start is read (and saved)
    stem = pre2[0].reused
    assert stem > prefixcache.SHORTEST and runs2[0].cached_tokens == stem  # then loaded, not read
    assert runs2[0].forward_passes == runs1[0].forward_passes - 1  # the start's own pass is gone


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "foreign"])
def test_a_damaged_or_foreign_file_is_a_miss_and_is_rewritten(tmp_path, open_new, damage):
    plain, _, _ = fix(open_new("reference"), False)
    fix(open_new("reference"), True)
    (path,) = files(tmp_path)
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[-5] ^= 0xFF  # the state's digest no longer matches
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "empty":
        data = bytearray()
    else:  # an entry of another key (another model) under this name
        at = len(prefixcache.MAGIC)
        data[at : at + 32] = bytes(32)
    path.write_bytes(bytes(data))
    again, pre, _ = fix(open_new("reference"), True)
    assert again == plain and pre[0].reused == 0  # read again, the same answer
    assert path.read_bytes() != bytes(data)  # and written whole again
    assert fix(open_new("reference"), True)[1][0].reused > 0


def test_the_cache_keeps_the_newest_files(tmp_path, monkeypatch):
    monkeypatch.setattr(prefixcache, "KEEP", 2)
    b = open_backend("reference")
    for word in ["one", "two", "three"]:
        job = Job(
            b,
            BUILTIN["edit"],
            f"Replace every word with {word}.",
            EngineOptions(edit=EditOptions(cost=FLAT, max_tokens=5)),
        )
        b.truncate(0)
        with pytest.raises(RefusedError):  # cut off by max_tokens: the start was saved before
            answer(wholefile.rewrite(job, TEXT, "essay.md"))
    assert len(files(tmp_path)) == 2


def test_an_unwritable_cache_warns_and_the_run_goes_on(tmp_path):
    b = open_backend("reference")
    stem = b.tokenize("A long enough start of a prompt, twenty tokens or so, more than sixteen.")
    (tmp_path / "ro").write_text("a file where the directory would be")
    lines = []
    got = prefixcache.ready(b, "id", stem, tmp_path / "ro" / "x", warn=lines.append)
    assert got == prefixcache.Ready(loaded=False, read=len(stem)) and list(b.held) == stem
    assert len(lines) == 1 and "prompt cache" in lines[0]


class Reads:
    """A backend's eval calls, as (position, tokens): how a prompt was cut into batches."""

    def __init__(self, backend):
        self.calls, self._eval = [], backend.eval

        def eval(tokens, *, n_logits=1):
            self.calls.append((backend.n_past, tuple(tokens)))
            return self._eval(tokens, n_logits=n_logits)

        backend.eval = eval


@pytest.mark.parametrize("cache", [True, False])
def test_a_file_is_read_the_same_way_whatever_ran_before(tmp_path, open_new, cache):
    """On llama.cpp another cut of the prompt into batches can turn a near-tie: a run reads
    its prompt in the same batches after another file (whose prompt shares more than the
    start), after nothing, with and without the prompt cache: the start alone from position
    0 (or loaded), then the rest."""
    first, after = open_new("llama.cpp"), open_new("llama.cpp")
    fresh = Reads(first)
    alone, _, _ = fix(first, cache, spelling=False)
    options = EngineOptions(
        edit=EditOptions(cost=FLAT, max_tokens=20), tools=ToolOptions(spelling=False), prompt_cache=cache
    )
    other = Job(after, BUILTIN["fix"], None, options, chunk_tokens=12)
    with pytest.raises(RefusedError):  # a random model does not close its fence in 20 tokens
        answer(wholefile.rewrite(other, "Some other words here.\n", "essay.md"))
    later = Reads(after)
    again, _, _ = fix(after, cache, spelling=False)
    assert again == alone
    # after the start (read at position 0, or loaded): the prompts' reads, not the passes
    prompts = [c for c in fresh.calls if c[0] > 0 and len(c[1]) > 8]
    assert prompts and prompts == [c for c in later.calls if c[0] > 0 and len(c[1]) > 8][-len(prompts) :]
    assert prompts[0][0] == first.first_read  # each paragraph's rest is read from the start's end
    assert after.first_read == first.first_read > 0  # the start, read alone (or loaded)


def test_first_read_says_how_many_tokens_one_eval_from_the_start_read(open_new):
    for b in (open_new("reference"), open_new("llama.cpp")):
        toks = b.tokenize("one two three four five six")
        b.eval(toks[:4])
        b.eval(toks[4:])
        assert b.first_read == 4  # the later eval does not change it
        b.truncate(5)
        assert b.first_read == 4
        b.truncate(3)
        assert b.first_read == 0  # part of that read is gone: the rest was read in a longer batch
        b.truncate(0)
        b.eval(toks)
        state = b.save_state()
        b.truncate(0)
        b.load_state(toks, state)
        assert b.first_read == len(toks)  # a saved reading of them all
