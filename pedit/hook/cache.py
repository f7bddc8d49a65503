"""Hook results by content: an unchanged file costs nothing on the next commit.

key = sha256(pedit's build (identity.py), model, backend, rule (command, instruction, system), sampling,
the text). A rewrite is stored under the key of its input, and under the key of its own
output too (the fixed text needs no fix: committing it again loads no model).

An entry is JSON {"key", "text"} and is used only when it is exactly that, for that key: a
truncated, damaged or foreign file is a miss, never a rewrite. The cache only saves time:
when it cannot be written, the hook says so once and goes on without it. The folder is
trusted and bounded as the answer cache's is (models/entrystore.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from ..identity import build
from ..models.cachefile import warn_stderr
from ..models.entrystore import EntryStore
from .rules import HookConfig, Rule


class ResultCache:
    def __init__(self, directory: Path, warn: Callable[[str], None] = warn_stderr):
        self.directory = directory
        self.store = EntryStore(directory, "the hook's result cache", warn=warn)

    def key(
        self,
        text: str,
        rule: Rule,
        config: HookConfig,
        model: str,
        backend: str,
        keep_bias: float = 0.0,
        recipe: tuple = (None, None),
    ) -> str:
        """`recipe`: the spelling, chunk_tokens and skeleton settings (None: the command's own,
        which the version keys; a fix under the skeleton's grammar answers otherwise than one
        without, so the setting is always in the key)."""
        parts = [build(), model, backend, rule.command, rule.instruction, rule.system,
                 config.temperature, config.seed, text]  # fmt: skip
        if keep_bias:  # the same key as before for the default
            parts.append(keep_bias)
        if recipe != (None, None):
            parts.append(list(recipe))
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()

    def get(self, key: str) -> str | None:
        try:
            entry = json.loads(self.store.read(key) or "null")
        except ValueError:  # not JSON
            return None
        if isinstance(entry, dict) and entry.get("key") == key and isinstance(entry.get("text"), str):
            return entry["text"]
        return None

    def put(self, key: str, text: str) -> None:
        self.store.write(key, json.dumps({"key": key, "text": text}))
