"""Models from the Hugging Face Hub, for users who are online (huggingface_hub)."""

from __future__ import annotations

from pathlib import Path

from ..errors import ModelError

# What a transformers model directory needs; never the (often several) GGUF or .bin copies.
HF_FILES = ["*.json", "*.safetensors", "tokenizer*", "*.txt", "*.model", "*.tiktoken", "*.jinja"]


def download(repo_id: str, filename: str | None = None) -> Path:
    """Download (or find in the local Hub cache) a repo's model files; returns the GGUF file
    or the model directory. Honours HF_HUB_OFFLINE and HF_HOME like every Hub client."""
    try:
        import huggingface_hub as hub

        if filename:
            return Path(hub.hf_hub_download(repo_id, filename))
        return Path(hub.snapshot_download(repo_id, allow_patterns=HF_FILES))
    except Exception as exc:  # the Hub client raises many types: offline, 404, auth, network
        what = f"{repo_id}:{filename}" if filename else repo_id
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelError(
            f"cannot get {what} from the Hugging Face Hub ({type(exc).__name__}: {reason}). "
            "Offline, use a bundled model (`pedit models`) or a local path."
        ) from exc
