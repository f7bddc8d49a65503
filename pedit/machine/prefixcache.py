"""The shared start of a command's prompts, read once per machine.

Every run of `fix` (every paragraph, every file, every command) begins with the same
tokens: the chat template, the system prompt, the template's instruction. Within one
process the backend keeps them (backend.held, engine/decode.prefill); across processes
this module keeps them on disk, beside the cost model: the cache's cells for exactly those
tokens, as the backend serializes them (llama.cpp: llama_state_seq_get_data).

    ready(backend, stem): held already, read alone -> nothing to do
                          a verified file for this key -> load it (no forward pass)
                          else -> read the stem alone, save its state for the next command

Either way the cache then holds exactly the stem, as one eval from position 0 reads it
(engine/decode.hold): the file holds such a reading, so the answer is the same with the
file, without it and with --no-prompt-cache, on llama.cpp too, where another split of the
prompt into batches can turn a near-tie.

The key is the backend, the model's identity (its file, size and mtime), the context size,
the backend library's version, FORMAT and the exact stem tokens. A file is used only if its
header names that key, its tokens are the stem and the SHA-256 of its state matches: a
damaged, truncated or foreign file is a miss (read again and overwritten), never a crash or
a different answer. Each file is a few MB (28 KB a token on the 1.5B model); the LRU
KEEP newest are kept. A cache that cannot be written costs one warning line per process
and directory (every later command reads the start again), never the run.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..backends import Backend, stateful
from ..backends.base import BackendError
from ..engine.decode import hold
from ..models.cachefile import warn_stderr, write_cache_bytes

FORMAT = 1
MAGIC = b"pedit-prefix-1\n"
KEEP = 16  # files kept (the least recently used go first)
SHORTEST = 16  # a stem shorter than this is not worth a file
_warned: set[Path] = set()  # directories already warned about in this process


@dataclass(frozen=True, kw_only=True)
class Ready:
    loaded: bool  # the stem came from disk
    read: int  # stem tokens read now (a miss: saved for the next time)


def key(backend, identity: str, stem: Sequence[int]) -> bytes:
    lib = getattr(backend, "library_version", "")
    text = f"{backend.name}|{identity}|{backend.n_ctx}|{lib}|{FORMAT}|{','.join(map(str, stem))}"
    return hashlib.sha256(text.encode()).digest()


def pack(k: bytes, stem: Sequence[int], state: bytes) -> bytes:
    head = MAGIC + k + struct.pack("<I", len(stem)) + struct.pack(f"<{len(stem)}i", *stem)
    return head + hashlib.sha256(state).digest() + state


def unpack(data: bytes, k: bytes, stem: Sequence[int]) -> bytes | None:
    """The state in a file's bytes, if they are a whole, undamaged entry for (k, stem)."""
    n = len(stem)
    at = len(MAGIC) + 32 + 4 + 4 * n
    if len(data) < at + 32 or not data.startswith(MAGIC) or data[len(MAGIC) : len(MAGIC) + 32] != k:
        return None
    if struct.unpack_from("<I", data, len(MAGIC) + 32)[0] != n:
        return None
    if list(struct.unpack_from(f"<{n}i", data, len(MAGIC) + 36)) != list(stem):
        return None
    state = data[at + 32 :]
    return state if hashlib.sha256(state).digest() == data[at : at + 32] else None


def ready(backend: Backend, identity: str, stem: Sequence[int], cache_dir: Path, warn=warn_stderr) -> Ready:
    """Make the backend's cache hold exactly `stem`, read alone (module docstring)."""
    n = len(stem)
    held = backend.first_read == n and list(backend.held[:n]) == list(stem)
    if held or n < SHORTEST or not stateful(backend):
        return Ready(loaded=False, read=hold(backend, stem))
    k = key(backend, identity, stem)
    path = cache_dir / f"{k.hex()[:32]}.kv"
    try:
        state = unpack(path.read_bytes(), k, stem)
    except OSError:
        state = None
    if state is not None:
        try:
            backend.load_state(stem, state)
            path.touch()
            return Ready(loaded=True, read=0)
        except BackendError:  # the backend refused it: read the stem as if there was no file
            pass
    backend.truncate(0)
    backend.eval(stem)
    try:
        write_cache_bytes(path, pack(k, stem, backend.save_state()))
        _evict(cache_dir)
    except (OSError, BackendError) as exc:
        if cache_dir not in _warned:
            _warned.add(cache_dir)
            warn(f"cannot write the prompt cache ({exc}); the prompt is read again next time")
    return Ready(loaded=False, read=n)


def _evict(cache_dir: Path) -> None:
    files = sorted(cache_dir.glob("*.kv"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in files[KEEP:]:
        old.unlink(missing_ok=True)
