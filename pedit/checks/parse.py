"""The parse check: a file of a structured format (Python, JSON, TOML, YAML) that parsed
before a rewrite must parse after it (guard.judge, every template)."""

from __future__ import annotations

import ast
import json
import tomllib
from collections.abc import Callable
from pathlib import PurePath


def _yaml(text: str) -> None:
    import yaml

    try:
        for _ in yaml.safe_load_all(text):
            pass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        raise ValueError(f"{where}{getattr(exc, 'problem', None) or exc}") from exc


def _python(text: str) -> None:
    try:
        ast.parse(text)
    except SyntaxError as exc:
        raise ValueError(f"line {exc.lineno}: {exc.msg}") from exc


def _json(text: str) -> None:
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"line {exc.lineno}: {exc.msg}") from exc


def _toml(text: str) -> None:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(str(exc)) from exc


PARSERS: dict[str, tuple[str, Callable[[str], None]]] = {
    ".py": ("Python", _python),
    ".pyi": ("Python", _python),
    ".json": ("JSON", _json),
    ".toml": ("TOML", _toml),
    ".yaml": ("YAML", _yaml),
    ".yml": ("YAML", _yaml),
}


def parse_error(name: str, old: str, new: str) -> str | None:
    """A structured file that parsed and whose rewrite does not."""
    kind, parse = PARSERS.get(PurePath(name).suffix.lower(), (None, None))
    if parse is None:
        return None
    try:
        parse(old)
    except (ValueError, RecursionError):
        return None  # it did not parse before: nothing to keep
    try:
        parse(new)
    except (ValueError, RecursionError) as exc:
        return f"the rewrite is not valid {kind} ({exc})"
    return None
