"""The interactive session under hostile use (issue 54), through Textual's Pilot on the
reference backend: a save judged at the moment of the save as the command line's write
is, a refused text kept in a new file (F2), no user text read as markup, keys in the order
they were typed, and accepted work kept when a bug ends the session. The signals, in a
real terminal: tests/test_tui_signals.py."""

from __future__ import annotations

import fcntl
import os
import signal

import pytest
from test_tui import EDITING, TEXT, ask, make_app, ready, until
from textual import events
from textual.content import Content
from textual.widgets import Input

from pedit.app import fileio, recovery
from pedit.app.loading import Loaded
from pedit.backends.reference import ReferenceBackend
from pedit.cli.tui import ended
from pedit.errors import ModelError, RecoveredError
from pedit.tui.app import PeditApp
from pedit.tui.screens import ModelScreen, SaveAsScreen


def notices(app: PeditApp) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications]


async def accepted(pilot, app: PeditApp) -> str:
    """A turn asked and accepted whole: the session's unsaved text."""
    await ready(pilot, app)
    await ask(pilot, app, "Fix the grammar.")
    await pilot.press("a")
    assert app.session.unsaved and app.session.text != TEXT
    return app.session.text


def _read_only_file(path):
    path.chmod(0o444)
    return "read-only file, not written"


def _read_only_folder(path):
    path.parent.chmod(0o555)
    return "its directory is read-only (pedit writes a temporary file beside it)"


def _hard_link(path):
    os.link(path, path.with_name("other.txt"))
    return "has 2 hard links; rewriting would split them (--force)"


def _changed(path):
    path.write_text(TEXT + "A line from another editor.\n")
    return "changed on disk since pedit read it; nothing written"


def _deleted(path):
    path.unlink()
    return "deleted while pedit ran; nothing written"


def _folder(path):
    path.unlink()
    path.mkdir()
    return "changed on disk since pedit read it; nothing written"


@pytest.mark.parametrize(
    "hostile",
    [_read_only_file, _read_only_folder, _hard_link, _changed, _deleted, _folder],
    ids=lambda f: f.__name__,
)
async def test_a_save_is_judged_at_the_moment_of_the_save(tmp_path, hostile):
    """What `pedit fix -y` refuses at its write, the session's Ctrl+S refuses at its save,
    even when it happened after the session started (fileio.write: one function for both);
    the file is left as the other party left it, and the text is still the session's."""
    app = make_app(tmp_path)
    path = tmp_path / "notes.txt"
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            text = await accepted(pilot, app)
            reason = hostile(path)
            before = (path.read_bytes(), path.stat().st_ino) if path.is_file() else None
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert f"not saved: {path}: {reason}. F2 saves the text to another file." in notices(app)
            assert app.sub_title == f"not saved: {path}: {reason}"
            assert app.session.unsaved and app.session.text == text
            assert (before is None) == (not path.is_file())
            if before is not None:
                assert (path.read_bytes(), path.stat().st_ino) == before
            assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".pedit")]
    finally:
        tmp_path.chmod(0o755)


async def test_another_pedit_holding_the_file_refuses_the_save(tmp_path):
    app = make_app(tmp_path)
    path = tmp_path / "notes.txt"
    async with app.run_test(size=(100, 30)) as pilot:
        await accepted(pilot, app)
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as fileio.locked holds it
            await pilot.press("ctrl+s")
            await pilot.pause()
        finally:
            os.close(fd)
        assert (
            f"not saved: {path}: another pedit is rewriting it; not touched. "
            "F2 saves the text to another file." in notices(app)
        )
        assert path.read_text() == TEXT
        await pilot.press("ctrl+s")  # let go: saved
        await pilot.pause()
        assert not app.session.unsaved and path.read_text() == app.source.render(app.session.text)


async def test_a_refused_text_is_kept_in_a_new_file_never_over_one(tmp_path):
    """F2 after a refused save: FILE.pedit-rejected is offered, written in the file's own
    conventions (here CRLF), and a name that exists is refused, not written over."""
    path = tmp_path / "notes.txt"
    app = make_app(tmp_path, text=TEXT.replace("\n", "\r\n"))
    assert app.source.newline == "\r\n" and app.source.text == TEXT
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            text = await accepted(pilot, app)
            path.chmod(0o444)
            await pilot.press("ctrl+s")
            await pilot.pause()
            await pilot.press("f2")
            assert isinstance(app.screen, SaveAsScreen)
            assert app.screen.query_one(Input).value == f"{path}.pedit-rejected"
            await pilot.press("enter")
            await pilot.pause()
            kept = tmp_path / "notes.txt.pedit-rejected"
            assert kept.read_bytes() == text.replace("\n", "\r\n").encode()
            assert app.sub_title == f"the text is in {kept}; notes.txt is unchanged"
            assert (kept.stat().st_mode & 0o777) == 0o666 & ~_umask()
            kept.write_text("the user's own file\n")
            await pilot.press("f2")
            await pilot.press("enter")
            await pilot.pause()
            assert f"not saved: {kept}: already exists; not written over" in notices(app)
            assert kept.read_text() == "the user's own file\n"
            assert path.read_bytes() == TEXT.replace("\n", "\r\n").encode()
    finally:
        path.chmod(0o644)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


