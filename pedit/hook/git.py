"""The git plumbing the hook needs, as small functions over `git` subprocesses.

Staged content is read from the index (`git cat-file blob :PATH`), never from the working
tree; a fixed file goes back into the index as a new blob with the same mode
(`git hash-object -w` + `git update-index --cacheinfo`), and into the working tree by a
three-way merge (`git merge-file`), so unstaged changes survive.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError


def git(*args: str, cwd: Path, data: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess:
    try:
        result = subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True)
    except FileNotFoundError as exc:
        raise UsageError("git is not installed") from exc
    if check and result.returncode != 0:
        message = result.stderr.decode(errors="replace").strip().splitlines()
        raise UsageError(f"git {args[0]} failed: {message[-1] if message else result.returncode}")
    return result


def root(cwd: Path) -> Path:
    result = git("rev-parse", "--show-toplevel", cwd=cwd, check=False)
    if result.returncode != 0:
        raise UsageError(f"{cwd}: not inside a git repository")
    return Path(result.stdout.decode().strip())


def staged_paths(repo: Path) -> list[str]:
    """Files added, copied, modified or renamed in the index (deleted ones have nothing to fix)."""
    out = git("diff", "--cached", "--name-only", "-z", "--diff-filter=ACMR", cwd=repo).stdout
    return [p for p in out.decode().split("\0") if p]


def staged_blob(repo: Path, path: str) -> bytes:
    return git("cat-file", "blob", f":{path}", cwd=repo).stdout


def index_mode(repo: Path, path: str) -> str:
    """The index entry's mode (100644, 100755; 120000 for a symlink)."""
    return git("ls-files", "-s", "--", path, cwd=repo).stdout.decode().split(" ", 1)[0]


def set_staged(repo: Path, path: str, data: bytes) -> None:
    """Replace the staged content of `path` (same mode)."""
    sha = git("hash-object", "-w", "--stdin", cwd=repo, data=data).stdout.decode().strip()
    git("update-index", "--cacheinfo", f"{index_mode(repo, path)},{sha},{path}", cwd=repo)


def in_head(repo: Path, path: str) -> bool:
    return git("cat-file", "-e", f"HEAD:{path}", cwd=repo, check=False).returncode == 0


@dataclass(frozen=True)
class Lines:
    start: int  # first line (0-based) of a staged change, in the staged text
    count: int  # lines it covers (0: a pure deletion before `start`)


_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)


def changed_lines(repo: Path, path: str) -> list[Lines] | None:
    """Where the staged text differs from HEAD (`git diff --cached -U0`); None when the file
    is new (everything changed)."""
    if not in_head(repo, path):
        return None
    out = git("diff", "--cached", "-U0", "--no-color", "--no-ext-diff", "--", path, cwd=repo).stdout
    ranges = []
    for m in _HUNK.finditer(out):
        start, count = int(m.group(1)), int(m.group(2) or b"1")
        ranges.append(Lines(max(0, start - 1) if count else start, count))
    return ranges


def merge(ours: bytes, base: bytes, theirs: bytes, tmp: Path) -> bytes | None:
    """Three-way merge (git merge-file): `ours` (the working tree) with the change from
    `base` (the staged text) to `theirs` (the fixed text); None if they overlap."""
    files = []
    for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
        f = tmp / name
        f.write_bytes(data)
        files.append(str(f))
    result = git("merge-file", "-p", *files, cwd=tmp, check=False)
    return result.stdout if result.returncode == 0 else None
