"""Issue 56: would putting the file before the instruction in the prompt let different
commands on one file share its prefix? Counts, with the default model's tokenizer, the
prompt tokens a run could take from the one before it in the model's memory (their common
prefix), for the prompts pedit builds today (system, then the instruction, then the file)
and for the same prompts with the file first (system, then the file, then the instruction).

    python scripts/prompt_order.py [FILE ...]     (default: examples/essay.md and the corpus's textwrap.py)

For each file, two sequences a user runs:
  same command, next file   `pedit fix a`, then `pedit fix b`: the runs of one command on
                            two files (a fix's runs: one per piece of the file)
  next command, same file   `pedit fix a`, then `pedit edit a "..."` (and for code,
                            `pedit refactor a "..."`)
It prints, per sequence, the prompt tokens and the tokens the runs share with the run
before (each run's prefix in common with the previous run's prompt, the most an in-memory
cache could skip), in both orders. Token counts only: no timing, nothing else need wait.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pedit import models  # noqa: E402
from pedit.app.jobs import Job  # noqa: E402
from pedit.app.options import EngineOptions  # noqa: E402
from pedit.app.templates import BUILTIN  # noqa: E402
from pedit.engine.decode import common_prefix  # noqa: E402
from pedit.engine.prompt import encode_chat, fence_of, fenced_body, language, messages  # noqa: E402
from pedit.models.progress import quietly  # noqa: E402
from pedit.tools.options import ToolOptions  # noqa: E402

CODE = ROOT / "pedit" / "bench" / "corpus" / "textwrap_dedent.py"
INSTRUCTIONS = {"edit": "Make it more formal.", "refactor": "rename the parameter text to source"}


def prompts(backend, command: str, text: str, name: str, file_first: bool) -> list[list[int]]:
    """The prompt tokens of each run of `command` on the file, in either order."""
    job = Job(
        backend, BUILTIN[command], INSTRUCTIONS.get(command), EngineOptions(tools=ToolOptions(spelling=False))
    )
    pieces = job.pieces(text, name, "rewrite")
    out = []
    for i, piece in enumerate(pieces, 1):
        req = job.request(piece, name, f"part {i} of {len(pieces)}" if len(pieces) > 1 else "")
        fence = fence_of(req)
        msgs = messages(req, fence)
        if file_first:
            lang = language(name)
            user = f"{name}:\n{fence}{lang}\n{fenced_body(req.text)}{fence}\n\n{req.instruction.strip()}"
            msgs = [msgs[0], {"role": "user", "content": user}]
        out.append(encode_chat(backend, msgs) + backend.tokenize(f"{fence}{language(name)}\n"))
    return out


def shared(runs: list[list[int]], later: int) -> tuple[int, int, int]:
    """Over the runs from `later` on (the second command's): (their prompt tokens, those each
    shares with the run just before it (what the model's memory holds), those it shares
    with the best of all the runs before it (a cache that kept every prompt))."""
    total = sum(len(p) for p in runs[later:])
    last = sum(common_prefix(runs[i - 1], runs[i]) for i in range(later, len(runs)))
    best = sum(max(common_prefix(runs[j], runs[i]) for j in range(i)) for i in range(later, len(runs)))
    return total, last, best


def main() -> None:
    files = [Path(a) for a in sys.argv[1:]] or [ROOT / "examples" / "essay.md", CODE]
    backend = quietly(models.load(models.DEFAULT_MODEL, "llama.cpp"))
    print(
        f"model {models.DEFAULT_MODEL}; the second command's prompt tokens: shared with the run before it, "
        "with the best earlier run, of all"
    )
    print("| file | sequence | instruction first (today) | file first |")
    print("|---|---|---:|---:|")
    try:
        for f in files:
            text, name = f.read_text(encoding="utf-8"), f.name
            other = "refactor" if f.suffix == ".py" else "edit"
            sequences = {
                "fix, then the next file's fix": ("fix", text.replace("e", "a", 1), "other" + f.suffix),
                f"fix, then {other} on the same file": (other, text, name),
            }
            for label, (command, text2, name2) in sequences.items():
                cells = []
                for first in (False, True):
                    runs = prompts(backend, "fix", text, name, first)
                    total, last, best = shared(
                        runs + prompts(backend, command, text2, name2, first), len(runs)
                    )
                    cells.append(f"{last} / {best} / {total}")
                print(f"| {name} | {label} | {cells[0]} | {cells[1]} |")
    finally:
        backend.close()


if __name__ == "__main__":
    main()
