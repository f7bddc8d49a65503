"""The house's figures, counted from the syntax tree of pedit/ and backends/.

    python scripts/house_counts.py            # the counts
    python scripts/house_counts.py --list     # and every site

Counted: functions longer than 60 lines (def line to last line, docstring included);
modules of pedit/ longer than 400 lines, classes longer than 200; calls of a class (any
class defined here, whatever its name, or a capitalised name) with more than 4 positional
arguments, or with a positional True/False; `<x>.get("literal")` calls on a name or
attribute called settings/cli; the speculative loops (functions of pedit/engine that end
an answer, building a `Finished` event, but plain decoding, the baseline, and a server's
loop); and the places outside engine/edit.py that ask a backend `capabilities.logits`.
Each figure is 0 but the speculative loops, 1."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LONG = 60
LONG_MODULE = 400
LONG_CLASS = 200
KEYS = ("long", "modules", "classes", "wide", "bools", "lookups", "loops", "asks")
ONE_PLACE = ("pedit/engine/edit.py", "backends/base.py")  # where a backend's kind is asked, declared
# the decoding loops that do not accelerate: plain decoding (the baseline every accelerated
# path must equal) and a server's loop (the server decodes)
NOT_SPECULATIVE = ("pedit/engine/decode.py generate", "pedit/engine/remote.py remote_generate")


def files() -> list[Path]:
    out = [*ROOT.glob("pedit/**/*.py"), *ROOT.glob("backends/*.py")]
    return sorted(p for p in out if "corpus" not in p.parts)


def name_of(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def classes(paths: list[Path]) -> set[str]:
    """The names of every class defined in `paths`."""
    return {n.name for p in paths for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, ast.ClassDef)}


def scan(path: Path, known: set[str] = frozenset()) -> dict[str, list[str]]:
    text = path.read_text()
    tree = ast.parse(text)
    rel = path.relative_to(ROOT)
    found: dict[str, list[str]] = {k: [] for k in KEYS}
    lines = len(text.splitlines())
    if rel.parts[0] == "pedit" and lines > LONG_MODULE:
        found["modules"].append(f"{rel} {lines}")
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and (n := node.end_lineno - node.lineno + 1) > LONG_CLASS:
            found["classes"].append(f"{rel}:{node.lineno} {node.name} {n}")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1
            if n > LONG:
                found["long"].append(f"{rel}:{node.lineno} {node.name} {n}")
            if rel.parts[:2] == ("pedit", "engine"):
                calls = {name_of(c.func) for c in ast.walk(node) if isinstance(c, ast.Call)}
                if "Finished" in calls and f"{rel} {node.name}" not in NOT_SPECULATIVE:
                    found["loops"].append(f"{rel}:{node.lineno} {node.name}")
        asks = isinstance(node, ast.Attribute) and node.attr == "logits"
        if asks and name_of(node.value) == "capabilities" and str(rel) not in ONE_PLACE:
            found["asks"].append(f"{rel}:{node.lineno}")
        if isinstance(node, ast.Call):
            callee = name_of(node.func)
            positional = [a for a in node.args if not isinstance(a, ast.Starred)]
            a_class = callee[:1].isupper() or callee in known
            if a_class and len(positional) > 4:
                found["wide"].append(f"{rel}:{node.lineno} {callee} {len(positional)}")
            if a_class and any(isinstance(a, ast.Constant) and isinstance(a.value, bool) for a in positional):
                found["bools"].append(f"{rel}:{node.lineno} {callee}")
            if (
                callee == "get"
                and isinstance(node.func, ast.Attribute)
                and name_of(node.func.value) in {"settings", "cli", "s"}
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                found["lookups"].append(f"{rel}:{node.lineno} {node.args[0].value}")
    return found


def main() -> None:
    total: dict[str, list[str]] = {k: [] for k in KEYS}
    known = classes(files())
    for path in files():
        for key, sites in scan(path, known).items():
            total[key] += sites
    labels = {
        "long": f"functions over {LONG} lines",
        "modules": f"modules of pedit/ over {LONG_MODULE} lines",
        "classes": f"classes over {LONG_CLASS} lines",
        "wide": "constructor calls with more than 4 positional arguments",
        "bools": "constructor calls with a positional True or False",
        "lookups": 'settings.get("...") lookups',
        "loops": "speculative loops in pedit/engine (build a Finished; not plain decoding, not a server)",
        "asks": "reads of capabilities.logits outside engine/edit.py",
    }
    for key, label in labels.items():
        print(f"{len(total[key]):4d}  {label}")
        if "--list" in sys.argv:
            for site in total[key]:
                print(f"        {site}")


if __name__ == "__main__":
    main()