MARKUP = ["[/]", "[bold]", "[link=x]", "[/bold]x[/"]


async def test_no_user_text_is_read_as_markup(tmp_path):
    """A file name, a model spec, an instruction and a model's error, each holding markup,
    shown as typed in the title, the notices, the status line and the history: no
    MarkupError ends the session, and no text vanishes."""
    folder = tmp_path / "a[b]"
    folder.mkdir()
    path = folder / "notes [draft].md"
    path.write_text(TEXT)

    def load(spec):
        if spec != "reference":
            raise ModelError(f"no model at {spec}")
        return Loaded(backend=ReferenceBackend())

    app = PeditApp(path, load=load, model="reference", options=EDITING)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot, app)
        assert Content.from_markup(app.document.border_title).plain == "notes [draft].md"
        for spec in ("~/m/old[/]q.gguf", "[bold]m"):
            await pilot.press("ctrl+o")
            assert isinstance(app.screen, ModelScreen)
            app.screen.query_one(Input).value = spec
            await pilot.press("enter")
            await until(pilot, lambda spec=spec: spec in app.sub_title)
            assert f"model not loaded: no model at {spec}" in notices(app)
        instruction = " ".join(MARKUP)
        await ask(pilot, app, instruction)
        assert app.sub_title.startswith("a accept all")
        await pilot.press("a")
        assert app.sub_title == f"accepted: {instruction}"
        history = "\n".join(str(line.text) for line in app.query_one("#history").lines)
        assert f"1. accepted {instruction}" in history
        path.chmod(0o444)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert (
            f"not saved: {path}: read-only file, not written. F2 saves the text to another file."
            in notices(app)
        )
        assert app.is_running
    path.chmod(0o644)


def burst(app: PeditApp, keys: list[str]) -> None:
    """Keys as a terminal sends them when typed fast: all queued before any is handled."""
    for key in keys:
        char = {"enter": "\r", "space": " "}.get(key, key if len(key) == 1 else None)
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)


async def test_keys_typed_in_a_burst_go_where_the_focus_is_in_their_order(tmp_path):
    """The answer is finished: Enter applies its hunks, a second Enter reaches the empty
    instruction box (no turn), and the instruction typed after them is in the box, whole,
    with no turn started and nothing sent to the answer's keys."""
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot, app)
        t1 = await ask(pilot, app, "Fix the grammar.")
        burst(app, ["enter", "enter", *("space" if c == " " else c for c in "make it formal")])
        await until(pilot, lambda: app.instruction.value == "make it formal")
        for _ in range(10):
            await pilot.pause(0.02)
        assert not app.running and app.session.pending is None
        assert app.session.text == t1.answer and len(app.session.turns) == 1
        assert app.focused is app.instruction and app.instruction.value == "make it formal"
        history = [str(line.text) for line in app.query_one("#history").lines]
        assert len(history) == 1 and history[0].startswith("1. accepted Fix the grammar.")
        # and the Enter that follows, in its turn, runs the whole instruction
        burst(app, ["enter"])
        await until(pilot, lambda: app.document.mode == "diff")
        assert app.session.pending.instruction == "make it formal"


