"""Settings and where each came from: command line > environment > config file > default.

Config file: `config.toml` in the user config dir (platformdirs; $XDG_CONFIG_HOME/pedit on
Linux), e.g.

    model = "qwen2.5-coder-1.5b"
    backend = "llama.cpp"
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from .errors import UsageError
from .models.registry import DEFAULT_MODEL

DEFAULTS = {"model": DEFAULT_MODEL, "backend": "auto"}
ENV = {"model": "PEDIT_MODEL", "backend": "PEDIT_BACKEND"}
BACKEND_CHOICES = ("auto", "llama.cpp", "transformers", "reference")


def config_path() -> Path:
    return platformdirs.user_config_path("pedit") / "config.toml"


def read_config_file(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read config file {path}: {exc}") from exc
    unknown = set(data) - set(DEFAULTS)
    if unknown:
        raise UsageError(f"{path}: unknown setting(s) {', '.join(sorted(unknown))}")
    return data


@dataclass(frozen=True)
class Setting:
    value: str
    source: str  # "command line", "env PEDIT_MODEL", "config /path", "default"


def resolve(
    cli: Mapping[str, str | None], env: Mapping[str, str] = os.environ, path: Path | None = None
) -> dict[str, Setting]:
    path = path or config_path()
    file = read_config_file(path)
    out = {}
    for key, default in DEFAULTS.items():
        if cli.get(key):
            out[key] = Setting(cli[key], "command line")
        elif env.get(ENV[key]):
            out[key] = Setting(env[ENV[key]], f"env {ENV[key]}")
        elif key in file:
            out[key] = Setting(str(file[key]), f"config {path}")
        else:
            out[key] = Setting(default, "default")
    if out["backend"].value not in BACKEND_CHOICES:
        s = out["backend"]
        choices = ", ".join(BACKEND_CHOICES)
        raise UsageError(f"unknown backend {s.value!r} (from {s.source}); choose {choices}")
    return out
