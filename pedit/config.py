"""Settings and where each came from.

Layers, lowest first: built-in default < user config file < project config < environment
< command line. The user config file is `config.toml` in the user config dir
(platformdirs; `$XDG_CONFIG_HOME/pedit/config.toml` on Linux); the project config is the
`[tool.pedit]` table of the nearest pyproject.toml from the current directory up. Both
take the same keys, e.g.

    model = "qwen2.5-coder-1.5b"
    backend = "llama.cpp"
    speculate = "auto"
    draft_max = 64
    n_ctx = 8192

    [templates.fix]
    system = "You are a careful copy editor for British English."

`pedit config` prints the effective settings and their sources.
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

BACKENDS = ("auto", "llama.cpp", "transformers", "reference")
SPECULATE = ("auto", "fixed", "off")
# key -> (default, type, allowed values or None)
KEYS: dict[str, tuple[object, type, tuple | None]] = {
    "model": (DEFAULT_MODEL, str, None),
    "backend": ("auto", str, BACKENDS),
    "speculate": ("auto", str, SPECULATE),
    "draft_max": (64, int, None),
    "n_ctx": (8192, int, None),
    "threads": (None, int, None),
}
ENV = {"model": "PEDIT_MODEL", "backend": "PEDIT_BACKEND"}
TABLES = ("templates",)  # tables merged key by key, not values


def user_config_path() -> Path:
    return platformdirs.user_config_path("pedit") / "config.toml"


config_path = user_config_path  # the name `pedit models` shows


def project_config_path(start: Path | None = None) -> Path | None:
    """The nearest pyproject.toml with a [tool.pedit] table, from `start` (cwd) upwards."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and "pedit" in _load(candidate).get("tool", {}):
            return candidate
    return None


def _load(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read config file {path}: {exc}") from exc


def _check(data: dict, where: str) -> dict:
    unknown = set(data) - set(KEYS) - set(TABLES) - {"hook"}
    if unknown:
        raise UsageError(f"{where}: unknown setting(s) {', '.join(sorted(unknown))}")
    for key, value in data.items():
        if key in KEYS:
            _, typ, allowed = KEYS[key]
            if not isinstance(value, typ) or isinstance(value, bool):
                raise UsageError(f"{where}: {key} must be a {typ.__name__}")
            if allowed and value not in allowed:
                raise UsageError(f"{where}: unknown {key} {value!r}; choose {', '.join(allowed)}")
        elif key in TABLES and not isinstance(value, dict):
            raise UsageError(f"{where}: [{key}] must be a table")
    return data


@dataclass(frozen=True)
class Setting:
    value: object
    source: str  # "command line", "env PEDIT_MODEL", "config /path", "default"


@dataclass(frozen=True)
class Settings:
    values: dict[str, Setting]
    templates: dict[str, tuple[dict, str]]  # template name -> (overrides, source)

    def __getitem__(self, key: str) -> Setting:
        return self.values[key]

    def get(self, key: str):
        return self.values[key].value


def resolve(
    cli: Mapping[str, object],
    env: Mapping[str, str] = os.environ,
    path: Path | None = None,
    project: Path | None | bool = True,
) -> Settings:
    """Effective settings. `path`: the user config file (default: the platform's);
    `project`: a pyproject.toml, or True to search from the current directory, or None."""
    user_path = path or user_config_path()
    layers: list[tuple[dict, str]] = [(_check(_load(user_path), str(user_path)), f"config {user_path}")]
    project_path = project_config_path() if project is True else project
    if project_path:
        table = _load(project_path).get("tool", {}).get("pedit", {})
        layers.append((_check(table, f"{project_path} [tool.pedit]"), f"pyproject {project_path}"))
    values = {key: Setting(default, "default") for key, (default, _, _) in KEYS.items()}
    templates: dict[str, tuple[dict, str]] = {}
    for data, source in layers:
        for key in KEYS:
            if key in data:
                values[key] = Setting(data[key], source)
        for name, override in data.get("templates", {}).items():
            templates[name] = ({**templates.get(name, ({}, ""))[0], **override}, source)
    for key, var in ENV.items():
        if env.get(var):
            value = env[var]
            allowed = KEYS[key][2]
            if allowed and value not in allowed:
                raise UsageError(f"unknown {key} {value!r} (from env {var}); choose {', '.join(allowed)}")
            values[key] = Setting(value, f"env {var}")
    for key, value in cli.items():
        if value is not None and key in KEYS:
            values[key] = Setting(value, "command line")
    return Settings(values, templates)
