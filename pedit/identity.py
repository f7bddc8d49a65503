"""Which pedit this is: the version and a fingerprint of the installed code, as mypy's dmypy
names a development build `+dev.<sha>`. The version string alone says 0.1.0 whatever the
code is; after a `git pull` (or any edit of an editable install) the resident model, the
answer cache and the hook's cache must not take an older build's answers for this one's.

    build() = "<version>+<sha256 of pedit's own files, 12 hex>"

The files hashed: every file of the package but the byte-compiled ones and the benchmark's
corpus (its data does not change an answer), each as its path inside the package and its
bytes, in path order. Hashing them costs a few milliseconds, once per process.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from . import __version__

HERE = Path(__file__).parent
LEFT_OUT = ("bench/corpus/",)


def files(root: Path = HERE) -> list[Path]:
    """The package's files that make its answers, in path order."""
    found = []
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo") or rel.startswith(LEFT_OUT):
            continue
        if path.is_file():
            found.append(path)
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def fingerprint(root: Path = HERE) -> str:
    digest = hashlib.sha256()
    for path in files(root):
        rel = path.relative_to(root).as_posix().encode()
        data = path.read_bytes()
        digest.update(b"%d:%s%d:" % (len(rel), rel, len(data)))
        digest.update(data)
    return digest.hexdigest()[:12]


@functools.cache
def build() -> str:
    """This process's build: the version and its code's fingerprint."""
    return f"{__version__}+{fingerprint()}"
