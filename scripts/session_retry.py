"""Issue 71: the prompt tokens an interactive session's retry reads ("e": the answer rejected,
the instruction edited), with the file before the instruction (session.FILE_FIRST, today)
and after it (the commands' order), counted with the default model's tokenizer: a retry
reads its prompt after the longest prefix it shares with the turn before it, which the
model's cache holds (decode.prefill). Token counts only: no timing.

    python scripts/session_retry.py [FILE ...]   (default: examples/essay.md and the corpus's textwrap.py)
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pedit import models  # noqa: E402
from pedit.app.session import Session  # noqa: E402
from pedit.engine.decode import common_prefix  # noqa: E402
from pedit.engine.prompt import build_prompt  # noqa: E402
from pedit.models.progress import quietly  # noqa: E402

CODE = ROOT / "pedit" / "bench" / "corpus" / "textwrap_dedent.py"
RETRIES = [("Fix the grammar.", "Fix the grammar and the spelling."),
           ("Make it more formal.", "Make it a little more formal.")]  # fmt: skip


def main(paths: list[Path]) -> None:
    backend = quietly(models.load(models.DEFAULT_MODEL))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    at = commit.stdout.strip()
    print(f"`python scripts/session_retry.py` at {at}, {models.DEFAULT_MODEL}'s tokenizer:\n")
    print("| file | first instruction → retry | prompt tokens | retry reads, file first (today) "
          "| instruction first |")
    print("|---|---|---:|---:|---:|")
    for path in paths:
        s = Session(backend, path.read_text(encoding="utf-8"), path.name)
        for first, again in RETRIES:
            read = {}
            for file_first in (True, False):
                a, b = (build_prompt(backend, replace(s.request(i), file_first=file_first)).tokens
                        for i in (first, again))  # fmt: skip
                read[file_first] = len(b) - min(common_prefix(a, b), len(b) - 1)
            total = len(build_prompt(backend, s.request(again)).tokens)
            print(f"| {path.name} | {first} → {again} | {total} | {read[True]} | {read[False]} |")


if __name__ == "__main__":
    main([Path(p) for p in sys.argv[1:]] or [ROOT / "examples" / "essay.md", CODE])
