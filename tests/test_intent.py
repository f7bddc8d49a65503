"""What a refactor asks (pedit/tools/intent.py): the patterns on common phrasings and on
every refactor instruction of the quality corpus, and the model's reading read safely."""

from __future__ import annotations

import json

import pytest

from pedit.bench.corpus import load_tasks
from pedit.tools.intent import EXTRACT, FSTRINGS, HINTS, LOGGING, OTHER, RENAME, from_extracted, parse, vague


@pytest.mark.parametrize(
    "instruction, renames, docs, within",
    [
        ("rename x to count", {"x": "count"}, False, None),
        ("Rename method getValue to get_value", {"getValue": "get_value"}, False, None),
        ("rename `a` to `b`", {"a": "b"}, False, None),  # backticked: a stop word is a name
        ("x -> count", {"x": "count"}, False, None),
        ("change the name of foo to bar", {"foo": "bar"}, False, None),
        ("rename the class Foo to Bar and update its uses", {"Foo": "Bar"}, False, None),
        ("rename lo and hi to low and high, in the docstring too", {"lo": "low", "hi": "high"}, True, None),
        ("rename result to smallest in the function nsmallest()", {"result": "smallest"}, False, "nsmallest"),
        ("in `join` only, rename `a` to `first`", {"a": "first"}, False, "join"),
        ("rename x to y in the whole file", {"x": "y"}, False, None),
    ],
)
def test_renames_are_read_with_their_names_docs_and_scope(instruction, renames, docs, within):
    got = parse(instruction)
    assert (got.kind, got.renames, got.docs, got.within) == (RENAME, renames, docs, within)


@pytest.mark.parametrize(
    "instruction, kind",
    [
        ("add type hints", HINTS),
        ("add type annotations to all the functions", HINTS),
        ("annotate every function with type hints", HINTS),
        ("use f-strings", FSTRINGS),
        ("convert the %-formatting to f-strings", FSTRINGS),
        ("replace print with logging", LOGGING),
        ("log with the logging module instead of printing", LOGGING),
        ("extract the loop into a helper function", EXTRACT),
        ("convert the two for loops into list comprehensions", OTHER),
        ("rename it to foo", OTHER),  # no name to rename
        ("rename a, b and c to d and e", OTHER),  # the counts disagree
        ("x -> x", OTHER),
        ("rename x to class", OTHER),  # a keyword is no name
    ],
)
def test_other_instructions_are_not_mistaken_for_a_rename(instruction, kind):
    assert parse(instruction).kind == kind


def test_every_rename_and_hints_task_of_the_corpus_is_read_as_its_check_expects():
    """The corpus' instructions were written by another hand, in a user's words."""
    for task in load_tasks():
        if task.command != "refactor":
            continue
        got = parse(task.instruction)
        spec = task.check
        if "rename" in spec:
            assert (got.kind, got.renames) == (RENAME, spec["rename"]), task.id
            scope = spec.get("rename_in", "")
            assert got.within == (scope.split(":", 1)[1] if scope else got.within), task.id
            assert got.docs == bool(spec.get("words")) or not spec.get("words"), task.id
        elif spec.get("hints"):
            assert got.kind == HINTS, task.id
        elif spec.get("fstrings"):
            assert got.kind == FSTRINGS, task.id
        elif spec.get("absent") == ["print"]:
            assert got.kind == LOGGING, task.id
        elif spec.get("defines") and spec.get("calls"):
            assert (got.kind, got.function) == (EXTRACT, spec["defines"][0]), task.id
        else:
            assert got.kind == OTHER, task.id


def test_only_vague_instructions_are_worth_asking_the_model():
    assert vague("give the variable x a better name", parse("give the variable x a better name"))
    assert not vague("convert the loops to comprehensions", parse("convert the loops to comprehensions"))
    assert not vague("rename x to y", parse("rename x to y"))  # read already


def test_the_models_reading_may_only_use_names_the_user_wrote():
    said = "call the counter variable n total instead"
    answer = {"kind": "rename", "renames": [{"old": "n", "new": "total"}]}
    assert from_extracted(json.dumps(answer), said).renames == {"n": "total"}
    invented = {"kind": "rename", "renames": [{"old": "n", "new": "counter_total"}]}
    assert from_extracted(json.dumps(invented), said).kind == OTHER
    assert from_extracted("{not json", said).kind == OTHER
    assert from_extracted(json.dumps({"kind": "hints", "renames": []}), "type it all").kind == HINTS


def test_a_vague_instruction_is_read_by_the_model_under_the_schema():
    """The reference backend (a tiny random model) answers under intent.SCHEMA's grammar:
    whatever it picks, the answer parses and a rename it reads names only words the user
    wrote."""
    from pedit.app.jobs import Job
    from pedit.app.options import EngineOptions
    from pedit.app.refactor import read
    from pedit.app.templates import BUILTIN
    from pedit.backends import open_backend

    said = "give the variable total a better name, say subtotal"
    job = Job(open_backend("reference"), BUILTIN["refactor"], said, EngineOptions())
    got, stats = read(said, job)
    assert got.source == "model" and stats is not None and stats.forward_passes > 0
    assert got.kind in (RENAME, HINTS, OTHER)
    assert all(old in said.split() and new in said.split() for old, new in got.renames.items())
