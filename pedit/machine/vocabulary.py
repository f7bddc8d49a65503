"""The model's token table (every token's bytes), what a grammar's tokenizer is built from
(engine/grammar.py), cached on disk per model: read in a few milliseconds instead of the
~0.4 s of 150k calls into llama.cpp that every process with a grammar (a fix under its
skeleton's) paid again. Keyed by the model's file (calibration.identity) and vocabulary
size; an entry that cannot be read or is not the right size is built again and
overwritten, and a cache that cannot be written costs a warning line, never the run.

    file: b"PVOC1" | n (uint32) | n lengths (uint32 each) | the tokens' bytes, in order
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import numpy as np

from .. import models
from ..models.cachefile import warn_stderr, write_cache_bytes
from .calibration import identity

MAGIC = b"PVOC1"


def path_for(backend) -> Path:
    key = hashlib.sha256(f"{identity(backend)}|{backend.n_vocab}".encode()).hexdigest()[:20]
    return models.cache_root() / "vocab" / f"{key}.bin"


def table(backend, warn=warn_stderr) -> list[bytes]:
    """Every token's bytes, token_bytes(i) for i < n_vocab: from the cache, or read from
    the backend and cached."""
    where = path_for(backend)
    got = _read(where, backend.n_vocab)
    if got is not None:
        return got
    tokens = [backend.token_bytes(i) for i in range(backend.n_vocab)]
    try:
        _write(where, tokens)
    except OSError as exc:
        warn(f"cannot write the token table cache ({exc}); it is read again next time")
    return tokens


def _read(path: Path, n: int) -> list[bytes] | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(MAGIC) + 4
    if len(data) < head or not data.startswith(MAGIC) or struct.unpack("<I", data[len(MAGIC) : head])[0] != n:
        return None
    lengths = np.frombuffer(data, dtype="<u4", count=n, offset=head) if len(data) >= head + 4 * n else None
    if lengths is None or head + 4 * n + int(lengths.sum()) != len(data):
        return None
    ends = (np.cumsum(lengths) + head + 4 * n).tolist()
    starts = [head + 4 * n, *ends[:-1]]
    return [data[a:b] for a, b in zip(starts, ends, strict=True)]


def _write(path: Path, tokens: list[bytes]) -> None:
    lengths = np.fromiter((len(t) for t in tokens), dtype="<u4", count=len(tokens))
    write_cache_bytes(path, MAGIC + struct.pack("<I", len(tokens)) + lengths.tobytes() + b"".join(tokens))
