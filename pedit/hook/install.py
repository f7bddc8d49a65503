"""`pedit hook install` / `uninstall`: a native git pre-commit hook that chains to the
hook it replaces (kept as pre-commit.legacy) and calls this Python's pedit."""

from __future__ import annotations

import os
import shlex
import stat
import sys
from pathlib import Path

from ..errors import UsageError
from . import git

MARK = "# pedit-hook"
SCRIPT = """#!/bin/sh
{mark}: installed by `pedit hook install`; `pedit hook uninstall` removes it and puts
# back the hook that was here before (kept beside it as pre-commit.legacy).
# Skip it once: SKIP=pedit git commit ...   or   git commit --no-verify
here=$(dirname "$0")
if [ -x "$here/pre-commit.legacy" ]; then
    "$here/pre-commit.legacy" "$@" || exit $?
fi
exec {python} -m pedit hook run
"""


def hooks_dir(repo: Path, given: Path | None) -> Path:
    """Where git looks for hooks. With core.hooksPath set, another tool may own that folder:
    refuse unless told where (--hooks-dir)."""
    if given is not None:
        return given if given.is_absolute() else Path.cwd() / given
    configured = git.git("config", "--get", "core.hooksPath", cwd=repo, check=False).stdout.decode().strip()
    if configured:
        raise UsageError(
            f"core.hooksPath is set ({configured}): another tool may manage the hooks there;"
            " run `pedit hook install --hooks-dir DIR` to install into DIR anyway"
        )
    path = Path(git.git("rev-parse", "--git-path", "hooks", cwd=repo).stdout.decode().strip())
    return path if path.is_absolute() else repo / path


def is_ours(hook: Path) -> bool:
    try:
        return MARK in hook.read_text(errors="replace")
    except OSError:
        return False


def install(repo: Path, directory: Path) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    hook, legacy = directory / "pre-commit", directory / "pre-commit.legacy"
    kept = ""
    if hook.exists() and not is_ours(hook):
        if legacy.exists():
            raise UsageError(f"{legacy} exists already: move it away first; nothing installed")
        hook.rename(legacy)
        kept = f"; the previous hook runs first (kept as {legacy.name})"
    hook.write_text(SCRIPT.format(mark=MARK, python=shlex.quote(sys.executable)))
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return f"installed {hook}{kept}"


def uninstall(repo: Path, directory: Path) -> str:
    hook, legacy = directory / "pre-commit", directory / "pre-commit.legacy"
    if not hook.exists():
        raise UsageError(f"{hook}: no pre-commit hook installed")
    if not is_ours(hook):
        raise UsageError(f"{hook} was not installed by pedit; left as it is")
    hook.unlink()
    if legacy.exists():
        os.replace(legacy, hook)
        return f"removed pedit's hook; restored the previous one ({hook})"
    return f"removed {hook}"
