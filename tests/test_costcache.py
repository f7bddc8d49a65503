"""The user cache only saves time: the cost-model cache and the hook's result cache go on
without it when it cannot be written (a path under a regular file, a full disk), say so in
one line, leave no temporary file behind, and treat an entry that is not theirs (valid
JSON of another shape, a truncated file) as absent.

The tests run as root, where chmod does not stop a write: an unwritable cache is one whose
path goes through a regular file; a full disk is a real 64 KiB tmpfs (skipped where
mounting is not permitted)."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from disks import fill
from typer.testing import CliRunner

from pedit.backends import open_backend
from pedit.cli.app import app
from pedit.engine.costmodel import CostModel
from pedit.hook.cache import ResultCache
from pedit.machine.calibration import cached

FIX = ("fix", "x.md", "-b", "reference", "--diff")
WRONG_SHAPES = [
    "[]",
    "null",
    '{"x": 1}',
    '"text"',
    '{"sizes": 5, "seconds": 5}',
    '{"sizes": [1], "seconds": ["a"]}',
    '{"sizes": [1], "seconds": [NaN]}',
    '{"sizes": [1.5], "seconds": [1]}',
    '{"sizes": [2], "seconds": [1]}',
    '{"sizes": [1], "seconds": [1, 2]}',
    '{"sizes": [1, 2], "seconds": [',
    "",
]


def invoke(*args):
    return CliRunner().invoke(app, list(map(str, args)))


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("pedit: warning:")]


def fake_measure(backend):
    return replace(CostModel.table({1: 1.0, 8: 3.0}, 0.01), head=((8, 0.2),))


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.md").write_text("Some text.\n")
    return tmp_path


@pytest.fixture
def unwritable_cache(tmp_path, monkeypatch) -> Path:
    """XDG_CACHE_HOME under a regular file: nothing can be created in it, even by root."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "cache"))
    return blocker / "cache"


@pytest.fixture
def full_disk(small_disk) -> Path:
    """A 64 KiB tmpfs filled to the last byte."""
    mount = small_disk(64 * 1024)
    fill(mount)
    return mount


def temporary_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".tmp")]


# --- the cost-model cache -------------------------------------------------------------------


def test_an_unwritable_cache_is_a_warning_not_an_error(workdir, unwritable_cache):
    for run in range(2):  # measured again on each run, one warning each time
        result = invoke(*FIX)
        assert result.exit_code == 0, result.stderr
        said = warnings(result.stderr)
        # the token table's (the skeleton's grammar) for each model loaded, and the prompt
        # cache's once per process (a command is one: here both run in this one)
        assert "cost cache" in said[0] and len(said) == (3 if run == 0 else 2)
        assert sum("token table cache" in line for line in said) == 1
        assert run or sum("prompt cache" in line for line in said) == 1


def test_a_full_disk_is_a_warning_and_leaves_no_temporary_file(workdir, full_disk, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(full_disk))
    result = invoke(*FIX)
    assert result.exit_code == 0, result.stderr
    said = warnings(result.stderr)
    assert len(said) == 3 and "cost cache" in said[0]
    assert {"prompt cache", "token table cache"} == {
        k for k in ("prompt cache", "token table cache") for line in said if k in line
    }
    assert all("No space left on device" in line for line in said)
    assert temporary_files(full_disk) == [] and not list(full_disk.rglob("*.json"))
    assert not list(full_disk.rglob("*.kv"))


def test_cached_on_a_full_disk(full_disk):
    said = []
    model = cached(open_backend("reference"), "m", full_disk / "costs", fake_measure, warn=said.append)
    assert model == fake_measure(None) and len(said) == 1
    assert temporary_files(full_disk) == [] and not list(full_disk.rglob("*.json"))


def test_an_interrupted_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cached(open_backend("reference"), "m", tmp_path, fake_measure)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("text", WRONG_SHAPES)
def test_from_json_refuses_other_shapes(text):
    with pytest.raises(ValueError):
        CostModel.from_json(text)


@pytest.mark.parametrize("text", WRONG_SHAPES)
def test_a_cache_entry_of_the_wrong_shape_is_measured_again(tmp_path, text):
    b, calls = open_backend("reference"), []

    def measure(backend):
        calls.append(1)
        return fake_measure(backend)

    first = cached(b, "m", tmp_path, measure)
    (entry,) = tmp_path.iterdir()
    entry.write_text(text)
    assert cached(b, "m", tmp_path, measure) == first and len(calls) == 2
    assert CostModel.from_json(entry.read_text()) == first  # overwritten with a good one
    assert cached(b, "m", tmp_path, measure) == first and len(calls) == 2


@pytest.mark.parametrize("text", ["[]", "null", '{"x": 1}'])
def test_the_command_goes_on_after_a_wrong_shape_entry(workdir, isolated_dirs, text):
    assert invoke(*FIX).exit_code == 0
    (entry,) = (isolated_dirs / "cache" / "pedit" / "costs").iterdir()
    entry.write_text(text)
    result = invoke(*FIX)
    assert result.exit_code == 0 and warnings(result.stderr) == [], result.stderr
    CostModel.from_json(entry.read_text())  # measured again and replaced


# --- the hook's result cache ----------------------------------------------------------------


def test_the_hook_goes_on_with_an_unwritable_cache(workdir, unwritable_cache):
    subprocess.run(["git", "init", "-q"], cwd=workdir, check=True)
    (workdir / "pyproject.toml").write_text('[tool.pedit]\nbackend = "reference"\n')
    result = invoke("hook", "run", "x.md")
    assert result.exit_code == 0 and "ok x.md" in result.output, (result.output, result.stderr)
    said = warnings(result.stderr)
    assert len(said) == 4  # once each
    kinds = ("cost cache", "token table cache", "prompt cache", "result cache")
    assert sorted(k for line in said for k in kinds if k in line) == sorted(kinds)


def test_result_cache_unwritable_warns_once(tmp_path):
    (tmp_path / "a-file").write_text("")
    said = []
    cache = ResultCache(tmp_path / "a-file" / "hook", warn=said.append)
    cache.put("ab" * 32, "text")
    cache.put("cd" * 32, "text")
    assert len(said) == 1 and cache.get("ab" * 32) is None


def test_result_cache_on_a_full_disk(full_disk):
    said = []
    cache = ResultCache(full_disk / "hook", warn=said.append)
    cache.put("ab" * 32, "some text " * 1000)
    assert len(said) == 1 and "No space left on device" in said[0]
    assert temporary_files(full_disk) == [] and cache.get("ab" * 32) is None


def test_result_cache_round_trip_and_damaged_entries(tmp_path):
    cache, key, other = ResultCache(tmp_path), "ab" * 32, "cd" * 32
    cache.put(key, "fixed text\n")
    assert cache.get(key) == "fixed text\n" and cache.get(other) is None
    (entry,) = (tmp_path / "ab").iterdir()
    good = entry.read_text()
    damaged = [
        good[: len(good) // 2],  # truncated
        "",  # empty (a crash before the data reached the disk)
        "fixed text\n",  # not JSON
        "null",
        "[]",
        json.dumps({"key": other, "text": "another file's fix"}),  # another key's entry
        json.dumps({"key": key, "text": 5}),
    ]
    for text in damaged:
        entry.write_text(text)
        assert cache.get(key) is None, text
    entry.write_bytes(b"\xff\xfe")
    assert cache.get(key) is None
