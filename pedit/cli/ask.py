"""A yes/no question on the terminal that Ctrl-C always ends.

`click.confirm` reads through `input()`, which prints the prompt and then blocks in the C
library; a SIGINT that lands between the two (the user's Ctrl-C as the question appears, on
a busy machine) only sets Python's flag, and the read goes on waiting: pedit hangs until
Enter. Here the wait is Python's own `select` with a short timeout, so a pending Ctrl-C is
met within `TICK` seconds wherever it landed. Input that `select` cannot wait on (a test
runner's fake stream) goes to `click.confirm` as before."""

from __future__ import annotations

import io
import os
import select
import sys

import click

TICK = 0.2  # seconds: the longest a Ctrl-C can wait before it is seen


def confirm(question: str) -> bool:
    """`question [y/N]: ` on stderr; True on y/yes, False on n/no or Enter. Ctrl-C or the end
    of input raises click.Abort, as click.confirm does."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return click.confirm(question, default=False, err=True)
    while True:
        click.echo(f"{question} [y/N]: ", nl=False, err=True)
        try:
            line = _line(fd)
        except KeyboardInterrupt:
            raise click.Abort() from None
        if line is None:  # the end of input
            raise click.Abort()
        value = line.strip().lower()
        if value in ("y", "yes"):
            return True
        if value in ("n", "no", ""):
            return False
        click.echo("Error: invalid input", err=True)


def _line(fd: int) -> str | None:
    """One line read from `fd` a byte at a time (so nothing past it is taken from a pipe
    that a later question reads), each byte waited for in ticks; None at the end of input."""
    got = bytearray()
    while True:
        while not select.select([fd], [], [], TICK)[0]:
            pass
        byte = os.read(fd, 1)
        if not byte:
            return got.decode(errors="replace") if got else None
        if byte == b"\n":
            return got.decode(errors="replace")
        got += byte
