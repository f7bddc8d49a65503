"""The resident model soaked as users use it: many commands in a row, several at once, the
resident stopped under them now and then. The real CLI, a new process per command, the
default model and settings (the resident and the answer cache on), in a user cache and
runtime folder of its own.

    python scripts/soak_resident.py [--commands 500] [--shells 2] [--at-once 2] [--stop-every 50]
                                    [--markdown docs/resident-soak.md]

Each command is `pedit fix sNNN.txt -y` on a file of its own, one sentence with two
misspellings ("Their is a eror in sentance NNN."). `--shells` threads each keep `--at-once`
commands running (4 at a time by default); after every `--stop-every` commands ended,
`pedit daemon stop` runs. At the end: every command's exit code, how many said "internal
error", how many files are still misspelt, the commands that fell back to their own
process (one line each said why), and the resident's memory (RSS, `pedit daemon status`)
after the first `--stop-every` commands and at the end.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from pedit.identity import build  # noqa: E402
from pedit.machine.calibration import cpu_name  # noqa: E402

PEDIT = [sys.executable, "-m", "pedit"]
MISSPELT = re.compile(r"\b(eror|sentance)\b")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--commands", type=int, default=500)
    ap.add_argument("--shells", type=int, default=2)
    ap.add_argument("--at-once", type=int, default=2)
    ap.add_argument("--stop-every", type=int, default=50)
    ap.add_argument("--markdown", type=Path)
    args = ap.parse_args()

    home = Path(tempfile.mkdtemp(prefix="pedit-soak-"))
    run = Path(tempfile.mkdtemp(prefix="pr", dir="/tmp"))
    os.chmod(run, 0o700)
    cache = home / "cache"
    (cache / "pedit").mkdir(parents=True)
    from pedit import models

    models.models_dir().mkdir(parents=True, exist_ok=True)  # the user's models (assembled by the first command if absent)
    (cache / "pedit" / "models").symlink_to(models.models_dir(), target_is_directory=True)
    env = os.environ | {"XDG_CACHE_HOME": str(cache), "XDG_RUNTIME_DIR": str(run), "XDG_CONFIG_HOME": str(home)}
    for var in ("PEDIT_KEEP_ALIVE", "PEDIT_ANSWER_CACHE", "PEDIT_MODEL", "PEDIT_BACKEND"):
        env.pop(var, None)
    files = home / "files"
    files.mkdir()
    names = [f"s{i:03}.txt" for i in range(args.commands)]
    for i, name in enumerate(names):
        (files / name).write_text(f"Their is a eror in sentance {i}.\n")

    todo = collections.deque(names)
    lock = threading.Lock()
    ended: list[dict] = []
    rss: dict[str, int] = {}

    def status() -> list[dict]:
        done = subprocess.run([*PEDIT, "daemon", "status", "--json"], env=env, capture_output=True, text=True)
        try:
            return json.loads(done.stdout)
        except ValueError:
            return []

    def after_one(record: dict) -> None:
        with lock:
            ended.append(record)
            n = len(ended)
        if n % args.stop_every == 0:
            if n == args.stop_every:
                found = status()
                rss["first"] = max((s["rss_bytes"] for s in found), default=0)
            if n < args.commands:
                subprocess.run([*PEDIT, "daemon", "stop"], env=env, capture_output=True, timeout=120)

    def worker() -> None:
        while True:
            with lock:
                if not todo:
                    return
                name = todo.popleft()
            t0 = time.monotonic()
            done = subprocess.run([*PEDIT, "fix", name, "-y"], cwd=files, env=env, capture_output=True,
                                  text=True, timeout=1800)  # fmt: skip
            after_one({
                "file": name, "code": done.returncode, "seconds": time.monotonic() - t0,
                "internal": "internal error" in done.stderr,
                "fell_back": [line for line in done.stderr.splitlines() if "this process" in line],
            })  # fmt: skip

    t0 = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(args.shells * args.at_once)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    found = status()
    rss["end"] = max((s["rss_bytes"] for s in found), default=0)
    subprocess.run([*PEDIT, "daemon", "stop"], env=env, capture_output=True, timeout=120)

    codes = collections.Counter(r["code"] for r in ended)
    misspelt = [n for n in names if MISSPELT.search((files / n).read_text())]
    fell = [line for r in ended for line in r["fell_back"]]
    ratio = rss["end"] / rss["first"] if rss.get("first") else float("nan")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    lines = [
        f"Generated by `python scripts/soak_resident.py --commands {args.commands} --shells {args.shells} "
        f"--at-once {args.at_once} --stop-every {args.stop_every}` at {commit.stdout.strip()} (build "
        f"{build()}) on {cpu_name()}, {os.cpu_count()} CPUs; the default model and settings.",
        "",
        "| figure | value |",
        "|---|---:|",
        f"| commands | {len(ended)} ({args.shells * args.at_once} at a time) |",
        f"| exit codes | {', '.join(f'{c}: {n}' for c, n in sorted(codes.items()))} |",
        f"| internal errors | {sum(r['internal'] for r in ended)} |",
        f"| files still misspelt | {len(misspelt)} |",
        f"| commands that ran in their own process | {sum(bool(r['fell_back']) for r in ended)} |",
        f"| resident RSS after the first {args.stop_every} | {rss.get('first', 0) / 1e6:,.0f} MB |",
        f"| resident RSS at the end | {rss['end'] / 1e6:,.0f} MB ({ratio:.2f}x) |",
        f"| wall time | {wall:.0f} s ({wall / max(1, len(ended)):.2f} s a command) |",
    ]
    if fell:
        lines += ["", "Why commands ran in their own process (each a line they printed):", ""]
        lines += [f"- {line} ({n}x)" for line, n in collections.Counter(
            re.sub(r"\d+ files?", "N files", re.sub(r"pid \d+", "pid N", x)) for x in fell).most_common()]  # fmt: skip
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text("# The resident soaked\n\n" + text)
    ok = codes.keys() <= {0} and not misspelt and all(not r["internal"] for r in ended) and ratio <= 1.10
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
