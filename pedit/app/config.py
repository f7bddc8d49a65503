"""Settings and where each came from.

Layers, lowest first: built-in default < user config file < project config < environment
< command line. The user config file is `config.toml` in the user config dir
(platformdirs; `$XDG_CONFIG_HOME/pedit/config.toml` on Linux); the project config is the
`[tool.pedit]` table of the nearest pyproject.toml from the current directory up. Both
take the same keys, e.g.

    model = "qwen2.5-coder-1.5b"
    backend = "llama.cpp"
    speculate = "auto"
    draft_max = 255
    keep_bias = 0.0
    spelling = false
    dialect = "british"
    chunk_tokens = 0
    n_ctx = 8192

    [templates.fix]
    system = "You are a careful copy editor for British English."

Every layer's values go through the same table (KEYS: type and allowed values or range;
the command line's click options use the same ranges, a test checks it): a bad value is
a UsageError naming the key and where it came from. `pedit config` prints the effective
settings and their sources.

A config file is TOML, so UTF-8: one that is not, or is not TOML, is a UsageError naming
the file, except a pyproject.toml that does not mention pedit (it cannot hold a
[tool.pedit] table, so it is none of pedit's business: another tool's broken file does not
stop pedit, nor every commit of a repository with pedit's hook).
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from urllib.parse import urlsplit

import platformdirs

from ..engine.names import DRAFT_MAX, SPECULATE
from ..errors import UsageError
from ..machine.cpus import CPUS
from ..models.registry import DEFAULT_MODEL
from ..tools import dialect
from .options import EngineOptions
from .templates import Template, check_overrides, templates

BACKENDS = ("auto", "llama.cpp", "transformers", "reference", "openai")
REUSE = ("exact", "longest")  # what of the model's state a run starts from (KEYS["reuse"])
TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


@dataclass(frozen=True)
class Key:
    """One setting: its type (an int is accepted for a float), what it allows (a tuple of
    choices, or a range lo <= value <= hi, either end open, or a test `valid`) and its
    default; `what` says in words what it allows, where the range or the test does not."""

    type: type
    choices: tuple | None = None
    lo: float | None = None
    hi: float | None = None
    default: object = None
    valid: Callable[[object], bool] | None = None
    what: str = ""

    def describe(self) -> str:
        if self.what:
            return self.what
        if self.choices:
            return f"one of {', '.join(map(str, self.choices))}"
        what = TYPE_NAMES[self.type]
        if self.lo is not None and self.hi is not None:
            return f"{what} from {self.lo} to {self.hi}"
        if self.lo is not None:
            return f"{what} >= {self.lo}"
        return what if self.hi is None else f"{what} <= {self.hi}"

    def check(self, name: str, value: object, where: str) -> object:
        """`value` if this key allows it (an int given for a float becomes a float)."""
        if self.type is float and type(value) is int:
            value = float(value)
        ok = isinstance(value, self.type) and (self.type is bool or not isinstance(value, bool))
        ok = ok and (self.type is not float or math.isfinite(value))  # TOML allows nan and inf
        if self.choices and not (ok and value in self.choices):
            raise UsageError(f"{where}: unknown {name} {value!r}; {name} must be {self.describe()}")
        ok = ok and (self.lo is None or value >= self.lo) and (self.hi is None or value <= self.hi)
        if not (ok and (self.valid is None or self.valid(value))):
            raise UsageError(f"{where}: {name} must be {self.describe()} (got {value!r})")
        return value


def http_url(value: object) -> bool:
    """An http(s) URL with a host: what an OpenAI-compatible server's base_url must be."""
    try:
        parts = urlsplit(str(value))
    except ValueError:  # a bad IPv6 literal, say
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


