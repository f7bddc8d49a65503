"""Errors a user can act on, each with its documented exit code (docs/cli.md)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  # done, or nothing to change
    CHANGED = 1  # --check: the file would change
    USAGE = 2  # bad arguments or bad input file
    MODEL = 3  # the model is missing, corrupt, cannot be downloaded or cannot be loaded
    INTERNAL = 70  # a bug in pedit (EX_SOFTWARE); please report it
    INTERRUPTED = 130  # Ctrl-C


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
