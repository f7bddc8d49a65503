"""Put back the code a `fix` re-laid out: a fix of a code file changes its comments and
strings, never its code, and that includes the code's spaces and line breaks.

A small model asked to fix the prose of a Python file often tidies the code as it copies
it ("a = n//d" -> "a = n // d", a long call split over two lines): the same tokens, so
the guard's code check (guard._code_changed) lets it through, and the diff shows changes
no one asked for. `keep_code_layout(name, source, output)` lexes both (pygments, as the
guard does) and, when they have the same code tokens, one for one, with a comment or
string in the output wherever the source has one, writes the source with each comment
and string token replaced by the output's:

    result = source, with source[s_i:e_i] := output[t_i:u_i] for every comment/string i

So every character outside comments and strings is the source's, and every change the
output made inside them is kept. Otherwise (code tokens differ, a comment was split in
two, a prose file, a file no lexer reads) the output is returned unchanged and the guard
judges it as before.
"""

from __future__ import annotations

from pathlib import PurePath

from ..checks.guard import PROSE


def keep_code_layout(name: str, source: str, output: str) -> str:
    if source == output or PurePath(name).suffix.lower() in PROSE or "\r" in source + output:
        return output
    lexer = _lexer(name)
    if lexer is None:
        return output
    a, b = _tokens(lexer, source), _tokens(lexer, output)
    if a is None or b is None or len(a) != len(b):
        return output
    pieces, at = [], 0
    for (prose_a, value_a, start, end), (prose_b, value_b, s2, e2) in zip(a, b, strict=True):
        if prose_a != prose_b or (not prose_a and value_a.strip() != value_b.strip()):
            return output
        if prose_a:
            pieces += [source[at:start], output[s2:e2]]
            at = end
    return "".join(pieces) + source[at:]


def _lexer(name: str):
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        return get_lexer_for_filename(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def _tokens(lexer, text: str) -> list[tuple[bool, str, int, int]] | None:
    """The text's tokens that are not whitespace: (in a comment or string, value, start,
    end); None when the lexer's tokens do not add up to the text (it rewrote something)."""
    from pygments.token import Comment, String

    out, at = [], 0
    for kind, value in lexer.get_tokens(text):
        if text.startswith(value, at):
            if value.strip():
                out.append((kind in Comment or kind in String, value, at, at + len(value)))
            at += len(value)
        else:
            return None
    return out if at == len(text) else None
