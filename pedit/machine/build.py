"""The llama.cpp build pedit runs on this CPU: named for people, keyed for caches.

A build's instruction sets are what its CPU backend says it runs (llama_print_system_info,
backends/llama_cpp.cpu_features), named by models/nativebuild.describe: "AVX-512 (VNNI,
VBMI, BF16)". The tier (native, native-noamx, avx2) is what nativebuild installed, when it
did. `pedit config`, `pedit models`, a run's legend and --stats-json, and the bench reports
say it; the cost cache keys by it, so a new build is priced anew.
"""

from __future__ import annotations

import hashlib
from functools import cache

from ..models import buildcheck, nativebuild


@cache
def features() -> tuple[str, ...] | None:
    """The installed build's instruction sets; None without llama-cpp-python."""
    try:
        from ..backends.llama_cpp import cpu_features
    except ImportError:
        return None
    try:
        return tuple(cpu_features())
    except (ImportError, OSError, AttributeError):
        return None


def variant() -> str:
    """'AVX-512 (VNNI, VBMI, BF16), native build': what runs, and how it was built."""
    found = features()
    if found is None:
        return "not installed"
    tier = nativebuild.installed_tier()
    how = f"{tier} build" if tier else "built by pip"
    return f"{nativebuild.describe(found)}, {how}"


def line() -> str:
    """`pedit config`'s and `pedit models`' line: the variant, the CPU, and what it leaves
    unused with the command that builds for it."""
    found = features()
    text = f"{variant()} · this CPU: {buildcheck.cpu_name()}"
    left = nativebuild.unused(found or ())
    if found is not None and left:
        text += (f" (the build leaves {', '.join(left)} unused: "
                 "`python -m pedit.models.nativebuild` builds for this CPU)")  # fmt: skip
    return text


def device(backend) -> str:
    """A backend's device, with the build's instruction sets for llama.cpp on the CPU:
    "cpu, AVX-512 (VNNI, VBMI, BF16)"."""
    name = backend.capabilities.device
    if backend.name == "llama.cpp" and name == "cpu" and features() is not None:
        return f"cpu, {nativebuild.describe(features())}"
    return name


def key() -> str:
    """What identifies the installed build for a cache (its libraries, by path, size and
    mtime): a rebuild, whatever its flags, is another key."""
    found = buildcheck.find_build()
    text = "|".join(found.libraries) if found else "none"
    return hashlib.sha256(text.encode()).hexdigest()[:16]
