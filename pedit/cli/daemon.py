"""`pedit daemon`: the resident models of this user (resident/): `status` shows each one's
model, memory, idle time and queue; `stop` stops them. A command starts one when it needs a
model; it goes after the keep-alive (keep_alive, PEDIT_KEEP_ALIVE: 5 minutes by default)."""

from __future__ import annotations

import json
import time

import typer
from rich.console import Console
from rich.table import Table

from ..resident.client import ResidentUnavailable, ask, residents
from ..resident.protocol import Failure

app = typer.Typer(help="The resident model: `pedit daemon status`, `pedit daemon stop`.")


def _found() -> list[dict]:
    out = []
    for key in residents():
        try:
            status = ask(key, "status")
        except ResidentUnavailable:
            continue  # stale, or another version's: the next command cleans it up
        if isinstance(status, dict):
            out.append({"key": key, **status})
    return out


@app.callback(invoke_without_command=True)
def daemon_group(ctx: typer.Context):
    """The resident model: `pedit daemon status`, `pedit daemon stop`."""
    if ctx.invoked_subcommand is None:
        status()


@app.command("status")
def status(
    as_json: bool = typer.Option(False, "--json", help="Print the status as JSON.", show_default=False),
):
    """Show each resident model: its model, memory, idle time, keep-alive and queue."""
    found = _found()
    if as_json:
        typer.echo(json.dumps(found, indent=2))
        return
    console = Console()
    if not found:
        console.print("no resident model (a command starts one; keep_alive 0 turns it off)")
        _cache_line(console)
        return
    table = Table(title="pedit daemon", title_justify="left")
    right = ("pid", "memory", "queue", "served")
    for column in ("pid", "model", "backend", "build", "memory", "idle", "keeps it", "busy", "queue", "served"):
        table.add_column(column, justify="right" if column in right else "left")
    for s in found:
        keep = "forever" if s["keep_alive"] < 0 else _duration(s["keep_alive"])
        keep = "as long as it" if s.get("owner") else keep
        model = s["model"] + (f" ({s['owner']})" if s.get("owner") else "")  # pedit serve's
        table.add_row(
            str(s["pid"]), model, s["backend"], s["version"], f"{s['rss_bytes'] / 1e6:,.0f} MB",
            _duration(s["idle_seconds"]), keep, "yes" if s["busy"] else "no", str(s["queue"]),
            str(s["served"]),
        )  # fmt: skip
    console.print(table)
    _cache_line(console)


def _cache_line(console: Console) -> None:
    """The answer cache's size against its bound (answer_cache_mb), and this pedit's build."""
    from .. import models
    from ..app import config
    from ..app.answercache import AnswerCache
    from ..identity import build

    from ..errors import PeditError

    try:
        settings = config.resolve({})
    except PeditError:  # a broken config says so in the commands that use it
        return
    cache = AnswerCache(models.cache_root() / "answers", warn=lambda line: None, limit=settings.answer_cache_mb << 20)
    count, size = cache.store.size()
    console.print(
        f"answer cache: {count} answer{'s' if count != 1 else ''}, {size / 1e6:,.1f} MB of "
        f"{settings.answer_cache_mb} MB (answer_cache_mb); this pedit: {build()}", highlight=False,
        soft_wrap=True,
    )  # fmt: skip


@app.command("stop")
def stop():
    """Stop every resident model of this user (a request running finishes first); one that
    `pedit serve` holds goes when the server stops."""
    stopped = []
    for key in residents():
        try:
            pid = ask(key, "stop")
        except ResidentUnavailable:
            continue
        if isinstance(pid, Failure):  # pedit serve's model
            typer.echo(f"pedit: {pid.message}", err=True)
            continue
        stopped.append(pid)
    deadline = time.monotonic() + 30
    while any(key for key in residents() if _answers(key, stopped)) and time.monotonic() < deadline:
        time.sleep(0.05)
    typer.echo(f"stopped {len(stopped)} resident model{'s' if len(stopped) != 1 else ''}")


def _answers(key: str, stopped: list[int]) -> bool:
    """Whether one of the stopped residents still answers at `key` (a server's does not stop)."""
    try:
        got = ask(key, "status")
    except ResidentUnavailable:
        return False
    return isinstance(got, dict) and got.get("pid") in stopped


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
