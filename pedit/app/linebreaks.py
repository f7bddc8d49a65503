"""Put back the line breaks a model dropped when it fixed a hard-wrapped paragraph.

Asked to fix the grammar of a paragraph wrapped at 80 columns, a model often writes the
paragraph back as one long line: the words are right, the diff is the whole paragraph.
`keep_line_breaks(source, output)` aligns the two texts word by word (difflib) and, where
the source broke a line inside a paragraph (a gap with one newline) and the output joined
the same two words with a plain space, puts the source's gap back. Only whitespace inside
paragraphs changes: never a word, never a blank line, never a gap the output wrote with a
newline of its own. In Markdown and reStructuredText a line break inside a paragraph
renders as a space, so the rendered text is the same either way.

`unwrapped(text)` goes the other way, for a draft: the text with each hard-wrapped paragraph
on one line, as such a model writes it (pedit serve drafts from it beside the file itself,
engine/drafters/compose.py).
"""

from __future__ import annotations

import difflib
import re

_SPLIT = re.compile(r"(\s+)")
_MARKER = re.compile(r"([-*+>#|=]|\d+[.)]$|`{3,}|~{3,})")  # would start a list, heading, quote...
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def _parts(text: str) -> tuple[str, list[str], list[str]]:
    """(leading whitespace, words, gaps): gaps[i] follows words[i]."""
    pieces = _SPLIT.split(text)
    lead = ""
    if pieces and pieces[0] == "":
        pieces = pieces[1:]
        lead = pieces.pop(0) if pieces else ""
    words, gaps = pieces[0::2], pieces[1::2]
    if len(gaps) < len(words):
        gaps.append("")
    return lead, words, gaps


def keep_line_breaks(source: str, output: str) -> str:
    _, src_words, src_gaps = _parts(source)
    lead, out_words, out_gaps = _parts(output)
    if not src_words or not out_words:
        return output
    to_out: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, src_words, out_words, autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            to_out[block.a + k] = block.b + k
    for i, gap in enumerate(src_gaps[:-1]):
        if gap.count("\n") != 1:  # not a line break inside a paragraph
            continue
        if i in to_out:
            j = to_out[i]
        elif i + 1 in to_out:
            j = to_out[i + 1] - 1
        else:
            continue
        if 0 <= j < len(out_gaps) - 1 and out_gaps[j] == " " and not _MARKER.match(out_words[j + 1]):
            out_gaps[j] = gap
    return lead + "".join(w + g for w, g in zip(out_words, out_gaps, strict=True))


def unwrapped(text: str) -> str:
    """`text` with a space for each line break inside a paragraph: between two lines that
    each start with a word (not indented, not a list item, heading, quote, table row or
    fence), outside fenced code, the first not ending in a hard break (two spaces or a
    backslash)."""
    lines = text.split("\n")
    out, fence = [lines[0]], ""
    for prev, line in zip(lines, lines[1:], strict=False):
        opened = _FENCE.match(prev)
        if opened and not fence:
            fence = opened.group(1)
        elif opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
            fence = ""
        if not fence and _prose(prev) and _prose(line) and not prev.endswith(("  ", "\\")):
            out[-1] += " " + line
        else:
            out.append(line)
    return "\n".join(out)


def _prose(line: str) -> bool:
    """Does this line start with a word of a paragraph (not whitespace or a block's marker)?"""
    first = line.split(" ", 1)[0]
    return bool(first) and not line[0].isspace() and not _MARKER.match(first) and not line.startswith("<")