KEYS: dict[str, Key] = {
    "model": Key(str, default=DEFAULT_MODEL),
    "backend": Key(str, BACKENDS, default="auto"),
    "speculate": Key(str, SPECULATE, default="auto"),
    "draft_max": Key(int, lo=1, hi=256, default=DRAFT_MAX),
    "keep_bias": Key(float),  # None: the command's own (templates.Template.keep_bias)
    "spelling": Key(bool),  # None: the command's own (templates.Template.spelling)
    "dialect": Key(str, dialect.CHOICES, default=dialect.AUTO),  # the English a fix keeps (dialect.py)
    "skeleton": Key(bool, default=True),  # a fix's answer follows its skeleton's grammar (tools/skeleton)
    "chunk_tokens": Key(int, lo=0),  # most file tokens per run; 0: whole; None: the command's own
    "n_ctx": Key(int, lo=256, default=8192),
    "threads": Key(
        int, lo=1, hi=CPUS, what=f"an integer from 1 to {CPUS}, the CPUs this machine lets pedit use"
    ),
    # None: all of them
    # backend "openai": an OpenAI-compatible server (docs/scale.md); its API key only from
    # --api-key(-file), PEDIT_API_KEY or OPENAI_API_KEY, never a config file
    "base_url": Key(str, valid=http_url, what="an http(s) URL, e.g. http://127.0.0.1:8000/v1"),
    "timeout": Key(float, lo=0.1, default=300.0),  # seconds a server may take to answer (each read)
    "deadline": Key(float, lo=0.1, default=1800.0),  # seconds for a whole answer (backends/openai.py)
    "jobs": Key(int, lo=1, hi=64),  # files at once on a server; None: JOBS_REMOTE (a local model: 1)
    # seconds the resident model stays loaded after its last request (resident/): 0, none; < 0, forever
    "keep_alive": Key(float, default=300.0),
    # a file's answer given again, with no model, for the same model, settings and file (answercache.py)
    "answer_cache": Key(bool, default=True),
    # the answer cache's size bound, in MB (least recently used out: models/entrystore.py)
    "answer_cache_mb": Key(int, lo=1, default=256),
    # what of the model's state a run starts from (jobs.Job.run_one): "exact", only the prompt's
    # shared start, read alone (the answer is a fresh reading's, bit for bit); "longest", the
    # longest prefix the model holds (a resident's last request), which on llama.cpp reads the
    # rest in another batch split and may flip a near-tie (docs/resident.md)
    "reuse": Key(str, REUSE, default="exact"),
}
ENV = {"model": "PEDIT_MODEL", "backend": "PEDIT_BACKEND", "base_url": "PEDIT_BASE_URL",
       "keep_alive": "PEDIT_KEEP_ALIVE", "answer_cache": "PEDIT_ANSWER_CACHE",
       "reuse": "PEDIT_REUSE"}  # fmt: skip
SWITCH = {"1": True, "on": True, "true": True, "yes": True,
          "0": False, "off": False, "false": False, "no": False}  # fmt: skip


SEND_SECONDS = 30.0  # a client that takes nothing for this long (stopped, not reading) is dropped


def stall_seconds() -> float:
    """The deadline of each send to a client, of the resident and of pedit serve's streams:
    PEDIT_STALL_SECONDS, else SEND_SECONDS (docs/resident.md)."""
    try:
        return max(1.0, float(os.environ.get("PEDIT_STALL_SECONDS", SEND_SECONDS)))
    except ValueError:
        return SEND_SECONDS


def duration(value: str) -> float:
    """Seconds from PEDIT_KEEP_ALIVE, read as Ollama reads OLLAMA_KEEP_ALIVE: a number of
    seconds, or one with a unit (90s, 5m, 2h); ValueError for anything else."""
    text = value.strip().lower()
    scale = {"s": 1, "m": 60, "h": 3600}.get(text[-1:])
    number = float(text[:-1] if scale else text)
    if not math.isfinite(number):
        raise ValueError(value)
    return number * (scale or 1)


def _env_layer(env: Mapping[str, str]) -> dict:
    """The environment's settings, each read from its string (a duration for keep_alive, a
    switch for answer_cache)."""
    out: dict[str, object] = {k: env[v] for k, v in ENV.items() if env.get(v)}
    if "keep_alive" in out:
        try:
            out["keep_alive"] = duration(str(out["keep_alive"]))
        except ValueError:
            what = f"must be seconds or a duration like 90s, 5m, 2h (got {out['keep_alive']!r})"
            raise UsageError(f"env PEDIT_KEEP_ALIVE: {what}") from None
    if "answer_cache" in out:
        switch = SWITCH.get(str(out["answer_cache"]).strip().lower())
        if switch is None:
            raise UsageError(f"env PEDIT_ANSWER_CACHE: must be on or off (got {out['answer_cache']!r})")
        out["answer_cache"] = switch
    return out


JOBS_REMOTE = 4


def check_table(
    table: object, keys: Mapping[str, Key], where: str, others: tuple[str, ...] = (), noun: str = "setting"
) -> dict:
    """A config table whose keys are `keys` (each value checked) or `others` (the caller's)."""
    if not isinstance(table, dict):
        raise UsageError(f"{where}: must be a table (got {table!r})")
    unknown = set(table) - set(keys) - set(others)
    if unknown:
        raise UsageError(f"{where}: unknown {noun}(s) {', '.join(sorted(unknown))}")
    return {k: keys[k].check(k, v, where) if k in keys else v for k, v in table.items()}


def user_config_path() -> Path:
    return platformdirs.user_config_path("pedit") / "config.toml"


config_path = user_config_path  # the name `pedit models` shows


def project_table(path: Path) -> dict | None:
    """The [tool.pedit] table of a pyproject.toml, None when it has none (or is a file pedit
    cannot read that does not mention pedit)."""
    try:
        tool = load_toml(path).get("tool", {})
    except UsageError:
        if not _mentions_pedit(path):
            return None
        raise
    if not isinstance(tool, dict) or "pedit" not in tool:
        return None
    if not isinstance(tool["pedit"], dict):
        raise UsageError(f"{path}: [tool.pedit] must be a table (got {tool['pedit']!r})")
    return tool["pedit"]


