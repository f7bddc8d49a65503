"""Forward-pass counts with a scripted model that deterministically writes a target text:
the file with a few edits is produced in close to the minimum number of passes."""

from __future__ import annotations

import difflib
import math

import pytest

from pedit.engine.edit import EditOptions, edit_events
from pedit.engine.prompt import build_prompt
from pedit.request import EditRequest
from scripted import ScriptedBackend

LINES = [f"Line {i}: the quick brown fox number {i} jumps over the lazy dog.\n" for i in range(12)]
FILE = "".join(LINES)


def run(target_text: str, k: int, drafters=("predicted",), speculate="fixed"):
    backend = ScriptedBackend([], 0)
    req = EditRequest(FILE, "Edit it.", "f.txt")
    prompt = build_prompt(backend, req)
    backend.prompt_len = len(prompt.tokens)
    backend.target = backend.tokenize(target_text + prompt.fence)
    events = list(edit_events(backend, req, EditOptions(speculate=speculate, drafters=drafters, draft_max=k)))
    fin = events[-1]
    assert fin.text == target_text  # the model's text, whatever the drafts
    return fin.stats, len(backend.target), backend


@pytest.mark.parametrize("k", [4, 8, 16, 32])
def test_unchanged_file_takes_the_minimum_passes(k):
    stats, length, backend = run(FILE, k)
    # the prefill gives the first token; then each pass emits k accepted drafts and one
    # model token, and the draft ends with the end-of-turn token, confirmed by the model
    assert stats.forward_passes == 1 + math.ceil(length / (k + 1))
    assert stats.rejected_prediction_tokens == 0
    assert stats.accepted_prediction_tokens == length - (stats.forward_passes - 1)
    assert stats.accepted_by_drafter == {"predicted": stats.accepted_prediction_tokens}
    assert backend.calls[1:] and all(n <= k + 1 for n, _ in backend.calls[1:])


EDITS = {
    "replace at start": FILE.replace("Line 0", "Row 0", 1),
    "insert in middle": FILE.replace(LINES[6], LINES[6] + "An inserted line.\n"),
    "delete in middle": FILE.replace(LINES[5], ""),
    "replace at end": FILE.replace("number 11 jumps", "number eleven leaps"),
    "three edits": FILE.replace("Line 2", "Row 2").replace(LINES[7], "").replace("dog.\n", "cat.\n", 1),
}


def new_tokens(backend, old: str, new: str) -> tuple[int, int]:
    """(tokens of `new` that are not copied from `old`, number of edited places)."""
    a, b = backend.tokenize(old), backend.tokenize(new)
    ops = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    return sum(j2 - j1 for _, _, _, j1, j2 in ops), len(ops)


@pytest.mark.parametrize("name", EDITS)
@pytest.mark.parametrize("k", [8, 16])
def test_edited_file_takes_close_to_the_minimum(name, k):
    target = EDITS[name]
    stats, length, backend = run(target, k)
    fresh, places = new_tokens(backend, FILE, target)
    minimum = 1 + math.ceil(length / (k + 1))
    # new text is written one token per pass (nothing can draft it); every edited place
    # costs at most two more passes to re-sync
    assert minimum <= stats.forward_passes <= minimum + fresh + 2 * places
    assert stats.accepted_prediction_tokens >= length - fresh - stats.forward_passes


@pytest.mark.parametrize("name", EDITS)
def test_auto_planner_wastes_little_at_edits(name):
    """With CPU-like costs the planner verifies long drafts where the file is being copied
    and learns not to bet on uncertain re-syncs: rejected tokens stay a small multiple of
    the edits."""
    from pedit.engine.costmodel import CostModel

    cpu = CostModel.table({1: 1.0, 2: 2.3, 4: 3.6, 8: 4.5, 16: 5.4, 32: 10.0, 64: 22.0}, 1e-3)
    backend = ScriptedBackend([], 0)
    req = EditRequest(FILE, "Edit it.", "f.txt")
    prompt = build_prompt(backend, req)
    backend.prompt_len, backend.target = len(prompt.tokens), backend.tokenize(EDITS[name] + prompt.fence)
    fin = list(edit_events(backend, req, EditOptions(speculate="auto", cost=cpu)))[-1]
    fresh, places = new_tokens(backend, FILE, EDITS[name])
    assert fin.text == EDITS[name]
    assert fin.stats.rejected_prediction_tokens <= 16 * (places + 1)
    assert fin.stats.forward_passes <= len(backend.target) / 4


def test_plain_step_when_drafts_cannot_pay():
    from pedit.engine.costmodel import CostModel

    # a CPU where one extra token costs as much as three plain steps: auto never drafts
    backend = ScriptedBackend([], 0)
    req = EditRequest(FILE, "Edit it.", "f.txt")
    prompt = build_prompt(backend, req)
    backend.prompt_len, backend.target = len(prompt.tokens), backend.tokenize(FILE + prompt.fence)
    cost = CostModel.table({1: 1.0, 2: 3.0, 64: 200.0})
    fin = list(edit_events(backend, req, EditOptions(speculate="auto", cost=cost)))[-1]
    assert fin.stats.forward_passes == len(backend.target) + 1  # exactly plain decoding
    assert fin.stats.accepted_prediction_tokens == fin.stats.rejected_prediction_tokens == 0


