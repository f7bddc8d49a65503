"""The yes/no question (cli/ask.py) read from a real pipe: the answers click.confirm takes,
one line taken per question (the next question's line stays in the pipe), and the end of
input is click.Abort (exit 130 through the app). Ctrl-C on a real terminal, at the moment
the question appears on a busy machine: tests/test_project_atomic.py."""

from __future__ import annotations

import os

import click
import pytest

from pedit.cli import ask


def answers(monkeypatch, typed: bytes, questions: int) -> list[bool]:
    read, write = os.pipe()
    os.write(write, typed)
    os.close(write)
    with os.fdopen(read, "r") as stdin:
        monkeypatch.setattr("sys.stdin", stdin)
        return [ask.confirm(f"Apply to file {i}?") for i in range(questions)]


def test_each_question_takes_one_line(monkeypatch, capsys):
    typed = b"y\nNo\n\nmaybe\nYES\n"
    assert answers(monkeypatch, typed, 4) == [True, False, False, True]
    err = capsys.readouterr().err
    assert err.count("[y/N]: ") == 5 and err.count("Error: invalid input") == 1


def test_the_end_of_input_aborts(monkeypatch):
    with pytest.raises(click.Abort):
        answers(monkeypatch, b"y\n", 2)


def test_a_last_line_without_its_newline_is_an_answer(monkeypatch):
    assert answers(monkeypatch, b"y", 1) == [True]
