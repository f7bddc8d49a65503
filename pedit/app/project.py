"""The project a file belongs to: the files a rename of one of its names must see.

    root  = the git work tree holding the file (`git rev-parse --show-toplevel`), else the
            nearest folder above it with a pyproject.toml, setup.cfg or setup.py
    files = git's tracked files and its untracked ones that are not ignored
            (`git ls-files --cached --others --exclude-standard`), or every file under a
            marker's root; never a vendored folder, a virtual environment, site-packages,
            a hidden folder or a build's output (EXCLUDED, or a folder with a pyvenv.cfg)

A file in neither (a loose script) has no project: its rename is the file's alone, as
with --no-project.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MARKERS = ("pyproject.toml", "setup.cfg", "setup.py")
# folders whose files are not the project's own code: vendored copies, environments, builds
EXCLUDED = frozenset({
    "vendor", "vendored", "_vendor", "third_party", "thirdparty", "site-packages", "dist-packages",
    "node_modules", "venv", "__pycache__", "build", "dist", "__pypackages__",
})  # fmt: skip
MAX_FILES = 20_000  # more is a monorepo or a folder of data: pedit does not rename across it
GIT_SECONDS = 30


class TooLarge(ValueError):
    """More files than MAX_FILES of one kind."""


@dataclass(frozen=True)
class Project:
    root: Path  # resolved
    how: str  # "git" or the marker file's name
    files: tuple[PurePosixPath, ...]  # every file of the project, relative to root, sorted

    def of_kind(self, suffixes: tuple[str, ...]) -> tuple[PurePosixPath, ...]:
        """The project's files with one of `suffixes` (".py", ...); TooLarge past MAX_FILES."""
        out = tuple(f for f in self.files if f.suffix.lower() in suffixes)
        if len(out) > MAX_FILES:
            raise TooLarge(f"{self.root}: {len(out)} files, more than pedit renames across ({MAX_FILES})")
        return out

    def relative(self, path: Path) -> PurePosixPath:
        return PurePosixPath(path.resolve().relative_to(self.root).as_posix())


def find(path: Path) -> Project | None:
    """The project of the file at `path` (None: a file of no project)."""
    folder = path.resolve().parent
    top = _git_root(folder)
    if top is not None:
        return Project(top, "git", tuple(sorted(_kept(_git_files(top), top))))
    for parent in (folder, *folder.parents):
        marker = next((m for m in MARKERS if (parent / m).is_file()), None)
        if marker is not None:
            return Project(parent, marker, tuple(sorted(_kept(_walk(parent), parent))))
    return None


def _git(args: list[str], cwd: Path) -> bytes | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, timeout=GIT_SECONDS, check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},  # a read must not take the index lock
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):  # no git on the machine, or a hung file system
        return None
    return done.stdout if done.returncode == 0 else None


def _git_root(folder: Path) -> Path | None:
    out = _git(["rev-parse", "--show-toplevel"], folder)
    if not out or not out.strip():
        return None
    return Path(os.fsdecode(out.strip())).resolve()


def _git_files(root: Path) -> list[PurePosixPath]:
    out = _git(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], root) or b""
    names = dict.fromkeys(os.fsdecode(n) for n in out.split(b"\0") if n)  # a conflict lists a file thrice
    return [PurePosixPath(n) for n in names if (root / n).is_file()]  # tracked but deleted: gone


def _walk(root: Path) -> list[PurePosixPath]:
    out = []
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        dirs[:] = [d for d in dirs if not _excluded_dir(here / d, d)]
        out += [PurePosixPath((here / n).relative_to(root).as_posix()) for n in names]
    return out


def _excluded_dir(path: Path, name: str) -> bool:
    hidden_or_built = name.startswith(".") or name in EXCLUDED or name.endswith(".egg-info")
    return hidden_or_built or (path / "pyvenv.cfg").exists()


def _kept(files: list[PurePosixPath], root: Path) -> list[PurePosixPath]:
    """`files` less those under an excluded folder (git's list too: a committed vendor copy)."""
    venvs: dict[PurePosixPath, bool] = {}

    def excluded(folder: PurePosixPath) -> bool:
        if folder not in venvs:
            venvs[folder] = _excluded_dir(root / folder, folder.name)
        return venvs[folder]

    return [f for f in files if not any(excluded(p) for p in f.parents if p.name)]
