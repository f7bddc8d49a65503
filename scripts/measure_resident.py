"""What the resident model and the answer cache save a user, command by command: the real
CLI, a new process per command, as a user types it, with the default model.

    python scripts/measure_resident.py [--repeats 3] [FILE]

For FILE (default: examples/essay.md, copied to a temporary folder), each round runs
`pedit fix FILE --stdout` once untimed (the caches on disk as after a user's first
command), then times it, in a user cache and runtime directory of its own:
  load each time   PEDIT_KEEP_ALIVE=0, no answer cache: the command loads its model
  first command    the resident started by it (none running before), no answer cache
  warm             the resident running; the answer cache has no answer: the model runs
  answered before  the same again: the answer cache's, no model
  one paragraph changed   a word added to the last paragraph: that piece runs, the
                   others are the answers kept from before
  resident memory  the resident's RSS after these (pedit daemon status), in MB
  gone after keep-alive   a last command sets the keep-alive to 3 s (its own request's):
                   seconds from its end until the resident process has exited (its memory
                   released)
--long: FILE is the corpus's plain-text prose files, one after another, to about 800 words
(a file the fix cuts in a dozen runs). --one-line: FILE is "Hello wrold." alone.
and prints the medians, with the machine's CPU. Nothing else should run meanwhile.
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
from pedit.machine.cpus import usable_cpus  # noqa: E402

PEDIT = [sys.executable, "-m", "pedit"]


def timed(args: list[str], cwd: Path, env: dict) -> float:
    t = time.perf_counter()
    done = subprocess.run([*PEDIT, *args], cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if done.returncode not in (0, 1):
        sys.exit(f"pedit {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return seconds


def one_round(source: Path, home: Path) -> dict[str, float]:
    work = home / "work"
    work.mkdir()
    text = source.read_text()
    env = os.environ | {"XDG_RUNTIME_DIR": str(home / "run"), "PEDIT_KEEP_ALIVE": "300"}
    env |= {"XDG_CACHE_HOME": str(home / "cache"), "PEDIT_ANSWER_CACHE": "on"}
    cache = home / "cache" / "pedit"
    cache.mkdir(parents=True)
    (cache / "models").symlink_to(Path.home() / ".cache" / "pedit" / "models", target_is_directory=True)
    for d in ("builds", "costs", "vocab", "prefixes"):  # the cost model and caches a user has after a command
        if (Path.home() / ".cache" / "pedit" / d).is_dir():
            shutil.copytree(Path.home() / ".cache" / "pedit" / d, cache / d)
    f = work / source.name
    f.write_text(text)
    args = ["fix", f.name, "--stdout"]
    off = env | {"PEDIT_KEEP_ALIVE": "0", "PEDIT_ANSWER_CACHE": "off"}
    timed(args, work, off)  # untimed: the caches on disk as after a user's first command
    out = {"load each time": timed(args, work, off)}
    out["first command"] = timed(args, work, off | {"PEDIT_KEEP_ALIVE": "300"})  # starts the resident
    out["warm"] = timed(args, work, env)  # the resident; the answer cache has none: the model runs
    out["answered before"] = timed(args, work, env)
    f.write_text(text.rstrip() + " Indeed.\n")  # the last paragraph's piece changes
    out["one paragraph changed"] = timed(args, work, env)  # its piece runs; the others' answers are kept
    shown = subprocess.run([*PEDIT, "daemon", "status", "--json"], env=env, capture_output=True, text=True)
    (status,) = json.loads(shown.stdout)
    out["resident memory (MB)"] = status["rss_bytes"] / 1e6
    timed(args, work, env | {"PEDIT_KEEP_ALIVE": "3s", "PEDIT_ANSWER_CACHE": "off"})  # the resident runs it
    t = time.perf_counter()
    while _alive(status["pid"]) and time.perf_counter() - t < 60:
        time.sleep(0.05)
    out["gone after keep-alive 3 s (s)"] = time.perf_counter() - t
    subprocess.run([*PEDIT, "daemon", "stop"], env=env, capture_output=True)
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", type=Path, default=ROOT / "examples" / "essay.md")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--long", action="store_true", help="the corpus's prose .txt files as one file")
    ap.add_argument("--one-line", action="store_true", help='a file of one line: "Hello wrold."')
    a = ap.parse_args()
    if a.one_line:
        a.file = Path(tempfile.mkdtemp(prefix="pr", dir="/tmp")) / "hello.md"
        a.file.write_text("Hello wrold.\n")
    if a.long:
        texts = []
        for p in sorted((ROOT / "pedit" / "bench" / "corpus").glob("*.txt")):
            if sum(len(t.split()) for t in texts) < 800:  # about 800 words: a dozen runs
                texts.append(p.read_text().strip())
        joined = "\n\n".join(texts) + "\n"
        a.file = Path(tempfile.mkdtemp(prefix="pr", dir="/tmp")) / "long.txt"
        a.file.write_text(joined)
    rounds = []
    for _ in range(a.repeats):
        with tempfile.TemporaryDirectory(prefix="pr", dir="/tmp") as home:
            rounds.append(one_round(a.file, Path(home)))
    words = len(a.file.read_text().split())
    print(f"{a.file.name} ({words} words), pedit fix --stdout, default model; {cpu_name()}, "
          f"{usable_cpus()} cores; "
          f"medians of {a.repeats} rounds (python scripts/measure_resident.py)")  # fmt: skip
    print("| command | seconds |\n|---|---:|")
    for k in rounds[0]:  # seconds, but for the rows that say otherwise
        print(f"| {k} | {statistics.median(r[k] for r in rounds):.2f} |")


if __name__ == "__main__":
    main()
