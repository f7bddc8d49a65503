"""Backends: the language models pedit can drive (installed as `pedit.backends`).

Each backend module imports its heavy library (llama_cpp, torch) only when opened, so that
importing this package costs nothing. See base.py for the protocol.
"""

from __future__ import annotations

from .base import (
    AnyBackend,
    Backend,
    BackendError,
    Branching,
    Capabilities,
    ContextFull,
    Delta,
    LocalBackend,
    RemoteBackend,
    RemoteError,
    Stateful,
    TextStream,
    Usage,
    branching,
    stateful,
)

KINDS = ("llama.cpp", "transformers", "reference")  # local; "openai" is a server (open_remote)


def open_backend(kind: str, path=None, **options) -> Backend:
    """Open a backend of the given kind on a model (a GGUF file for llama.cpp, a Hugging
    Face directory for transformers, nothing for reference)."""
    if kind == "llama.cpp":
        from .llama_cpp import LlamaCppBackend

        return LlamaCppBackend(path, **options)
    if kind == "transformers":
        from .transformers import TransformersBackend

        return TransformersBackend(path, **options)
    if kind == "reference":
        from .reference import ReferenceBackend

        return ReferenceBackend(**options)
    if kind == "openai":
        raise ValueError("the openai backend is a server: open it with open_remote(base_url, ...)")
    raise ValueError(f"unknown backend {kind!r}; choose one of {', '.join(KINDS)}")


def open_remote(model: str | None, base_url: str, api_key: str | None = None, **options):
    """A remote backend on an OpenAI-compatible server (backends/openai.py); model None: the
    first one the server lists."""
    from .openai import OpenAIBackend

    return OpenAIBackend(model, base_url, api_key, **options)


def device(kind: str) -> str:
    """Where a backend of this kind would run its model on this machine, without loading
    one: "cpu", "gpu (...)" for a llama.cpp build with offload (CUDA, Metal, ...), "cuda
    (GPU name)" for torch with CUDA; "not installed" when its library is missing."""
    try:
        if kind == "llama.cpp":
            from .llama_cpp import device as which
        elif kind == "transformers":
            from .transformers import device as which
        else:
            return "cpu"
        return which()
    except ImportError:
        return "not installed"


__all__ = [
    "KINDS",
    "device",
    "Backend",
    "BackendError",
    "Capabilities",
    "ContextFull",
    "TextStream",
    "AnyBackend",
    "LocalBackend",
    "RemoteBackend",
    "Branching",
    "Stateful",
    "branching",
    "stateful",
    "Delta",
    "RemoteError",
    "Usage",
    "open_backend",
    "open_remote",
]