async def test_a_bug_that_ends_the_session_keeps_the_accepted_text(tmp_path):
    """An exception in the app (here in a key's handler) ends it with Textual's return code
    1: the accepted, unsaved text goes to a recovery file, in the file's encoding, the exit
    says so (75), and the next session on the file says where that text is."""
    app = make_app(tmp_path)
    path = tmp_path / "notes.txt"

    def broken(text):
        raise ZeroDivisionError("a bug in a handler")

    with pytest.raises(ZeroDivisionError):
        async with app.run_test(size=(100, 30)) as pilot:
            text = await accepted(pilot, app)
            app.document.show_file = broken
            await pilot.press("ctrl+t")  # the theme: the text is shown again
            await pilot.pause()
    assert app.return_code == 1
    with pytest.raises(RecoveredError) as got:
        ended(app, None)
    kept = recovery.path_for(path)
    assert got.value.exit_code == 75
    assert got.value.message == (
        "internal error: the session ended on a bug (its traceback is above); "
        "the accepted, unsaved text is kept "
        f"in {kept}"
    )
    assert kept.read_bytes() == app.source.encode(text) and path.read_text() == TEXT
    again = make_app(tmp_path)
    async with again.run_test(size=(100, 30)) as pilot:
        await ready(pilot, again)
        said = (
            "recovery file: An earlier session on notes.txt ended before its accepted text was saved; "
            f"that text is in {kept}"
        )
        assert said in notices(again)


async def test_a_session_that_ends_well_leaves_no_recovery_file(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await accepted(pilot, app)
        await pilot.press("ctrl+s")
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert ended(app, app.return_value) == 0
    assert recovery.found(tmp_path / "notes.txt") is None and not recovery.folder().exists()


def test_the_recovery_file_is_one_per_file_whatever_its_name(tmp_path, monkeypatch):
    (tmp_path / "d").mkdir()
    a = tmp_path / "d" / "a.md"
    a.write_text("x\n")
    monkeypatch.chdir(tmp_path)
    assert (
        recovery.path_for(a)
        == recovery.path_for(type(a)("d/a.md"))
        == recovery.path_for(type(a)("d/../d/a.md"))
    )
    other = tmp_path / "e" / "a.md"
    assert recovery.path_for(other) != recovery.path_for(a)


ENCODINGS = {
    "crlf": (TEXT.replace("\n", "\r\n").encode(), lambda b: b.count(b"\r\n") == b.count(b"\n")),
    "bom": (
        b"\xef\xbb\xbf" + TEXT.encode(),
        lambda b: b.startswith(b"\xef\xbb\xbf") and b.count(b"\xef\xbb\xbf") == 1,
    ),
    "latin-1": (
        ("Caf\u00e9 au lait.\n" + TEXT).encode("latin-1"),
        lambda b: b.decode("latin-1").startswith("Caf\u00e9"),
    ),
    "no final newline": (TEXT.rstrip("\n").encode(), lambda b: not b.endswith(b"\n")),
}


@pytest.mark.parametrize("kind", list(ENCODINGS))
async def test_a_save_after_undo_writes_that_turns_text_in_the_files_conventions(tmp_path, kind):
    """Two turns accepted, the second undone, then saved: the first turn's text, written
    with the file's encoding, BOM, newlines and final newline as they were read."""
    data, kept = ENCODINGS[kind]
    app = make_app(tmp_path)
    path = tmp_path / "notes.txt"
    path.write_bytes(data)
    app.source = fileio.read(path)
    first = app.source.text.replace("quick", "quiet")  # answers the file's encoding can hold
    second = first.replace("lazy", "idle")
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot, app)
        ran = await ask(pilot, app, "Fix the grammar.")  # a real turn; its answer replaced
        for instruction, before, answer in (
            ("Fix the grammar.", app.source.text, first),
            ("Once more.", first, second),
        ):
            app.session.pending = type(ran)(
                **{**vars(ran), "instruction": instruction, "before": before, "answer": answer}
            )
            app.document.show_diff(before, answer)
            app.screen.set_focus(app.document)  # as a finished turn leaves it
            await pilot.press("a")
        assert app.session.text == second
        await pilot.press("ctrl+z")
        assert app.session.text == first
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not app.session.unsaved
    written = path.read_bytes()
    assert kept(written) and fileio.read(path).text == app.source.render(first).replace("\r\n", "\n")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
async def test_a_signal_during_a_save_waits_for_it(tmp_path, monkeypatch, sig):
    """The signal comes while the save writes its temporary file (at its fsync): the save
    completes, no temporary file is left, and then the session ends on the signal."""
    app = make_app(tmp_path)
    path = tmp_path / "notes.txt"
    real_fsync = os.fsync

    def fsync(fd):
        os.kill(os.getpid(), sig)
        return real_fsync(fd)

    async with app.run_test(size=(100, 30)) as pilot:
        text = await accepted(pilot, app)
        monkeypatch.setattr(os, "fsync", fsync)
        await pilot.press("ctrl+s")
        await pilot.pause()
        monkeypatch.setattr(os, "fsync", real_fsync)
        await pilot.pause()
    assert app.stopped_by == sig
    assert path.read_text() == app.source.render(text) and not app.session.unsaved
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".pedit")]
