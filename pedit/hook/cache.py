"""Hook results by content: an unchanged file costs nothing on the next commit.

key = sha256(pedit version, model, backend, rule (command, instruction, system), sampling,
the text). A rewrite is stored under the key of its input, and under the key of its own
output too (the fixed text needs no fix: committing it again loads no model).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from .. import __version__
from .rules import HookConfig, Rule


class ResultCache:
    def __init__(self, directory: Path):
        self.directory = directory

    def key(self, text: str, rule: Rule, config: HookConfig, model: str, backend: str) -> str:
        parts = [__version__, model, backend, rule.command, rule.instruction, rule.system,
                 config.temperature, config.seed, text]  # fmt: skip
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.txt"

    def get(self, key: str) -> str | None:
        try:
            return self._path(key).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def put(self, key: str, text: str) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        except OSError:
            pass  # a cache that cannot be written only costs time
