"""The setting `reuse` (config.KEYS, jobs.Job.run_one): "exact", the default, starts each run
from the prompt's shared start read alone, whatever the model held; "longest" keeps the
longest prefix of the prompt the model holds (a resident's last request), so a file fixed
again after an edit reads only from the edit on. On the reference backend, whose logits
depend only on the prefix, both write the same answer (hypothesis, over edits); on
llama.cpp "longest" may flip a near-tie, which `scripts/reuse_flips.py` measures."""

from __future__ import annotations

import pytest
from flat_options import engine_options
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pedit.app import config, wholefile
from pedit.app.jobs import Job
from pedit.app.templates import BUILTIN
from pedit.backends import open_backend
from pedit.engine.costmodel import CostModel
from pedit.engine.decode import common_prefix
from pedit.engine.prompt import build_prompt
from pedit.events import Finished, Prefilled
from pedit.errors import UsageError
from pedit.ui.runs import answer

FLAT = CostModel.table({1: 1.0, 64: 1.5}, 1e-3)
WORDS = "Their is many reason why peoples enjoys reading and a good book take you to other worlds".split()
TEXT = " ".join(WORDS) + ".\n"


def job(backend, reuse: str, spelling: bool = False) -> Job:
    """A fix's job; `spelling`: its drafts carry the tools' suggestions and the confusion
    sets are scored first (likelihood.score, which keeps what it shares with the cache too)."""
    options = engine_options(cost=FLAT, max_tokens=400, prompt_cache=False, reuse=reuse, spelling=spelling)
    return Job(backend, BUILTIN["fix"], None, options, force=True, chunk_tokens=0)  # a tiny model stops late


def fix(j: Job, text: str) -> tuple[str, Prefilled]:
    """`pedit fix` of `text` in one run: (the answer, the run's Prefilled)."""
    seen = []

    def render(events, label):
        evs = list(events)
        seen.extend(e for e in evs if isinstance(e, Prefilled))
        return evs[-1] if isinstance(evs[-1], Finished) else None

    out = answer(wholefile.rewrite(j, text, "essay.md"), render)
    assert len(seen) == 1
    return out.text, seen[0]


@pytest.fixture(scope="module")
def backends():
    made = {k: open_backend("reference", None, n_ctx=1024) for k in ("held", "fresh")}
    yield made
    for b in made.values():
        b.close()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(at=st.integers(0, len(WORDS) - 1), word=st.sampled_from(["books", "there", "seldom", "is"]))
def test_longest_reads_from_the_edit_on_and_writes_exact_s_answer(backends, at, word):
    held, fresh = backends["held"], backends["fresh"]
    edited = " ".join(WORDS[:at] + [word] + WORDS[at + 1 :]) + ".\n"
    longest = job(held, "longest")
    fix(longest, TEXT)  # the resident's last request: the model holds its prompt and answer
    before = list(held.held)
    prompt = build_prompt(held, longest.request(edited, "essay.md")).tokens
    got, pre = fix(longest, edited)
    want, exact_pre = fix(job(fresh, "exact"), edited)
    assert got == want
    shared = min(common_prefix(before, prompt), len(prompt) - 1)
    stem = exact_pre.reused  # the prompt's shared start, which a fresh backend has read alone
    assert pre.reused == max(shared, stem)
    assert pre.prompt_tokens - pre.reused == len(prompt) - max(shared, stem)
    scored = job(held, "longest", spelling=True)
    fix(scored, TEXT)
    assert fix(scored, edited)[0] == fix(job(fresh, "exact", spelling=True), edited)[0]


def test_exact_reads_past_the_start_again_whatever_the_model_holds(backends):
    held = backends["held"]
    fix(job(held, "exact"), TEXT)
    _, first = fix(job(held, "exact"), TEXT)  # the same file again: only the start is kept
    _, longest = fix(job(held, "longest"), TEXT)
    assert first.reused < longest.reused == first.prompt_tokens - 1


def test_the_setting_is_exact_by_default_and_checked():
    assert config.KEYS["reuse"].default == "exact"
    assert config.resolve({}, env={"PEDIT_REUSE": "longest"}, project=None).reuse == "longest"
    with pytest.raises(UsageError, match="reuse"):
        config.resolve({}, env={"PEDIT_REUSE": "most"}, project=None)
