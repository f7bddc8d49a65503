"""Errors a user can act on, each with its documented exit code (docs/cli.md)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  # done, or nothing to change
    CHANGED = 1  # --check: the file would change
    USAGE = 2  # bad arguments or bad input file
    MODEL = 3  # the model is missing, corrupt, cannot be downloaded or cannot be loaded
    CONFLICT = 4  # the file changed on disk since pedit read it, or another pedit holds it
    REFUSED = 5  # the answer is not a safe rewrite (incomplete, or a guard refused it)
    INTERNAL = 70  # a bug in pedit (EX_SOFTWARE); please report it
    RECOVERED = 75  # the interactive session ended on a bug; its unsaved accepted text was kept (EX_TEMPFAIL)
    HANGUP = 129  # SIGHUP (128 + 1): the terminal closed
    INTERRUPTED = 130  # Ctrl-C
    TERMINATED = 143  # SIGTERM (128 + 15)


class PeditError(Exception):
    """An error with a one-line message for the user and an exit code."""

    exit_code = ExitCode.INTERNAL

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class UsageError(PeditError):
    exit_code = ExitCode.USAGE


class ModelError(PeditError):
    exit_code = ExitCode.MODEL


class ConflictError(PeditError):
    """The file is not what pedit read (changed, replaced, relinked) or is being rewritten
    by another pedit: nothing was written."""

    exit_code = ExitCode.CONFLICT


class RefusedError(PeditError):
    """The model's answer is not written: it is not a whole rewrite (cut off, no closing
    fence, empty) or a guard found it unsafe (see pedit/checks/guard.py); `force` says whether
    --force may override it."""

    exit_code = ExitCode.REFUSED

    def __init__(self, message: str, *, force: bool = False, reason: str = ""):
        super().__init__(message)
        self.forceable = force
        self.reason = reason or message  # what is wrong, without the file's name


class InternalError(PeditError):
    """A bug in pedit, said in one line (exit 70)."""

    exit_code = ExitCode.INTERNAL


class RecoveredError(PeditError):
    """The interactive session ended on a bug, and its accepted, unsaved text was kept in a
    recovery file (app/recovery.py), which the message names (exit 75)."""

    exit_code = ExitCode.RECOVERED


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Python next runs (cli.main installs the handler): like Ctrl-C,
    every temporary file is removed and the file is untouched; exit 143."""


class HungUp(KeyboardInterrupt):
    """SIGHUP (the terminal closed, or `kill -HUP`), raised as Terminated is: the same
    clean-up, exit 129."""


class Cancelled(BaseException):
    """A run stopped from outside (its threading.Event set: Ctrl-C, an error, a budget spent
    elsewhere), raised by the run's own check between events. Not an error, so not an
    Exception: no `except Exception` on the way swallows it; nothing waits for its result."""
