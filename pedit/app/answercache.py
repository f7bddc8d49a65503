"""Answers by content: the same model, settings, instruction and file give the answer again
with no pass and no model, in any process (the hook's results are kept the same way:
hook/cache.py).

    key = sha256(pedit's build (identity.py: the version and its code's fingerprint),
                 the model (a file's size and time too) and its load
                 settings, the job (template, instruction, the engine's options, system,
                 force, chunk_tokens), the file's name and text)

A file cut in runs keeps each piece's answer too (wholefile.rewrite), keyed by the model,
the job and the piece's request and grammar, and the pieces of its last cut (keyed by the
job and the file's name): a file with one paragraph changed is cut as before wherever its
text is the same (chunking.rechunk), and runs that paragraph's piece alone. Only a complete answer is kept (its stream returned an Outcome,
a piece its run's answer that the guard let through), and only one without an intent's
check (a refactor's verdict is the check of that run, and is made again). An entry
is JSON and is used only when it is exactly that, for that key: a damaged or foreign file
is a miss. When the cache cannot be written, the command says so once and goes on.

The folder is trusted only when it is the user's alone, entries are read with no link
followed and at most a size, and the cache is bounded (answer_cache_mb, least recently
used out): models/entrystore.py.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path

from ..identity import build
from ..events import Stats
from ..models.cachefile import warn_stderr
from ..models.entrystore import DEFAULT_LIMIT, EntryStore
from .outcome import Outcome


@dataclass(frozen=True)
class Entry:
    text: str
    notes: tuple[str, ...]
    tokens: int | None  # the file's tokens (a rewrite's record)


def job_key(*parts: object) -> str:
    """The key of a job from its parts (each given by its repr: frozen dataclasses of plain
    values, the same in every process)."""
    model = parts[0]
    stat = ""
    if isinstance(model, str) and os.path.exists(model):  # a model given by its path: its file's state
        st = os.stat(model)
        stat = f"{st.st_size}|{st.st_mtime_ns}"
    text = json.dumps([build(), stat, *(repr(p) for p in parts)])
    return hashlib.sha256(text.encode()).hexdigest()


class AnswerCache:
    def __init__(self, directory: Path, warn: Callable[[str], None] = warn_stderr, limit: int = DEFAULT_LIMIT):
        self.directory = directory
        self.store = EntryStore(directory, "the answer cache", limit, warn)

    def get(self, key: str) -> Entry | None:
        try:
            entry = json.loads(self.store.read(key) or "null")
        except ValueError:
            return None
        ok = isinstance(entry, dict) and entry.get("key") == key and isinstance(entry.get("text"), str)
        notes, tokens = entry.get("notes", []) if ok else [], entry.get("tokens") if ok else None
        if not ok or not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            return None
        return Entry(entry["text"], tuple(notes), tokens if type(tokens) is int else None)

    def put(self, key: str, outcome: Outcome, tokens: int | None) -> None:
        if outcome.verdict is not None:
            return
        entry = {"key": key, "text": outcome.text, "notes": list(outcome.notes), "tokens": tokens}
        self.store.write(key, json.dumps(entry))

    def put_text(self, key: str, text: str) -> None:
        """A piece's answer (wholefile.rewrite: a file cut in runs)."""
        self.put(key, Outcome(text=text, stats=[]), None)

    def cut(self, key: str) -> list[str]:
        """The pieces of a file's last cut (wholefile.rewrite), or [] if none is kept."""
        entry = self.get(key)
        try:
            pieces = json.loads(entry.text) if entry else []
        except ValueError:
            return []
        return pieces if isinstance(pieces, list) and all(isinstance(p, str) for p in pieces) else []

    def put_cut(self, key: str, pieces: list[str]) -> None:
        self.put_text(key, json.dumps(pieces))

    def kept(self, key: str, stream: Generator, tokens: int | None) -> Generator:
        """`stream`, its Outcome kept under `key` when it completes."""
        outcome = yield from stream
        self.put(key, outcome, tokens)
        return outcome


def replay(entry: Entry) -> Generator:
    """A stream with no run that returns the kept answer (its figures: no pass)."""
    return Outcome(text=entry.text, stats=[_none()], notes=list(entry.notes))
    yield  # a generator: nothing to yield


def _none() -> Stats:
    return Stats(prompt_tokens=0, completion_tokens=0, forward_passes=0, prefill_seconds=0.0,
                 decode_seconds=0.0, stop_reason="cached")  # fmt: skip
