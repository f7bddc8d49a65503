"""The exact rename (pedit/tools/rename.py): rope for Python, tree-sitter elsewhere, checked
on the quality corpus' real files by the benchmark's own checks."""

from __future__ import annotations

import pytest

from pedit.bench.checks import run_checks
from pedit.bench.corpus import load_tasks
from pedit.errors import UsageError
from pedit.tools.intent import parse
from pedit.tools.rename import code_names, rename

RENAMES = [t for t in load_tasks() if t.command == "refactor" and "rename" in t.check]


@pytest.mark.parametrize("task", RENAMES, ids=[t.id for t in RENAMES])
def test_the_exact_rename_of_every_corpus_rename_passes_every_check(task):
    """Parameters, locals in one function, methods and their self.calls, classes, a name
    that shadows a builtin, names that are prefixes of others (pat / pat_str)."""
    intent = parse(task.instruction)
    out = rename(task.text(), task.file, intent.renames, docs=intent.docs, within=intent.within)
    failed = [f"{c.name}: {c.detail}" for c in run_checks(task.text(), out, task.check) if not c.passed]
    assert not failed


def test_a_reassigned_parameter_is_renamed_with_all_its_uses():
    """What jedi got wrong (it renamed one `pat` of `pat = f(pat)`): rope renames both."""
    src = "def f(name, pat):\n    pat = norm(pat)\n    return match(name, pat)\n"
    assert rename(src, "m.py", {"pat": "pattern"}) == src.replace("pat", "pattern")


def test_a_name_that_is_not_in_the_file_is_a_usage_error():
    with pytest.raises(UsageError, match="zz is not a name in the file"):
        rename("x = 1\n", "m.py", {"zz": "y"})
    with pytest.raises(UsageError, match="is not a name"):  # in a string only: no name
        rename('x = "zz"\n', "m.py", {"zz": "y"})


def test_docs_rename_whole_words_in_docstrings_and_comments_only_when_asked():
    src = 'def f(lo):\n    """lo is the low bound; slow."""\n    return lo  # lo\n'
    assert rename(src, "m.py", {"lo": "low"}) == src.replace("(lo)", "(low)").replace(
        "return lo", "return low"
    )
    assert rename(src, "m.py", {"lo": "low"}, docs=True) == (
        'def f(low):\n    """low is the low bound; slow."""\n    return low  # low\n'
    )


def test_within_renames_the_bindings_of_one_function_only():
    src = "def a():\n    r = 1\n    return r\n\ndef b():\n    r = 2\n    return r\n"
    out = rename(src, "m.py", {"r": "total"}, within="b")
    assert out == "def a():\n    r = 1\n    return r\n\ndef b():\n    total = 2\n    return total\n"


JS = "function f(a) {\n  const b = a + 1; // a is the input\n  return 'a' + b + obj.a + 'see a here';\n}\n"


def test_other_languages_rename_identifier_tokens_never_strings_or_members_of_other_objects():
    assert rename(JS, "f.js", {"a": "count"}) == JS.replace("f(a)", "f(count)").replace("= a +", "= count +")
    with_docs = rename(JS, "f.js", {"a": "count"}, docs=True)
    assert "// count is the input" in with_docs and "'see count here'" in with_docs
    assert "'a' +" in with_docs and "obj.a" in with_docs  # a one-word string is data; a member is not a


@pytest.mark.parametrize(
    "name, src, old, new, want",
    [
        ("m.go", 'package m\n\nfunc Add(x int) int {\n\treturn x + 1 // x\n}\n', "x", "n",
         'package m\n\nfunc Add(n int) int {\n\treturn n + 1 // x\n}\n'),
        ("m.rs", 'fn add(x: i32) -> i32 {\n    let s = "x";\n    x + 1\n}\n', "x", "n",
         'fn add(n: i32) -> i32 {\n    let s = "x";\n    n + 1\n}\n'),
        ("K.java", "class K { int total; int get() { return total; } }\n", "total", "sum",
         "class K { int sum; int get() { return sum; } }\n"),
    ],
)  # fmt: skip
def test_go_rust_java_renames(name, src, old, new, want):
    assert rename(src, name, {old: new}) == want


def test_code_names_are_the_identifiers_outside_strings_and_comments():
    names = [n for n, _ in code_names('x = "y"  # z\nw = x\n', "m.py")]
    assert names == ["x", "w", "x"]
