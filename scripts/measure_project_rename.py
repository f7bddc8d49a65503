"""What a rename across a project costs a user, against the same rename of the defining file
alone: the real CLI, a new process per command, as a user types it, with the default model
resident (the user's default; started untimed first). The answer cache is off for the
timed commands: an answer found again is no rename's cost.

    python scripts/measure_project_rename.py [--rounds 3] [--markdown docs/project-rename.md]

For each task, a real package from the installed dependencies is copied into a git
repository of its own, and each round times, in turn:
  one file      pedit refactor DEFINING "rename OLD to NEW" --no-project --diff
                (the file alone: what pedit did before a rename was the project's)
  project       pedit refactor DEFINING "rename OLD to NEW" --diff (every file; the other
                files rope's exact edit, checked)
  written       the same with -y (the files written together, with the journal), then
                the repository reset
  verify each   not a command pedit runs: the project's time plus, for each other file
                whose comments or docstrings name OLD, the model pass it would need
                (pedit refactor FILE "rename OLD to NEW" --no-project --diff, timed): what
                having the model verify those files would cost
The breakdown is the project command's own (--stats-json): the model (prompt, answer),
rope's rename (the project's files read and renamed), the files' checks, the write, and
the rest (start-up, imports, the resident's connection). Medians; the CPU and commit named.
Nothing else should run meanwhile.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from pedit.machine.calibration import cpu_name  # noqa: E402

SITE = next(Path(p) for p in sys.path if p.endswith("site-packages") and (Path(p) / "rope").is_dir())
# (package, defining file, old, new): a class used in 10 files, an exception used in 8
TASKS = [
    ("platformdirs", "platformdirs/api.py", "PlatformDirsABC", "PlatformDirsBase"),
    ("h11", "h11/_util.py", "LocalProtocolError", "ProtocolViolation"),
]


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def repo(base: Path, package: str) -> Path:
    root = base / package
    shutil.copytree(SITE / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    git("init", "-q", "-b", "main", cwd=root)
    git("add", "-A", cwd=root)
    git("-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "sources", cwd=root)
    return root


def timed(root: Path, args: list[str], env: dict) -> tuple[float, dict]:
    stats = root.parent / "stats.json"
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pedit", *args, "--stats-json", str(stats)], cwd=root, env=env,
        capture_output=True, text=True,
    )  # fmt: skip
    seconds = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        raise SystemExit(f"{args}: exit {done.returncode}\n{done.stderr}")
    return seconds, json.loads(stats.read_text())


def prose_files(root: Path, files: list[str], old: str) -> list[str]:
    """The files whose comments or docstrings name `old` as a whole word."""
    from pedit.tools.bindings import prose

    return [f for f in files if prose((root / f).read_text(), {old: ""})]


def measure(rounds: int) -> dict:
    base = Path(tempfile.mkdtemp(prefix="pedit-project-bench-"))
    homes = {"XDG_CACHE_HOME": "cache", "XDG_RUNTIME_DIR": "run", "XDG_STATE_HOME": "state"}
    env = {**os.environ, **{k: str(base / v) for k, v in homes.items()}, "PEDIT_ANSWER_CACHE": "off"}
    env.pop("PEDIT_KEEP_ALIVE", None)  # the user's default: the model resident
    (base / "run").mkdir(mode=0o700)
    out = {"cpu": cpu_name(), "commit": _commit(), "rounds": rounds, "tasks": []}
    try:
        for package, defining, old, new in TASKS:
            root = repo(base, package)
            rename = ["refactor", defining, f"rename {old} to {new}"]
            timed(root, [*rename, "--diff"], env)  # untimed: the resident started, the cost model timed
            _, first = timed(root, [*rename, "--json"], env)
            files = [f["file"] for f in first["files"]]
            others = prose_files(root, [f for f in files if f != defining], old)
            runs: dict[str, list] = {"one file": [], "project": [], "written": [], "verify each": []}
            for _ in range(rounds):
                runs["one file"].append(timed(root, [*rename, "--no-project", "--diff"], env))
                runs["project"].append(timed(root, [*rename, "--diff"], env))
                runs["written"].append(timed(root, [*rename, "-y"], env))
                git("checkout", "-q", "--", ".", cwd=root)
                alone = [["refactor", f, f"rename {old} to {new}", "--no-project", "--diff"] for f in others]
                extra = sum(timed(root, args, env)[0] for args in alone)
                runs["verify each"].append((runs["project"][-1][0] + extra, {}))
            out["tasks"].append(_summary(package, defining, old, new, files, others, runs))
    finally:
        subprocess.run([sys.executable, "-m", "pedit", "daemon", "stop"], env=env, capture_output=True)
        shutil.rmtree(base, ignore_errors=True)
    return out


def _summary(package, defining, old, new, files, others, runs) -> dict:
    med = {k: statistics.median(s for s, _ in v) for k, v in runs.items()}
    parts: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        parts.setdefault(name, []).append(value)

    for _, stats in runs["project"]:
        mine = next(f for f in stats["files"] if "files" in f.get("project", {}))
        add("prompt", mine["prefill_seconds"] + mine.get("tool_seconds", 0.0))
        add("answer", mine["decode_seconds"])
        add("rope", mine["project"]["plan_seconds"])
        add("checks", mine["project"]["checks_seconds"])
    for _, stats in runs["written"]:
        add(
            "write",
            next(f for f in stats["files"] if "files" in f.get("project", {}))["project"]["write_seconds"],
        )
    return {
        "package": package, "defining": defining, "rename": f"{old} -> {new}", "files": len(files),
        "prose_files": others, "seconds": med, "parts": {k: statistics.median(v) for k, v in parts.items()},
        "ratio": med["project"] / med["one file"],
    }  # fmt: skip


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "pedit"], cwd=ROOT, capture_output=True, text=True
    )
    return done.stdout.strip() + ("+uncommitted" if dirty.stdout.strip() else "")


def markdown(data: dict) -> str:
    lines = [
        "# A rename across the project: what it costs",
        "",
        f"Generated by `python scripts/measure_project_rename.py --rounds {data['rounds']} --markdown "
        f"docs/project-rename.md` at {data['commit']} on {data['cpu']}, 2 cores; medians of "
        f"{data['rounds']} rounds, each a new process as a user types it, the default model resident, "
        "the answer cache off. The goal: the project's rename in at most 1.5x the time of the same "
        "rename of its defining file alone (`--no-project`).",
        "",
        "| package: rename | files | one file | project | project / one file | written (-y) | verify each |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for t in data["tasks"]:
        s = t["seconds"]
        lines.append(
            f"| {t['package']}: {t['rename']} | {t['files']} | {s['one file']:.1f} s | {s['project']:.1f} s "
            f"| {t['ratio']:.2f}x | {s['written']:.1f} s | {s['verify each']:.1f} s "
            f"(+{len(t['prose_files'])} model passes) |"
        )
    lines += ["", "Where the project command's time goes (medians, seconds):", "",
              "| package: rename | prompt | answer | rope (read and rename every file) | checks | write |",
              "|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for t in data["tasks"]:
        p = t["parts"]
        lines.append(
            f"| {t['package']}: {t['rename']} | {p['prompt']:.2f} | {p['answer']:.2f} | {p['rope']:.2f} "
            f"| {p['checks']:.2f} | {p['write']:.3f} |"
        )
    lines += [
        "",
        "The rest of each command is start-up, imports and the resident's connection. *verify each* "
        "is the project's time plus one model pass (a `--no-project` refactor of that file, timed) for "
        "every other file whose comments or docstrings name the old name: what it would cost to have "
        "the model verify those files instead of writing rope's exact edit "
        "([cli.md](cli.md#a-rename-is-the-projects)).",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--markdown", type=Path)
    ap.add_argument(
        "--from", dest="source", type=Path, help="render a saved run (the .json beside --markdown)"
    )
    args = ap.parse_args()
    data = json.loads(args.source.read_text()) if args.source else measure(args.rounds)
    if args.markdown:
        args.markdown.write_text(markdown(data))
        args.markdown.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")
    print(markdown(data))


if __name__ == "__main__":
    main()
