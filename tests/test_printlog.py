"""print() to logging as a tool (pedit/tools/printlog.py): on the report's real files its
edit passes the task's own checks and the loop's, behaves as the file did, and what it
cannot convert it leaves to the model (None)."""

from __future__ import annotations

import ast
import contextlib
import io
import logging

import pytest

from pedit.bench.checks import run_checks
from pedit.bench.corpus import load_tasks
from pedit.checks.intentcheck import check
from pedit.tools.intent import LOGGING, Intent, parse
from pedit.tools.printlog import to_logging

TASKS = [t for t in load_tasks() if t.command == "refactor" and "print" in t.check.get("absent", ())]


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_the_tools_edit_passes_the_reports_checks_and_the_loops(task):
    assert parse(task.instruction).kind == LOGGING
    out = to_logging(task.text(), task.instruction)
    assert [c for c in run_checks(task.text(), out, task.check) if not c.passed] == []
    assert check(Intent(LOGGING), "m.py", task.text(), out).passed


def logged(src: str, call: str) -> list[tuple[str, str]]:
    """(level, message) of every record `call` logs in the module `src`."""
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append((record.levelname, record.getMessage()))

    namespace = {"__name__": "printlog_case"}
    exec(compile(src, "m.py", "exec"), namespace)
    log = logging.getLogger("printlog_case")
    handler = Keep()
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        eval(call, namespace)
    finally:
        log.removeHandler(handler)
    return records


def printed(src: str, call: str) -> list[str]:
    namespace: dict = {}
    exec(compile(src, "m.py", "exec"), namespace)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        eval(call, namespace)
    return out.getvalue().splitlines()


SRC = '''"""Doc."""
from __future__ import annotations

import os
import sys


def show(d, n):
    print("Entries:")
    for k in sorted(d):
        print("  %-6s" % k, d[k])
    print()
    print("100% of", n, "done")
    print(n, n + 1)
    try:
        os.listdir("/nonexistent/x")
    except OSError:
        print("can't list", n)
    print("bad", file=sys.stderr)
'''


def test_each_print_logs_the_line_it_printed_at_the_level_it_means():
    out = to_logging(SRC, "use logging instead of print, info messages")
    tree = ast.parse(out)
    assert [type(n).__name__ for n in tree.body[:4]] == ["Expr", "ImportFrom", "Import", "Import"]
    assert [a.name for a in tree.body[2].names] == ["logging"]
    assert ast.unparse(tree.body[5]) == "logger = logging.getLogger(__name__)"
    records = logged(out, "show({'a': 1, 'bb': 2}, 3)")
    lines = printed(SRC.replace(", file=sys.stderr", ""), "show({'a': 1, 'bb': 2}, 3)")
    assert [m for _, m in records] == [x.rstrip() if not x.strip() else x for x in lines]
    assert [lv for lv, _ in records] == ["INFO"] * 6 + ["WARNING", "WARNING"]
    assert check(Intent(LOGGING), "m.py", SRC, out).passed


def test_the_instruction_names_the_logger_and_the_level():
    out = to_logging("def f():\n    print('x')\n", "log = logging.getLogger(__name__), debug messages")
    assert out == "import logging\n\nlog = logging.getLogger(__name__)\n\n\ndef f():\n    log.debug('x')\n"


@pytest.mark.parametrize(
    "src",
    [
        "def f(out):\n    print('x', file=out)\n",  # a print to a file is no log line
        "def f():\n    print('a', 'b', sep='-')\n",
        "def f():\n    return print('x')\n",  # print as a value
        "print = str\nprint('x')\n",
        "def f():\n    x = 1\n",  # nothing to do
        "def f(:\n    print('x')\n",  # not Python
    ],
)
def test_what_is_not_a_log_line_is_left_to_the_model(src):
    assert to_logging(src, "print to logging") is None


def test_the_loop_check_refuses_a_logging_answer_that_changes_other_lines():
    src = "import os\n\n\ndef f():\n    x = os.sep\n    print(x)\n"
    good = to_logging(src, "print to logging")
    assert check(Intent(LOGGING), "m.py", src, good).passed
    bad = good.replace("x = os.sep", "x = os.sep * 2")
    verdict = check(Intent(LOGGING), "m.py", src, bad)
    assert not verdict.passed and verdict.reason == "it changes line 5, which has no print() call"
    extra = good.replace("    logger.info(x)\n", "    logger.info(x)\n    return x\n")
    assert check(Intent(LOGGING), "m.py", src, extra).reason == (
        "it adds a line that is not an import or the logger: 'return x'"
    )


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("logger.info()", "line 9 logs no message (logger.info() raises TypeError)"),
        ('logger.info("  %-15s" % x, x)', "line 9 passes arguments to a message that is not a format string"),
        ('logger.info("%s %d%%", x)', "line 9 passes 1 argument to a message with 2 placeholders"),
        ('logger.info("%s", x, x)', "line 9 passes 2 arguments to a message with 1 placeholder"),
        ('logger.info("a" + x, x)', "line 9 passes arguments to a message that is not a format string"),
    ],
)
def test_the_loop_check_refuses_a_logging_call_that_fails_when_it_logs(line, reason):
    """The model's own answer on mailcap.py, before this check: `logger.info()` for
    `print()`, and a %-formatted message with one argument more."""
    src = "import os\n\n\ndef f():\n    x = os.sep\n    print(x)\n"
    answer = to_logging(src, "print to logging").replace("logger.info(x)", line)
    assert check(Intent(LOGGING), "m.py", src, answer).reason == reason
    fine = to_logging(src, "print to logging").replace("logger.info(x)", 'logger.info("%s %d%%", x, 1)')
    assert check(Intent(LOGGING), "m.py", src, fine).passed
