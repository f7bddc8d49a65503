"""A prompt's variants, tokenized by splicing: the prompt with its file's text changed in
a few places (a tool's candidate edits, engine/likelihood.py scores them) is the prompt's
tokens with only the changed lines tokenized again.

A tool proposes hundreds of variants of a paragraph (one word swapped each); tokenizing
each variant's whole prompt again took 0.8 s of a two-paragraph fix (prose-walden, 853
variants). A variant differs from its base in a few lines, so

    variant = base[:i] + tokenize(its lines from a0 to a1) + base[j:]

where base[i] and base[j] are the tokens that start at the line starts a0 and a1. That is
exact where the tokenizer splits the text there anyway: a byte-level BPE's pre-tokenizer
(GPT-2's, Qwen's, Llama 3's) never lets a token run across a line break into a line that
starts with a non-space character, so the tokens before a0, between a0 and a1, and from a1
on are tokenized apart. A line start qualifies where the base has a token boundary, the
character before it is a line break and the one at it is not a space in both texts;
otherwise the span grows by a line at each end until it does, or the variant is tokenized
whole. A tokenizer that does not split so (SentencePiece adds a space before a text's
first word) fails `splits_at_lines`, a check of a fixed text made once per backend, and
then every variant is tokenized whole; the caller also checks the variants it reads
(fix.scored).
"""

from __future__ import annotations

import bisect
import weakref
from collections.abc import Callable, Sequence

Edit = tuple[int, int, str]  # text[start:end] -> replacement
_SPACE = frozenset(b" \t\r\n\x0b\x0c")
_CHECKED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

# the check's text: lines that start with words, capitals, punctuation, digits, quotes and
# spaces, and its edits: words swapped, put in and taken out, at a line's start and end
_SAMPLE = (
    "Their is many reasons why peoples enjoys reading.\n"
    "A good book take you to another world, and it's teach you.\n"
    "  an indented line, with `code` in it\n"
    "- a list item: \"quoted\" words\n"
    "\n"
    "# A heading 2 the end\n"
    "3 numbers, café and naïve words.\n"
    "Last line without a break"
)
_SAMPLE_EDITS: list[list[Edit]] = [
    [(_SAMPLE.index(w) + k, _SAMPLE.index(w) + k + len(old), new)]
    for w, k, old, new in (
        ("Their", 0, "Their", "There"), ("is many", 0, "is", "are"), ("A good", 0, "A", "The"),
        ("teach", 0, "teach", "teaches"), ("it's", 0, "it's", "it"), ("you.", 3, "", ","),
        ("  an", 2, "an", "ANY"), ("- a", 2, "", "the "), ("# A", 2, "A", "Another"),
        ("3 numbers", 0, "3", "Three"), ("Last", 0, "", "The "), ("break", 0, "break", "breaks"),
        ("reading.\n", 8, "\n", " "), ("item:", 0, "item", "items"),
    )
]  # fmt: skip


def spliced(
    tokenize: Callable[[str], list[int]], pieces: Sequence[bytes], base: Sequence[int], text: str,
    variants: Sequence[Sequence[Edit]],
) -> list[list[int] | None]:
    """Each variant's tokens (its edits applied to `text`, which `base` holds once), or None
    where no line start on either side qualifies (module docstring; the text's end is one
    only after a line break, so an edit of a last line without one gives None). `pieces`: each base
    token's bytes (b"" for a control token)."""
    blob = b"".join(pieces)
    raw = text.encode()
    at = blob.find(raw) if raw else -1
    if at < 0 or blob.find(raw, at + 1) >= 0:  # not in the prompt once: no place to splice
        return [None] * len(variants)
    where, off = {}, 0  # byte offset of each token's start -> its index
    for i, p in enumerate(pieces):
        where.setdefault(off, i)
        off += len(p)
    where[off] = len(pieces)
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]  # line starts, in chars
    byte_at = _byte_offsets(text, starts)
    return [_one(tokenize, blob, base, text, at, where, starts, byte_at, edits) for edits in variants]


def _one(tokenize, blob, base, text, at, where, starts, byte_at, edits) -> list[int] | None:
    s, e = min(a for a, _, _ in edits), max(b for _, b, _ in edits)
    lo = bisect.bisect_right(starts, s) - 1  # the line that holds the first edit
    hi = bisect.bisect_right(starts, e)  # the line after the last
    while hi < len(starts):  # a text's end is a line start only after its last line break
        a0, a1 = starts[lo], starts[hi]
        x0, x1 = at + byte_at[a0], at + byte_at[a1]
        region = _apply(text, edits, a0, a1)
        if (_qualifies(blob, where, x0, region[:1]) and _qualifies(blob, where, x1, "")
                and region.endswith("\n")):  # fmt: skip
            return [*base[: where[x0]], *tokenize(region), *base[where[x1] :]]
        if lo == 0 and hi == len(starts) - 1:
            break
        lo, hi = max(lo - 1, 0), min(hi + 1, len(starts) - 1)
    return None


def _qualifies(blob: bytes, where: dict[int, int], x: int, first: str) -> bool:
    """A token starts at byte x, after a line break, and neither text has a space there
    (`first`: the variant's first character where its region starts at x)."""
    return (x in where and x > 0 and blob[x - 1] == 0x0A and x < len(blob) and blob[x] not in _SPACE
            and not (first and first.isspace()))  # fmt: skip


def _apply(text: str, edits: Sequence[Edit], a0: int, a1: int) -> str:
    out, at = [], a0
    for s, e, r in sorted(edits):
        out += [text[at:s], r]
        at = e
    return "".join(out) + text[at:a1]


def _byte_offsets(text: str, starts: list[int]) -> dict[int, int]:
    out, done, nbytes = {}, 0, 0
    for x in [*starts, len(text)]:
        nbytes += len(text[done:x].encode())
        out[x], done = nbytes, x
    return out


def splits_at_lines(backend) -> bool:
    """Does `backend`'s tokenizer split a text where `spliced` assumes (module docstring)?
    Checked on a fixed text once per backend: each of its edits spliced against the whole
    text tokenized again."""
    got = _CHECKED.get(backend)
    if got is None:
        frame = "```text\n{}\n```"
        base = backend.tokenize(frame.format(_SAMPLE))
        pieces = [backend.token_bytes(t) for t in base]
        outs = spliced(backend.tokenize, pieces, base, _SAMPLE, _SAMPLE_EDITS)
        got = all(
            o is None or o == backend.tokenize(frame.format(_apply(_SAMPLE, e, 0, len(_SAMPLE))))
            for o, e in zip(outs, _SAMPLE_EDITS, strict=True)
        ) and any(o is not None for o in outs)
        _CHECKED[backend] = got
    return got


def distrust(backend) -> None:
    """A spliced variant was found wrong (fix.scored checks those it reads): tokenize this
    backend's variants whole from now on."""
    _CHECKED[backend] = False
