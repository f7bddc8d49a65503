"""Turn a GGUF into a cached Hugging Face directory, for the transformers backend.

transformers can read a GGUF (`gguf_file=`, with the `gguf` package) but dequantizes every
tensor on each load, which takes 1-2 minutes for the 0.5B model on 2 cores. pedit does it
once and keeps an fp32 safetensors copy in the cache, keyed by the GGUF's identity.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Generator
from pathlib import Path

from ..errors import ModelError
from .progress import Advanced, Began, Step, task

_DONE = ".pedit-converted"


def converted_dir(gguf: Path, out_root: Path, digest: str | None = None) -> Path:
    """Where the conversion of this GGUF lives; `digest` (sha256) when known, else the
    file's path, size and modification time identify it."""
    if digest is None:
        st = gguf.stat()
        digest = hashlib.sha256(f"{gguf.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()
    return out_root / f"{gguf.stem}-{digest[:16]}"


def is_converted(path: Path) -> bool:
    return (path / _DONE).is_file()


def convert_gguf(gguf: Path, out: Path) -> Generator[Step, None, Path]:
    """Dequantize `gguf` to an fp32 Hugging Face directory at `out` (atomic: built in a
    temporary directory beside it and renamed into place)."""
    if is_converted(out):
        return out
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise ModelError(
            "the transformers backend is not installed; pip install 'pedit[transformers]'"
        ) from exc
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    try:
        began = Began(f"converting {gguf.name} for transformers (once)", 3, "steps")
        yield from task(began, _converted(gguf, tmp, torch, AutoModelForCausalLM, AutoTokenizer))
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _converted(gguf: Path, tmp: Path, torch, auto_model, auto_tokenizer) -> Generator[Step, None, None]:
    """The fp32 model and its tokenizer saved in `tmp`, in 3 steps."""
    tokenizer = auto_tokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    yield Advanced(1)
    model = auto_model.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    yield Advanced(2)
    # The tensors are plain fp32 now; drop the GGUF "quantizer" marker, which only exists
    # to say the weights came from a GGUF and blocks save_pretrained.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    (tmp / _DONE).write_text(f"{gguf}\n")
    yield Advanced(3)
