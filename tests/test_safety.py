"""No user file is lost, half-written or silently damaged: the faults a new user's files
meet (the issue "Never lose or damage a file"), each reproduced through the real CLI on
real files, with real processes where the fault needs them (owners, a full disk and
signals: test_safety_system.py).

The `answering` fixture (conftest.py) makes the model a test double for the shells
(scripted.Answering): the reference backend made to answer with a given text (then the
closing fence and end of turn), and to run a callback at a chosen forward pass, so that a
fault can be injected while the model generates.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pedit.app import atomic, fileio
from pedit.backends.reference import ReferenceBackend
from pedit.checks import guard
from pedit.cli.app import app
from pedit.errors import ConflictError, UsageError

REF = ("-b", "reference")
PEDIT = [sys.executable, "-m", "pedit"]
ESSAY = "Their is many reasons why peoples enjoys reading.\n\nA good book take you far away from home.\n"
FIXED = "There are many reasons why people enjoy reading.\n\nA good book takes you far away from home.\n"


def invoke(*args, **kw):
    return CliRunner().invoke(app, list(map(str, args)), **kw)


def leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.endswith(".pedit")]


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# --- 1. lost updates ---------------------------------------------------------------------


def test_a_line_appended_while_the_model_runs_is_kept(tmp_path, answering):
    essay = write(tmp_path / "essay.md", ESSAY)
    answering(FIXED, at_pass=lambda n: n == 3 and essay.open("a").write("A line added meanwhile.\n"))
    result = invoke("fix", essay, "-y", "--speculate", "off")
    assert result.exit_code == 4, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"pedit: error: {essay}: changed on disk since pedit read it; nothing written"
    )
    assert essay.read_text() == ESSAY + "A line added meanwhile.\n"
    assert not leftovers(tmp_path)


def test_a_file_deleted_while_the_model_runs_is_a_conflict_not_a_write_error(tmp_path, answering):
    essay = write(tmp_path / "essay.md", ESSAY)
    answering(FIXED, at_pass=lambda n: n == 3 and essay.unlink())
    result = invoke("fix", essay, "-y", "--speculate", "off")
    assert result.exit_code == 4, result.stderr
    assert (
        result.stderr.strip().splitlines()[-1]
        == f"pedit: error: {essay}: deleted while pedit ran; nothing written"
    )
    assert not essay.exists() and not list(tmp_path.iterdir())


def test_a_killed_pedits_temporary_file_is_removed_by_the_next_write(tmp_path):
    """SIGKILL leaves `.NAME.PID.XXXXXXXX.pedit` behind; the next write of NAME removes the
    ones whose process is gone (and an older pedit's, without a process id, once an hour
    old), never a live process's, nor another file's."""
    essay = write(tmp_path / "essay.md", ESSAY)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead = int(gone.stdout)
    stale = [f".essay.md.{dead}.k3j_9x0a.pedit", ".essay.md.oldstyle.pedit"]
    kept = [
        f".essay.md.{os.getppid()}.abcdefgh.pedit",
        ".essay.md.youngone.pedit",
        f".essay.md.x.{dead}.abcdefgh.pedit",
    ]
    for name in stale + kept:
        (tmp_path / name).write_text("half a file")
    hour_ago = os.stat(essay).st_mtime - atomic.STALE_SECONDS - 60
    os.utime(tmp_path / ".essay.md.oldstyle.pedit", (hour_ago, hour_ago))
    fileio.write(fileio.read(essay), FIXED)
    assert essay.read_text() == FIXED
    assert sorted(leftovers(tmp_path)) == sorted(kept)


def test_same_size_same_mtime_other_bytes_is_a_change(tmp_path):
    path = write(tmp_path / "a.txt", "hello world\n")
    source = fileio.read(path)
    st = path.stat()
    path.write_text("HELLO world\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # touch -r: size and mtime as read
    with pytest.raises(ConflictError, match="changed on disk"):
        fileio.write(source, "hello, world\n")
    assert path.read_text() == "HELLO world\n"


def test_a_second_pedit_on_the_same_file_stops_at_once(tmp_path, answering):
    essay = write(tmp_path / "essay.md", ESSAY)
    second = []

    def run_another(n):
        if n == 3:  # while this pedit generates: a real second process on the same file
            second.append(
                subprocess.run([*PEDIT, "fix", str(essay), "-y", *REF], capture_output=True, text=True)
            )

    answering(FIXED, at_pass=run_another)
    result = invoke("fix", essay, "-y", "--speculate", "off")
    assert result.exit_code == 0 and essay.read_text() == FIXED  # the first one wins, alone
    other = second[0]
    assert other.returncode == 4
    assert other.stderr.strip() == f"pedit: error: {essay}: another pedit is rewriting it; not touched"


def test_a_symlink_retargeted_while_the_model_runs_writes_nothing(tmp_path, answering):
    a = write(tmp_path / "A.md", ESSAY)
    b = write(tmp_path / "B.md", "File B, which nobody asked to fix.\n")
    link = tmp_path / "link.md"
    link.symlink_to(a)

    def retarget(n):
        if n == 3:
            link.unlink()
            link.symlink_to(b)

    answering(FIXED, at_pass=retarget)
    result = invoke("edit", link, "fix", "-y", "--speculate", "off")
    assert result.exit_code == 4
    assert f"now points to {b.resolve()} (it was {a.resolve()}); nothing written" in result.stderr
    assert a.read_text() == ESSAY and b.read_text() == "File B, which nobody asked to fix.\n"


def test_the_session_save_checks_the_file_too(tmp_path):
    from pedit.tui.app import PeditApp

    path = write(tmp_path / "notes.txt", "one\n")
    app = PeditApp(path, load=lambda spec: (ReferenceBackend(), None), model="reference")
    path.write_text("one\ntwo (saved by another editor)\n")
    with pytest.raises(ConflictError):
        fileio.write(app.source, "one!\n")
    assert path.read_text() == "one\ntwo (saved by another editor)\n"


# --- 2. answers that are not a whole rewrite ---------------------------------------------

# the scripted answers below are ones a fix's skeleton grammar would not let a model write
# (no closing fence, an empty answer, other text): they test the guard, the second line,
# as a server's answer (no grammar) reaches it
NO_GRAMMAR = ("--no-skeleton",)


def test_an_answer_that_never_closes_its_fence_is_not_written(tmp_path, answering):
    essay = write(tmp_path / "essay.md", ESSAY)
    backend = answering(FIXED)
    backend.target = backend.tokenize(FIXED) + backend.target[-1:]  # no closing fence: text, then EOS
    result = invoke("fix", essay, "-y", "--speculate", "off", *NO_GRAMMAR)
    assert result.exit_code == 5
    assert result.stderr.strip().splitlines()[-1] == (
        "pedit: error: essay.md: the model's answer ended after 77 tokens without closing its code "
        "block (an incomplete rewrite); nothing written (--force to write it anyway)"
    )
    assert essay.read_text() == ESSAY
    forced = invoke("fix", essay, "-y", "--force", "--speculate", "off", *NO_GRAMMAR)  # the user's call
    assert forced.exit_code == 0 and essay.read_text() == FIXED


def test_an_answer_that_stops_early_is_not_written(tmp_path):
    rep = write(tmp_path / "rep2.md", "a line of text\n" * 50)  # the reproduction
    result = invoke("edit", rep, "fix grammar", "-y", *REF)
    assert result.exit_code == 5
    assert result.stderr.strip().splitlines()[-1] == (
        "pedit: error: rep2.md: the model's answer stops early: it is the file's first 3 of 50 lines; "
        "nothing written (--force to write it anyway)"
    )
    assert rep.read_text() == "a line of text\n" * 50


def test_a_chunked_file_with_an_unclosed_chunk_is_not_written(tmp_path):
    rep = write(tmp_path / "rep3.md", "a line of text\n" * 700)  # 10,500 bytes: 3 chunks
    result = invoke("edit", rep, "fix grammar", "-y", *REF, "--speculate", "off")
    assert "part 1 of 3" in result.stderr
    assert result.exit_code == 5 and "nothing written" in result.stderr
    assert rep.read_text() == "a line of text\n" * 700


def test_an_answer_closed_at_once_is_not_written(tmp_path, answering):
    essay = write(tmp_path / "essay.md", ESSAY)
    answering("")
    result = invoke("fix", essay, "-y", "--speculate", "off", *NO_GRAMMAR)
    assert result.exit_code == 5
    assert result.stderr.strip().splitlines()[-1] == (
        "pedit: error: essay.md: the model's answer is empty; nothing written"
    )
    assert essay.read_text() == ESSAY


@pytest.mark.parametrize("mode", [("-y",), ("--stdout",)])
@pytest.mark.parametrize("answer", ["", "\n\n"])
def test_an_empty_answer_is_never_written_even_forced(tmp_path, answering, mode, answer):
    """Issue 28 #10: a model that stops at once (end of turn, no closing fence) gave an
    answer --force wrote: the file emptied. An empty answer (or blank lines only) for a
    file with text is never written nor printed, --force or not; exit 5."""
    essay = write(tmp_path / "essay.md", ESSAY)
    backend = answering(answer)
    backend.target = backend.tokenize(answer) + [backend.eos]  # no closing fence
    for force in ([], ["--force"]):
        result = invoke("edit", essay, "x", *mode, *force, "--speculate", "off")
        assert result.exit_code == 5, result.output
        assert result.stderr.strip().splitlines()[-1] == (
            "pedit: error: essay.md: the model's answer is empty; nothing written"
        )
        assert result.stdout == ""
        assert essay.read_bytes() == ESSAY.encode()


def test_an_empty_summary_is_refused(tmp_path, answering):
    essay = write(tmp_path / "essay.md", ESSAY)
    backend = answering("")
    backend.target = [backend.eos]
    result = invoke("summarize", essay, "--speculate", "off")
    assert result.exit_code == 5, result.output
    assert result.stderr.strip().splitlines()[-1] == (
        "pedit: error: essay.md: the model's answer is empty; nothing printed"
    )
    assert result.stdout == ""


def test_an_answer_closed_by_a_shorter_fence_is_the_file(tmp_path, answering):
    readme = "# Tool\n\nInstall it:\n\n```bash\npip install tool\n```\n\nThen run it.\n"
    path = write(tmp_path / "README.md", readme)
    fixed = readme.replace("Then run it.", "Then, run it.")
    answering(fixed, fence="```")  # pedit's fence is ````; the model closes with ```
    result = invoke("fix", path, "-y", "--speculate", "off", *NO_GRAMMAR)
    assert result.exit_code == 0, result.stderr
    assert path.read_text() == fixed  # no stray ``` line at the end


def test_an_unclosed_answer_that_reached_the_files_end_is_the_file(tmp_path, answering):
    """A README that ends with a code block: the model wrote the whole file, took the
    block's closing ``` for its own and stopped (the default model did this to
    jinja_readme.md of the corpus). That is the file; stopping earlier is not."""
    readme = "# Tool\n\nIts use in a nut shell:\n\n```bash\ntool run\ntool stop\n```\n"
    path = write(tmp_path / "README.md", readme)
    fixed = readme.replace("nut shell", "nutshell")
    backend = answering(fixed)
    backend.target = backend.tokenize(fixed.rstrip("\n")) + backend.target[-1:]  # no ````: EOS
    result = invoke("fix", path, "-y", "--speculate", "off", *NO_GRAMMAR)
    assert result.exit_code == 0, result.stderr
    assert path.read_text() == fixed
    early = fixed.split("tool stop")[0]
    backend.target = backend.tokenize(early) + backend.target[-1:]
    result = invoke("fix", write(path, readme), "-y", "--speculate", "off", *NO_GRAMMAR)
    assert result.exit_code == 5 and "without closing its code block" in result.stderr
    assert path.read_text() == readme


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_an_empty_file_has_nothing_to_fix_and_loads_no_model(tmp_path, content):
    empty = write(tmp_path / "empty.md", content)
    # a model that does not exist: loading it would fail (exit 3)
    result = invoke("fix", empty, "-y", "-m", tmp_path / "no-such-model.gguf")
    assert result.exit_code == 0
    assert result.stderr.strip() == "pedit: empty.md: empty, nothing to rewrite; the model was not called"
    assert empty.read_text() == content


# --- 4. the guard before any write -------------------------------------------------------


PROSE = (
    "The first paragraph has a few words in it and a typo or two, like recieve.\n\n"
    "The second paragraph says something else entirely, about the weather in spring.\n\n"
    "The third paragraph ends the text with a short remark about nothing much.\n"
)


@pytest.mark.parametrize(
    ("new", "why"),
    [
        (PROSE.replace("recieve", "receive"), None),
        (PROSE.split("\n\n", 1)[0] + "\n\n" + PROSE.split("\n\n", 2)[2], "a fix drops a paragraph"),
        (PROSE + "\n" + PROSE.split("\n\n")[1] + "\n", "a fix duplicates a paragraph"),
        (PROSE + "\nA new paragraph the model made up from thin air today.\n", "a fix adds a paragraph"),
        (" ".join(w if i % 3 else w.upper() for i, w in enumerate(PROSE.split(" "))), "a fix changes"),
    ],
)
def test_guard_on_prose(new, why):
    found = guard.judge("notes.md", PROSE, new, judged=True)
    assert (found is None) if why is None else found.reason.startswith(why), found
    assert guard.judge("notes.md", PROSE, new, judged=False) is None  # an edit may change anything


def test_a_short_paragraph_whose_words_a_fix_corrects_would_change(tmp_path, answering):
    """Issue 26: three of the five words corrected is a fix of the paragraph, not a drop."""
    path = write(tmp_path / "n.md", "This sentense have two mistake.\n")
    answering("This sentence has two mistakes.\n")
    result = invoke("fix", path, "--check", "--speculate", "off")
    assert result.exit_code == 1, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "pedit: n.md: would change"
    assert path.read_text() == "This sentense have two mistake.\n"
    assert invoke("fix", path, "-y", "--speculate", "off").exit_code == 0
    assert path.read_text() == "This sentence has two mistakes.\n"


def test_guard_on_size():
    text = "".join(f"{' ' * 32}line {i} of an indented list\n" for i in range(20))
    flat = text.replace(" " * 32, "")  # the same words, the layout gone
    assert guard.judge("a.txt", text, flat, judged=True) == guard.Refusal(
        reason=f"a fix shrinks the file from {len(text)} to {len(flat)} characters"
    )


def test_guard_on_code_allows_comments_and_strings_only():
    code = (
        'def area(r):\n    # teh area of a circel\n    return 3.14 * r * r  # "pi"\n\nMSG = "Hello wrold"\n'
    )
    prose_fixed = code.replace("teh", "the").replace("circel", "circle").replace("wrold", "world")
    assert guard.judge("geo.py", code, prose_fixed, judged=True) is None
    renamed = code.replace("area(r)", "area(radius)")
    assert guard.judge("geo.py", code, renamed, judged=True) == guard.Refusal(
        reason="a fix changes code, not only comments and strings (line 1: 'r' -> 'radius')"
    )
    assert guard.judge("geo.py", code, renamed, judged=False) is None


@pytest.mark.parametrize(
    ("name", "old", "bad"),
    [
        ("a.py", "x = 1\n", "x = = 1\n"),
        ("a.json", '{"a": 1}\n', '{"a": 1,}\n'),
        ("a.toml", "a = 1\n", "a = \n"),
        ("a.yaml", "a: 1\nb: [1, 2]\n", "a: 1\nb: [1, 2\n"),
    ],
)
def test_structured_files_must_still_parse(name, old, bad):
    assert guard.judge(name, old, bad, judged=False).reason.startswith("the rewrite is not valid ")
    broken = "a: [1\n" if name.endswith(".yaml") else "not { valid"
    assert guard.judge(name, broken, bad, judged=False) is None  # broken before: nothing to keep


def test_the_guard_refuses_in_every_writing_mode_and_force_overrides(tmp_path, answering, monkeypatch):
    essay = write(tmp_path / "essay.md", PROSE)
    write(tmp_path / "pyproject.toml", "[tool.pedit]\nchunk_tokens = 0\n")  # the answer is the whole file's
    monkeypatch.chdir(tmp_path)
    first, _, third = PROSE.split("\n\n")
    dropped = first + "\n\n" + third
    answering(dropped)
    reason = 'a fix drops a paragraph ("The second paragraph says something else…")'
    for mode, code in (("-y", 5), ("--check", 5)):
        result = invoke("fix", essay, mode, "--speculate", "off", *NO_GRAMMAR)
        assert result.exit_code == code and essay.read_text() == PROSE
        said = result.stderr.strip().splitlines()[-1]
        assert said.startswith("pedit: error: essay.md: ") and reason in said
    diff = invoke("fix", essay, "--diff", "--speculate", "off", *NO_GRAMMAR)
    assert diff.exit_code == 0 and "-The second paragraph" in diff.stdout
    assert "pedit would not write it without --force" in diff.stderr
    stats = tmp_path / "stats.json"
    invoke("fix", essay, "-y", "--speculate", "off", "--stats-json", stats)
    (one,) = json.loads(stats.read_text())["files"]  # one record for the file, with its figures
    assert one["file"] == "essay.md" and one["completion_tokens"] > 0
    record = json.loads(invoke("fix", essay, "--json", "--speculate", "off", *NO_GRAMMAR).stdout)[0]
    assert record["refused"].startswith("a fix drops a paragraph") and not record["written"]
    forced = invoke("fix", essay, "-y", "--force", "--speculate", "off", *NO_GRAMMAR)
    assert forced.exit_code == 0 and essay.read_text() == dropped
    assert "written (forced: a fix drops a paragraph" in forced.stderr


# --- 6. binary files ----------------------------------------------------------------------


def test_a_nul_byte_anywhere_is_binary(tmp_path):
    path = tmp_path / "late.txt"
    path.write_bytes(b"text line\n" * 1000 + b"\0tail\n")  # past the first 8 KiB
    result = invoke("fix", path, "--check", *REF)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"pedit: error: {path}: looks binary (contains NUL bytes)"
    with pytest.raises(UsageError, match="control bytes"):
        fileio.decode(b"caf\xe9\n" * 3000 + b"\x01", "x")  # latin-1 with a control byte late


# --- 11, 12. the files named ----------------------------------------------------------------


def test_the_same_file_named_twice_is_rewritten_once(tmp_path, monkeypatch):
    essay = write(tmp_path / "a.md", ESSAY)
    (tmp_path / "link.md").symlink_to(essay)
    monkeypatch.chdir(tmp_path)
    result = invoke("fix", "a.md", "./a.md", "link.md", str(essay), "--json", *REF)
    assert result.exit_code == 0, result.stderr
    assert [r["file"] for r in json.loads(result.stdout)] == ["a.md"]


def test_file_errors_come_before_any_model_work(tmp_path):
    missing_model = ("-m", tmp_path / "no-such-model.gguf")  # loading it would be exit 3
    assert invoke("fix", tmp_path / "typo.md", "-y", *missing_model).exit_code == 2
    ro = write(tmp_path / "ro.md", ESSAY)
    ro.chmod(0o444)
    result = invoke("fix", ro, "-y", *missing_model)
    assert result.exit_code == 2 and "read-only file" in result.stderr
    assert "loading" not in result.stderr
    # a good file beside a bad one: the bad one is said first, the good one still runs
    good = write(tmp_path / "good.md", ESSAY)
    result = invoke("fix", tmp_path / "typo.md", good, "--check", *REF)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == f"pedit: error: {tmp_path / 'typo.md'}: no such file"
