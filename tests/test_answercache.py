"""Issue 56: the answer cache. The same model, settings, instruction and file give the answer
again with no model, in a new process (the real CLI, a new process per command, as a user
runs it); anything else that could change the answer is a miss."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from pedit.app.answercache import AnswerCache, job_key
from pedit.app.outcome import Outcome
from pedit.events import Stats

PEDIT = [sys.executable, "-m", "pedit"]
REF = ["-b", "reference"]
ESSAY = "Their is a eror in this sentence.\n\nAnother paragraph, with a typo.\n"


@pytest.fixture(autouse=True)
def answer_cache_on(monkeypatch):
    monkeypatch.setenv("PEDIT_ANSWER_CACHE", "on")


def pedit(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*PEDIT, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=os.environ | env
    )


def passes(stats: Path) -> int:
    return json.loads(stats.read_text())["forward_passes"]


def test_the_same_command_on_the_same_file_answers_again_with_no_model(tmp_path):
    (tmp_path / "a.md").write_text(ESSAY)
    first = pedit("fix", "a.md", "--stdout", *REF, "--stats-json", "1.json", cwd=tmp_path)
    second = pedit("fix", "a.md", "--stdout", *REF, "--stats-json", "2.json", cwd=tmp_path)
    assert first.returncode == second.returncode == 0 and second.stdout == first.stdout
    assert passes(tmp_path / "1.json") > 0 and passes(tmp_path / "2.json") == 0
    assert "a.md: answered before with these settings: the same answer, no model run" in second.stderr
    assert "answered before" not in first.stderr
    third = pedit("fix", "a.md", "--diff", *REF, cwd=tmp_path)  # another output mode: the same answer
    assert third.returncode == 0 and "answered before" in third.stderr


@pytest.mark.parametrize(
    "change",
    [
        ["--no-answer-cache"],  # asked not to
        ["--temperature", "0.7"],  # another setting
        ["--system", "Be brief."],
        ["--keep-bias", "2"],
        ["--max-tokens", "300"],
    ],
)
def test_another_setting_runs_the_model(tmp_path, change):
    (tmp_path / "a.md").write_text(ESSAY)
    assert pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path).returncode == 0
    again = pedit("fix", "a.md", "--stdout", *REF, *change, "--stats-json", "s.json", cwd=tmp_path)
    assert again.returncode == 0 and passes(tmp_path / "s.json") > 0


def test_another_file_instruction_or_command_runs_the_model(tmp_path):
    (tmp_path / "a.md").write_text(ESSAY)
    assert pedit("edit", "a.md", "Make it formal.", "--stdout", *REF, cwd=tmp_path).returncode == 0
    for args in (["edit", "a.md", "Make it short.", "--stdout"], ["fix", "a.md", "--stdout"]):
        done = pedit(*args, *REF, "--stats-json", "s.json", cwd=tmp_path)
        assert done.returncode == 0 and passes(tmp_path / "s.json") > 0
    (tmp_path / "a.md").write_text(ESSAY.replace("typo.", "typo!"))
    done = pedit("fix", "a.md", "--stdout", *REF, "--stats-json", "s.json", cwd=tmp_path)
    assert done.returncode == 0 and passes(tmp_path / "s.json") > 0


def test_the_cache_is_off_by_config(tmp_path):
    (tmp_path / "a.md").write_text(ESSAY)
    for _ in range(2):
        args = ["fix", "a.md", "--stdout", *REF, "--stats-json", "s.json"]
        done = pedit(*args, cwd=tmp_path, PEDIT_ANSWER_CACHE="off")
        assert done.returncode == 0 and passes(tmp_path / "s.json") > 0
    bad = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, PEDIT_ANSWER_CACHE="maybe")
    assert bad.returncode == 2 and "env PEDIT_ANSWER_CACHE: must be on or off" in bad.stderr


def test_a_damaged_or_foreign_entry_is_a_miss(tmp_path):
    cache = AnswerCache(tmp_path)
    run = Stats(prompt_tokens=1, completion_tokens=1, forward_passes=1, prefill_seconds=0.0,
                decode_seconds=0.0, stop_reason="eos")  # fmt: skip
    out = Outcome(text="fixed\n", stats=[run], notes=["kept part 2"])
    key = job_key("m", "fix", "a.md", "text")
    cache.put(key, out, 7)
    got = cache.get(key)
    assert (got.text, got.notes, got.tokens) == ("fixed\n", ("kept part 2",), 7)
    path = next(tmp_path.rglob("*.json"))
    for damaged in ('{"key": "other", "text": "x"}', "{not json", json.dumps({"key": key, "text": 3}), ""):
        path.write_text(damaged)
        assert cache.get(key) is None


def test_an_intents_check_is_not_kept(tmp_path):
    from pedit.checks.intentcheck import Verdict

    cache = AnswerCache(tmp_path)
    verdict = Verdict(check="rename", passed=True)
    cache.put("k" * 64, Outcome(text="x", stats=[], verdict=verdict), None)
    assert not list(tmp_path.rglob("*.json"))


def test_a_cache_that_cannot_be_written_is_said_once_and_the_command_goes_on(tmp_path):
    (tmp_path / "a.md").write_text(ESSAY)
    cache_home = tmp_path / "cache"
    (cache_home / "pedit").mkdir(parents=True)
    (cache_home / "pedit" / "answers").write_text("a file where the folder would be")
    done = pedit("fix", "a.md", "--stdout", *REF, cwd=tmp_path, XDG_CACHE_HOME=str(cache_home))
    assert done.returncode == 0 and done.stderr.count("cannot write the answer cache") == 1


def test_the_key_is_the_same_in_every_process(tmp_path):
    code = "from pedit.app.answercache import job_key; print(job_key('m', ('a', 1.5), None, 'text'))"
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True) for _ in range(2)]
    keys = {r.stdout for r in runs}
    assert len(keys) == 1 and keys.pop().strip() == job_key("m", ("a", 1.5), None, "text")


def test_a_file_cut_in_runs_runs_only_the_pieces_that_changed(tmp_path):
    """One word changed in one paragraph of a file the fix cuts in runs: that paragraph's
    piece runs, the others are the answers kept from before, and the file is what a run
    with no cache writes."""
    (tmp_path / "pyproject.toml").write_text("[tool.pedit]\nchunk_tokens = 16\n")
    paragraphs = [f"Paragraph {i} has a sentance about the {w} and it's meaning." for i, w in
                  enumerate(["sea", "hills", "town", "river", "forest", "sky"])]  # fmt: skip
    (tmp_path / "a.md").write_text("\n\n".join(paragraphs) + "\n")
    args = ["fix", "a.md", "--stdout", *REF, "--no-spelling"]  # the reference model copies: every piece whole
    first = pedit(*args, "--stats-json", "1.json", cwd=tmp_path)
    assert first.returncode == 0 and json.loads((tmp_path / "1.json").read_text())["runs"] == 6
    paragraphs[3] = paragraphs[3].replace("river", "stream")
    (tmp_path / "a.md").write_text("\n\n".join(paragraphs) + "\n")
    second = pedit(*args, "--stats-json", "2.json", cwd=tmp_path)
    fresh = pedit(*args, cwd=tmp_path, PEDIT_ANSWER_CACHE="off")
    assert second.returncode == 0 and json.loads((tmp_path / "2.json").read_text())["runs"] == 1
    assert second.stdout == fresh.stdout


def test_an_edit_that_moves_the_cuts_runs_only_its_own_piece(tmp_path):
    """Issue 71: 30 one-sentence paragraphs, and a sentence added in paragraph 17 that
    makes it longer. Cut afresh (the answer cache off), the fix would pack the file from
    paragraph 17 on in other pieces; with the cache, the file keeps its last cut where its
    text is the same, so the piece that holds paragraph 17 runs alone, and the file is
    what a fresh run writes."""
    (tmp_path / "pyproject.toml").write_text("[tool.pedit]\nchunk_tokens = 160\n")  # 3 paragraphs a run
    rng = random.Random(0)  # varied words: the reference model copies them faithfully
    paragraphs = [" ".join("".join(rng.choice("abcdefghij") for _ in range(5)) for _ in range(8)) + "."
                  for _ in range(30)]  # fmt: skip
    (tmp_path / "a.md").write_text("\n\n".join(paragraphs) + "\n")
    args = ["fix", "a.md", "--stdout", *REF, "--no-spelling"]
    first = pedit(*args, "--stats-json", "1.json", cwd=tmp_path)
    runs = json.loads((tmp_path / "1.json").read_text())["runs"]
    assert first.returncode == 0 and runs >= 6
    paragraphs[17] += " Fghij abcde bcdef cdefg defgh efghi."
    (tmp_path / "a.md").write_text("\n\n".join(paragraphs) + "\n")
    second = pedit(*args, "--stats-json", "2.json", cwd=tmp_path)
    fresh = pedit(*args, "--stats-json", "3.json", cwd=tmp_path, PEDIT_ANSWER_CACHE="off")
    # its piece (paragraphs 15 to 17) grew past the budget by less than a quarter: one run
    assert second.returncode == 0 and json.loads((tmp_path / "2.json").read_text())["runs"] == 1
    assert json.loads((tmp_path / "3.json").read_text())["runs"] == 11  # cut afresh: 6 to 11 move
    assert second.stdout == fresh.stdout
