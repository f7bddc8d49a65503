"""What the hook does to which files: `[tool.pedit.hook]` in pyproject.toml, or `[hook]` in
a `.pedit.toml` at the top of the repository (it wins), e.g.

    [tool.pedit.hook]
    mode = "fix"          # fix: rewrite the staged files; check: never write, fail with a diff
    restage = false       # fix: false = leave the fixes unstaged and fail the commit so you
                          #   review them (pre-commit's convention); true = stage them, commit
    budget = 300          # seconds for the whole commit
    on_budget = "pass"    # past the budget: "pass" lets the commit go on (fail open),
                          #   "fail" stops it (fail closed)
    max_bytes = 100000    # larger files are skipped with a message

    [[tool.pedit.hook.rules]]
    files = ["*.md", "docs/**/*.md"]
    command = "fix"

    [[tool.pedit.hook.rules]]
    files = ["src/**/*.py"]
    command = "edit"
    instruction = "Replace print calls with logging calls"

A file takes the first rule whose glob matches its path (relative to the repository; a
pattern without "/" matches the file name in any folder, "**/" any number of folders).
Model and backend come from the usual settings (`pedit config`).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path

from ..app.config import Key, check_table, load_toml, project_table
from ..errors import UsageError

MODES = ("fix", "check")
ON_BUDGET = ("pass", "fail")
COMMANDS = ("fix", "refactor", "edit")
DEFAULT_FILES = ("*.md", "*.markdown", "*.rst", "*.txt")
# The hook table's settings (`pedit hook run`'s options use the same ranges) and a rule's;
# their defaults are HookConfig's and Rule's.
KEYS = {
    "mode": Key(str, MODES),
    "restage": Key(bool),
    "budget": Key(float, lo=0),
    "on_budget": Key(str, ON_BUDGET),
    "max_bytes": Key(int, lo=0),
    "temperature": Key(float, lo=0),
    "seed": Key(int, lo=0, hi=2**63 - 1),
}
RULE_KEYS = {"command": Key(str, COMMANDS), "instruction": Key(str), "system": Key(str)}


@dataclass(frozen=True)
class Rule:
    files: tuple[str, ...] = DEFAULT_FILES
    command: str = "fix"
    instruction: str | None = None  # refactor / edit
    system: str | None = None

    def matches(self, path: str) -> bool:
        return any(_match(path, pattern) for pattern in self.files)


@dataclass(frozen=True)
class HookConfig:
    rules: tuple[Rule, ...] = (Rule(),)
    mode: str = "fix"
    restage: bool = False
    budget: float = 300.0
    on_budget: str = "pass"
    max_bytes: int = 100_000
    temperature: float = 0.0
    seed: int = 0
    source: str = "defaults"

    def rule_for(self, path: str) -> Rule | None:
        return next((r for r in self.rules if r.matches(path)), None)


def _match(path: str, pattern: str) -> bool:
    if "/" not in pattern:
        return fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], pattern)
    candidates = {pattern, pattern.replace("**/", "")}
    return any(fnmatch.fnmatchcase(path, p) for p in candidates)


def load(repo: Path) -> HookConfig:
    dotfile = repo / ".pedit.toml"
    pyproject = repo / "pyproject.toml"
    if dotfile.is_file():
        return parse(load_toml(dotfile).get("hook", {}), f"{dotfile} [hook]")
    if pyproject.is_file():
        table = project_table(pyproject) or {}
        if "hook" in table:
            return parse(table["hook"], f"{pyproject} [tool.pedit.hook]")
    return HookConfig()


def parse(table: object, where: str) -> HookConfig:
    values = check_table(table, KEYS, where, others=("rules",), noun="key")
    rules = values.pop("rules", [{}])
    if not isinstance(rules, list):
        raise UsageError(f"{where}: rules must be a list of tables ([[...rules]]; got {rules!r})")
    rules = tuple(_rule(r, f"{where} rules[{i}]") for i, r in enumerate(rules))
    return HookConfig(rules=rules, source=where, **values)


def _rule(table: object, where: str) -> Rule:
    if not isinstance(table, dict):
        raise UsageError(f"{where}: a rule is a table (got {table!r})")
    values = check_table(table, RULE_KEYS, where, others=("files",), noun="key")
    files = values.get("files", DEFAULT_FILES)
    files = [files] if isinstance(files, str) else files
    if not isinstance(files, list | tuple) or not files or not all(isinstance(f, str) for f in files):
        raise UsageError(f"{where}: files must be a glob or a list of globs (got {files!r})")
    command = values.get("command", "fix")
    if command != "fix" and not values.get("instruction"):
        raise UsageError(f"{where}: command {command!r} needs an instruction")
    return Rule(tuple(files), command, values.get("instruction"), values.get("system"))


def with_overrides(config: HookConfig, **given) -> HookConfig:
    """Command-line options (the pre-commit hook's args) over the file's settings; a
    --command makes one rule for every file the hook is given."""
    from dataclasses import replace

    command = given.pop("command", None)
    instruction = given.pop("instruction", None)
    values = check_table({k: v for k, v in given.items() if v is not None}, KEYS, "command line")
    config = replace(config, **values)
    if command:
        if command != "fix" and not instruction:
            raise UsageError(f"--command {command} needs --instruction")
        config = replace(config, rules=(Rule(("*",), command, instruction),), source="command line")
    return config


__all__ = ["HookConfig", "Rule", "load", "parse", "with_overrides"]
