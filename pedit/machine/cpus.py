"""What this machine lets pedit use, known without loading a model or a backend."""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """CPUs this process may run on (cgroup/affinity aware), at least 1: the most threads a
    model may use (more only queue on the same cores; llama.cpp allocates per thread and spins
    on barriers, so 512 threads on 2 cores never finish and 100000 abort in its allocator)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


CPUS = usable_cpus()