# The reference vocabulary spells most names letter by letter; `self` and `user` are single
# tokens, as identifiers mostly are in a real model's vocabulary.
RENAME_SRC = """class Tally:
    def add(self, item):
        if item > 0:
            self.total = self.total + item
        elif item < -10:
            self.total = self.total - 1
        self.count = self.count + 1
        print("the sum is", self.total)
        return self
"""


def rejected_drafts(events) -> int:
    """Forward passes in which some draft tokens were rejected."""
    count, before = 0, 0
    for ev in events:
        stats = getattr(ev, "stats", None)
        if stats is not None:
            count += stats.rejected_prediction_tokens > before
            before = stats.rejected_prediction_tokens
    return count


@pytest.mark.parametrize("speculate", ["fixed", "auto"])
def test_a_rename_costs_one_rejected_draft_not_one_per_occurrence(speculate, monkeypatch):
    from pedit.engine.costmodel import CostModel

    renamed = RENAME_SRC.replace("self", "user")
    n = RENAME_SRC.count("self")
    assert n == 9
    backend = ScriptedBackend([], 0)
    req = EditRequest(RENAME_SRC, "Rename self to user.", "tally.py")
    prompt = build_prompt(backend, req)
    backend.prompt_len, backend.target = len(prompt.tokens), backend.tokenize(renamed + prompt.fence)
    cpu = CostModel.table({1: 1.0, 2: 2.3, 4: 3.6, 8: 4.5, 16: 5.4, 32: 10.0, 64: 22.0}, 1e-3)
    events = list(
        edit_events(
            backend, req, EditOptions(speculate=speculate, cost=cpu, drafters=("predicted",), draft_max=16)
        )
    )
    assert events[-1].text == renamed
    assert rejected_drafts(events) == 1  # the first occurrence; every later one is drafted renamed
    # the file as the only draft, no learning: every occurrence is rejected
    from pedit.engine import edit as edit_module

    class Unlearned(edit_module.PredictedOutput):
        def __init__(self, *a, **k):
            super().__init__(*a, **{**k, "learn": False})

    monkeypatch.setattr(edit_module, "PredictedOutput", Unlearned)
    backend2 = ScriptedBackend(backend.target, backend.prompt_len)
    plain = list(
        edit_events(
            backend2, req, EditOptions(speculate=speculate, cost=cpu, drafters=("predicted",), draft_max=16)
        )
    )
    # one per occurrence: both planners bet on the file at every one of them
    assert plain[-1].text == renamed and rejected_drafts(plain) == n


@pytest.mark.parametrize("name", EDITS)
@pytest.mark.parametrize("speculate", ["fixed", "off"])
def test_the_figures_of_where_the_answer_goes_are_the_passes_made(name, speculate):
    """Issue 38: a run's rows read and passes by size are exactly the backend's decode
    passes (every pass after the prefill, as the scripted model saw them), and the time
    inside the backend is part of the answer's."""
    stats, _, backend = run(EDITS[name], 16, speculate=speculate)
    decode = [n for n, _ in backend.calls[1:]]  # calls[0]: the prefill
    assert stats.rows_read == sum(decode)
    assert stats.passes_by_size == {n: decode.count(n) for n in set(decode)}
    assert stats.forward_passes == 1 + len(decode)
    assert 0 < stats.backend_seconds <= stats.decode_seconds
    assert stats.outside_seconds == pytest.approx(stats.decode_seconds - stats.backend_seconds)
    # a rejection is a pass that rejected part of its draft: at most one per rejected token
    assert (stats.rejections > 0) == (stats.rejected_prediction_tokens > 0)
    assert stats.rejections <= min(stats.rejected_prediction_tokens, len(decode))
    assert 0 <= stats.rejected_seconds <= stats.backend_seconds
    if speculate == "off":
        assert stats.passes_by_size == {1: stats.completion_tokens}  # one row per token: the EOS's too
    else:  # each pass reads the last token emitted and the draft it verifies (the draft's
        # last token, the end of turn the model confirmed, is neither accepted nor rejected)
        drafts = stats.accepted_prediction_tokens + stats.rejected_prediction_tokens
        assert stats.rows_read - len(decode) - drafts in (0, 1)


def test_a_rejection_costs_its_passs_share_of_rows_rejected():
    """Tracker: each pass that rejects drafts counts once, and costs its seconds inside the
    backend times the share of its rows it threw away."""
    from pedit.engine.decode import Tracker

    t = Tracker(prompt_tokens=10, prefill_seconds=0.1)
    t.step(seconds=0.5, k=7, accepted=3, rejected=4, rows=8, inside=0.4)  # 4 of 8 rows: 0.2 s
    t.step(seconds=0.2, k=3, accepted=3, rows=4, inside=0.2)  # all kept
    t.step(seconds=0.3, k=5, rejected=5, rows=6)  # 5 of 6 rows, all of its 0.3 s in the backend
    st = t.snapshot(8)
    assert st.rejections == 2 and st.rejected_seconds == pytest.approx(0.2 + 0.25)
