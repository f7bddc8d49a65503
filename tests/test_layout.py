"""The folders are the architecture (README.md, "How it is built"): shells -> app -> engine -> backend
protocol, and nothing imports upward. Checked on every import statement in pedit/ and
backends/, the ones inside functions too, and on what importing the engine really loads."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Each layer, and the layers it may import. The contracts are what flows between them:
# request.py (shell -> engine), events.py (engine -> shell), errors.py, pedit/__init__ and
# identity.py (which build this is).
CONTRACTS = {"pedit", "pedit.request", "pedit.events", "pedit.errors", "pedit.identity"}
BELOW = {
    "contracts": set(),
    "backends": set(),
    "engine": {"backends"},
    "models": {"backends"},
    "tools": {"engine", "backends"},  # the proposers: no shell, no app
    "checks": {"tools", "engine", "backends"},  # what decides: no shell, no app
    "machine": {"engine", "models", "backends"},  # this machine's CPUs and caches
    "app": {"machine", "checks", "tools", "engine", "models", "backends"},
    "ui": {"app", "machine", "checks", "tools", "engine", "models", "backends"},
    "tui": {"ui", "app", "machine", "checks", "tools", "engine", "models", "backends"},
    "hook": {"resident", "ui", "app", "machine", "checks", "tools", "engine", "models", "backends"},
    "bench": {"ui", "app", "machine", "checks", "tools", "engine", "models", "backends"},
    "serve": {"app", "machine", "checks", "tools", "engine", "models", "backends"},
    # the resident model (its process, its client, their protocol): what a shell asks instead of a model
    "resident": {"app", "machine", "checks", "tools", "engine", "models", "backends"},
    "cli": {
        "resident",
        "tui",
        "hook",
        "bench",
        "serve",
        "ui",
        "app",
        "machine",
        "checks",
        "tools",
        "engine",
        "models",
        "backends",
    },
}


def layer(module: str) -> str:
    if module in CONTRACTS:
        return "contracts"
    part = module.split(".")[1]
    if part == "__main__":  # python -m pedit: the command line
        return "cli"
    assert part in BELOW, f"{module}: a module outside the layers (add it to tests/test_layout.py)"
    return part


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT)
    parts = list(rel.with_suffix("").parts)
    if parts[0] == "backends":
        parts.insert(0, "pedit")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources() -> dict[str, Path]:
    files = [*ROOT.glob("pedit/**/*.py"), *ROOT.glob("backends/*.py")]
    return {module_name(p): p for p in files if "corpus" not in p.parts}


def imports(module: str, path: Path, known: set[str]) -> set[str]:
    """Every pedit module `module` imports, anywhere in the file."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "pedit"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "pedit":
                continue
            for a in node.names:  # `from . import config`: the module pedit.app.config
                out.add(f"{target}.{a.name}" if f"{target}.{a.name}" in known else target)
    return out


def graph() -> dict[str, set[str]]:
    mods = sources()
    return {m: imports(m, p, set(mods)) for m, p in mods.items()}


def test_no_module_imports_upward():
    wrong = []
    for module, targets in graph().items():
        mine = layer(module)
        for t in targets:
            theirs = layer(t)
            if theirs not in ("contracts", mine) and theirs not in BELOW[mine]:
                wrong.append(f"{module} ({mine}) imports {t} ({theirs})")
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles():
    g = graph()
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(m: str, path: list[str]) -> list[str] | None:
        state[m] = 1
        for t in sorted(g.get(m, ())):
            if t == m or t not in g or t == "pedit":
                continue
            if state.get(t) == 1:
                return path + [m, t]
            if t not in state and (cycle := visit(t, path + [m])):
                return cycle
        state[m] = 2
        return None

    for m in sorted(g):
        if m not in state and (cycle := visit(m, [])):
            raise AssertionError("import cycle: " + " -> ".join(cycle[cycle.index(cycle[-1]) :]))


def test_the_graph_sees_lazy_imports():
    """The check above reads imports inside functions too: the CLI's lazy import of the TUI."""
    assert "pedit.tui.app" in graph()["pedit.cli.tui"]


def loaded_by(statement: str) -> list[str]:
    code = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_the_engine_loads_only_the_standard_library_and_numpy():
    stdlib = sys.stdlib_module_names
    foreign = [
        m
        for m in loaded_by("import pedit.engine.edit, pedit.engine.drafters.compose")
        if m.split(".")[0] not in stdlib
        and m.split(".")[0] not in ("numpy", "_distutils_hack")  # setuptools' .pth hook
        and not (m in CONTRACTS or m.startswith(("pedit.engine", "pedit.backends")))
        and not m.startswith("_")  # interpreter internals (_frozen_importlib, _io, ...)
    ]
    assert not foreign, foreign


def test_a_commands_options_load_no_engine():
    """EngineOptions (app/options.py) holds the engine's and the tools' options, declared in
    modules that import neither numpy nor the engine's code, so the settings build it
    before a model loads (app/config.py imports it at the top)."""
    loaded = loaded_by("import pedit.app.options")
    engine = {m for m in loaded if m.startswith("pedit.engine.")}
    assert engine == {"pedit.engine.names", "pedit.engine.options"}
    assert "numpy" not in loaded and "numpy" not in loaded_by("import pedit.app.config")
