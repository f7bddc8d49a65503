"""The git plumbing the hook needs, as small functions over `git` subprocesses.

What is staged comes from `git diff --cached --raw -M`: each path with its index mode (a
gitlink, mode 160000, is a submodule's commit, not a blob), its staged blob's id, and the
path in HEAD its changes count from (the old path of a rename), so a renamed file is not a
new one.

Staged content is read from the index by that blob id (`git cat-file blob ID`), never from
the working tree; a fixed file goes back into the index as a new blob with the same mode
(`git hash-object -w` + `git update-index --cacheinfo`) only if the path's index entry is
still that blob (`git ls-files -s`, just before): a `git add` made while the model ran is
never overwritten. It goes into the working tree by a three-way merge (`git merge-file`),
so unstaged changes survive.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConflictError, UsageError


def git(
    *args: str, cwd: Path, data: bytes | None = None, check: bool = True, env: dict | None = None
) -> subprocess.CompletedProcess:
    try:
        result = subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True, env=env)
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


GITLINK, SYMLINK = "160000", "120000"


@dataclass(frozen=True)
class Staged:
    path: str
    mode: str  # the index mode: 100644, 100755, 120000 (symlink), 160000 (gitlink: a submodule)
    base: str | None  # its path in HEAD, the old one for a rename; None for a new file
    blob: str = ""  # the staged blob's id (a gitlink: the commit's); "" for a file not staged


def staged(repo: Path) -> list[Staged]:
    """Files added, copied, modified or renamed in the index (deleted ones have nothing to
    fix); renames detected as `git diff -M` does (R100: the same text, moved)."""
    out = git(
        "diff", "--cached", "--raw", "-z", "-M", "--no-abbrev", "--diff-filter=ACMR", cwd=repo
    ).stdout.decode()
    fields = out.split("\0")
    entries, i = [], 0
    while i + 1 < len(fields) and fields[i].startswith(":"):
        _, mode, _, blob, status = fields[i].split(" ")  # :mode mode sha sha status
        if status[0] in "RC":  # :old new sha sha R100 \0 old \0 new
            old, path, i = fields[i + 1], fields[i + 2], i + 3
        else:
            old, path, i = fields[i + 1], fields[i + 1], i + 2
        entries.append(Staged(path, mode, None if status[0] == "A" else old, blob))
    return entries


def given(repo: Path, paths: list[str]) -> list[Staged]:
    """pre-commit's FILES as entries: a staged one as staged (a rename keeps its old path),
    any other counts from its own version in HEAD, if it has one (mode "": not read)."""
    known = {entry.path: entry for entry in staged(repo)}
    return [known.get(p) or Staged(p, "", p if in_head(repo, p) else None) for p in paths]


def staged_blob(repo: Path, path: str) -> bytes:
    return git("cat-file", "blob", f":0:{path}", cwd=repo).stdout


def blob(repo: Path, blob_id: str) -> bytes:
    return git("cat-file", "blob", blob_id, cwd=repo).stdout


def index_entry(repo: Path, path: str) -> tuple[str, str] | None:
    """(mode, blob id) of the index entry of `path` (exactly that path: a literal
    pathspec), or None when it has none at stage 0 (removed, or a merge conflict)."""
    out = git("ls-files", "-s", "-z", "--", f":(literal){path}", cwd=repo).stdout.decode()
    for row in out.split("\0"):
        meta, _, name = row.partition("\t")  # mode sha stage \t path
        if name == path and meta.endswith(" 0"):
            mode, sha, _ = meta.split(" ")
            return mode, sha
    return None


def set_staged(repo: Path, path: str, data: bytes, expect: str) -> None:
    """Replace the staged content of `path` (same mode) if its index entry is still the
    blob `expect` (the one the fix was made from); ConflictError, and nothing staged, if
    it changed meanwhile (a `git add`, a `git rm --cached`)."""
    entry = index_entry(repo, path)
    if entry is None or entry[1] != expect:
        raise ConflictError(f"{path}: its staged content changed while pedit ran")
    sha = git("hash-object", "-w", "--stdin", cwd=repo, data=data).stdout.decode().strip()
    git("update-index", "--cacheinfo", f"{entry[0]},{sha},{path}", cwd=repo)


def kept_index(repo: Path) -> bool:
    """Whether the index git commits from is the one it keeps afterwards: its own index (a
    plain commit), or that index's lock file (`git commit -a` or `-i`: git writes the new
    index there, runs the hook on it, then renames it into place). Not so for a commit that
    names its files (`git commit FILE`, `--only`): git keeps its own index, updated with
    FILE, locked away, and runs the hook on a temporary one (GIT_INDEX_FILE, next-index-PID)
    that it drops after the commit; what the hook stages there is committed, then lost from
    the index, which goes on holding the text before the fix (githooks(5), git commit's
    prepare_index)."""
    named = os.environ.get("GIT_INDEX_FILE")
    if not named:
        return True
    plain = {k: v for k, v in os.environ.items() if k != "GIT_INDEX_FILE"}
    own = git("rev-parse", "--git-path", "index", cwd=repo, env=plain).stdout.decode().strip()
    own_path = (repo / own).resolve()
    return (repo / named).resolve() in (own_path, own_path.with_name(own_path.name + ".lock"))


def in_head(repo: Path, path: str) -> bool:
    return git("cat-file", "-e", f"HEAD:{path}", cwd=repo, check=False).returncode == 0


@dataclass(frozen=True)
class Lines:
    start: int  # first line (0-based) of a staged change, in the staged text
    count: int  # lines it covers (0: a pure deletion before `start`)


_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)


def changed_lines(repo: Path, entry: Staged) -> list[Lines] | None:
    """Where the staged text differs from its version in HEAD (`git diff -U0`, from the old
    path for a rename: [] for a pure one); None when the file is new (everything changed)."""
    if entry.base is None:
        return None
    out = git(
        "diff", "-U0", "--no-color", "--no-ext-diff", "--no-textconv",
        f"HEAD:{entry.base}", f":0:{entry.path}", cwd=repo,
    ).stdout  # fmt: skip
    ranges = []
    for m in _HUNK.finditer(out):
        start, count = int(m.group(1)), int(m.group(2) or b"1")
        ranges.append(Lines(max(0, start - 1) if count else start, count))
    return ranges


def has_conflict_markers(text: str) -> bool:
    """A `<<<<<<< ` line, later a `=======` line, later a `>>>>>>> ` line: what a conflicted
    merge leaves in a file (a lone `=======` is a Markdown heading's underline)."""
    want = 0
    for line in text.splitlines():
        if want == 0 and _marker(line, "<"):
            want = 1
        elif want == 1 and line.rstrip() == "=======":
            want = 2
        elif want == 2 and _marker(line, ">"):
            return True
    return False


def _marker(line: str, char: str) -> bool:
    return line == char * 7 or line.startswith(char * 7 + " ")


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
