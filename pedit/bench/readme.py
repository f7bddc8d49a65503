"""A report's small table in README.md, between two marker lines, written by `pedit bench
--e2e --from RUNS --markdown docs/e2e.md --readme README.md`: README's figures come from a
run, as docs/' do, never typed by hand."""

from __future__ import annotations

BEGIN, END = "<!-- e2e table -->", "<!-- /e2e table -->"


def replace_block(text: str, block: str) -> str:
    """`text` with what lies between its BEGIN and END lines replaced by `block`; ValueError
    when the markers are not there once each, in order."""
    lines = text.splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    to = [i for i, line in enumerate(lines) if line.strip() == END]
    if len(at) != 1 or len(to) != 1 or to[0] < at[0]:
        raise ValueError(f"needs one {BEGIN!r} line and one {END!r} line after it")
    body = block if block.endswith("\n") else block + "\n"
    return "".join(lines[: at[0] + 1]) + body + "".join(lines[to[0] :])