def project_config_path(start: Path | None = None) -> Path | None:
    """The nearest pyproject.toml with a [tool.pedit] table, from `start` (cwd) upwards."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and project_table(candidate) is not None:
            return candidate
    return None


def load_toml(path: Path) -> dict:
    """A config file's TOML ({} when there is none); a UsageError naming the file for one
    that cannot be read, is not UTF-8 (TOML's encoding) or is not TOML."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise UsageError(f"cannot read config file {path}: {exc.strerror}") from exc
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"cannot read config file {path}: not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start});"
            " TOML files are UTF-8"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"cannot read config file {path}: {exc}") from exc


def _mentions_pedit(path: Path) -> bool:
    try:
        return b"pedit" in path.read_bytes()
    except OSError:
        return False


def _check(data: object, where: str) -> dict:
    """A config file's table: settings, [templates.NAME] overrides and the hook's table."""
    data = check_table(data, KEYS, where, others=("templates", "hook"))
    if "hook" in data and not isinstance(data["hook"], dict):
        raise UsageError(f"{where}: hook must be a table (got {data['hook']!r})")
    check_overrides(data.get("templates", {}), where)
    return data


@dataclass(frozen=True)
class Setting:
    value: object
    source: str  # "command line", "env PEDIT_MODEL", "config /path", "default"


@dataclass(frozen=True, kw_only=True)
class Settings:
    """The effective settings: one typed field per key of KEYS (the same names, checked by
    its table), where each came from, and the [templates.NAME] overrides. Built by resolve()."""

    model: str
    backend: str
    speculate: str
    draft_max: int
    keep_bias: float | None
    spelling: bool | None
    dialect: str
    skeleton: bool
    chunk_tokens: int | None
    n_ctx: int
    threads: int | None
    base_url: str | None
    timeout: float
    deadline: float
    jobs: int | None
    keep_alive: float
    answer_cache: bool
    answer_cache_mb: int
    reuse: str
    sources: Mapping[str, str]  # key -> "command line", "env PEDIT_MODEL", "config /path", "default"
    templates: Mapping[str, tuple[dict, str]]  # template name -> (overrides, source)

    def __getitem__(self, key: str) -> Setting:
        """A key's value and where it came from, as `pedit config` and `pedit models` show them."""
        return Setting(getattr(self, key), self.sources[key])

    def items(self) -> Iterator[tuple[str, Setting]]:
        """Every key's Setting, in KEYS' order."""
        return ((key, self[key]) for key in KEYS)

    @property
    def on_server(self) -> bool:
        """The backend named is a server's (-b openai): known before anything loads (what a
        loaded backend is: loading.Loaded.remote)."""
        return self.backend == "openai"

    def prompt_templates(self) -> dict[str, Template]:
        """The templates these settings ask with: the built-ins as asked of this model
        (templates.for_model; on a server, whose model pedit cannot know, as they are) with
        the config's overrides."""
        return templates(self.templates, None if self.on_server else self.model)

    def files_at_once(self, remote: bool) -> int:
        """Files whose model runs go at once: `jobs` (default JOBS_REMOTE) on a server, 1 on a
        local model (one process, one model)."""
        return (self.jobs or JOBS_REMOTE) if remote else 1

    def engine_options(self, given: EngineOptions | None = None) -> EngineOptions:
        """The engine's options: what the shell gives (its flags; None: the defaults) with
        these settings' speculate, draft_max, keep_bias, spelling, dialect, skeleton and reuse
        over them."""
        o = given or EngineOptions()
        return replace(
            o, keep_bias=self.keep_bias, skeleton=self.skeleton, reuse=self.reuse,
            edit=replace(o.edit, speculate=self.speculate, draft_max=self.draft_max),
            tools=replace(o.tools, spelling=self.spelling, dialect=self.dialect),
        )  # fmt: skip


def resolve(
    cli: Mapping[str, object],
    env: Mapping[str, str] = os.environ,
    path: Path | None = None,
    project: Path | None | bool = True,
) -> Settings:
    """Effective settings. `path`: the user config file (default: the platform's);
    `project`: a pyproject.toml, or True to search from the current directory, or None."""
    user_path = path or user_config_path()
    layers: list[tuple[dict, str]] = [(_check(load_toml(user_path), str(user_path)), f"config {user_path}")]
    project_path = project_config_path() if project is True else project
    if project_path:
        table = project_table(project_path) or {}
        layers.append((_check(table, f"{project_path} [tool.pedit]"), f"pyproject {project_path}"))
    layers.append((_env_layer(env), "env"))
    layers.append(({k: v for k, v in cli.items() if v is not None and k in KEYS}, "command line"))
    values = {key: k.default for key, k in KEYS.items()}
    sources = dict.fromkeys(KEYS, "default")
    templates: dict[str, tuple[dict, str]] = {}
    for data, source in layers:
        for key in KEYS:
            if key in data:
                where = f"env {ENV[key]}" if source == "env" else source
                values[key], sources[key] = KEYS[key].check(key, data[key], where), where
        for name, override in data.get("templates", {}).items():
            templates[name] = ({**templates.get(name, ({}, ""))[0], **override}, source)
    return Settings(**values, sources=MappingProxyType(sources), templates=MappingProxyType(templates))
