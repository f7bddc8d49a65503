"""Is a rewrite safe to write? The checks every shell runs before it replaces a file.

A model can answer with a different file: half of it, a paragraph twice, a fix that
rewrites every sentence, code whose grammar "fix" renamed a variable. Every check returns
a verdict: a Refusal (why, and whether --force may write it anyway) or None (it may be
written). `judge(name, old, new, judged=...)` judges a rewrite, `judge_fix` one piece of
a fix, `incomplete` one run's answer; the shells refuse with the Refusal's one line
unless the user forces it (Refusal.error: RefusedError, exit 5).

Every command: an empty answer (blank lines only) for a file with text is never a
rewrite, and no flag writes it (`never`: --force does not override it); a file of a
structured format that parsed before must parse after (Python, JSON, TOML, YAML); and an
answer that is only the start of the file (`cut_short`, checked per run by
incomplete, chunks included) is not a rewrite.
A judged template only (Template.judged: `fix`, an instruction to change little;
`judge_fix`, which also judges one piece of a file, a chunk or a paragraph, on its own), also:
    paragraphs      every paragraph of old (blank-line separated, >= PARAGRAPH words) keeps
                    most of its words in new, kept or corrected (`corrected`: a close
                    spelling of the same word), and new has no paragraph old did not have
                    (a duplicated one included)
    changed words   d_w(old, new) <= WORDS * |words(old)|, where d_w counts the words
                    replaced, inserted or deleted in difflib's word alignment (a corrected
                    word is a changed word here: see Alignment.too_many_changed)
    size            len(new) >= SHRINK * len(old)
    skeleton        the document's skeleton (tools/skeleton: links' targets, code spans and
                    blocks, HTML, markup; a code file's code) is the same, piece by piece
                    (`skeleton_changed`): what a fix's grammar forces, checked where none ran;
                    and the prose between two pieces keeps most of its words (`prose_moved`:
                    the grammar lets a hole's text go anywhere, a sentence across a code span)
    code            in a code file, the tokens outside comments and strings are the same
                    (pygments' lexer for the file name): a fix of the prose in code never
                    changes what the code does
    markup          new has no more marks of a kind than old: backticks, emphasis (* _),
                    headings (#, not in code files) and list items (`added_markup`): the fix
                    instruction keeps the formatting, and a small model likes to add it
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import PurePath

from ..errors import RefusedError
from ..events import Finished
from ..tools import skeleton
from .parse import parse_error
from .skeletoncheck import skeleton_changed

WORDS = 0.25  # a fix changes at most this share of the words...
MIN_WORDS = 8  # ...once it changes more than this many
SHRINK = 0.5  # a fix keeps at least this share of the characters...
MIN_CHARS = 200  # ...of a file at least this long
PARAGRAPH = 5  # paragraphs with at least this many words are checked
KEPT = 0.5  # a paragraph is kept when at least this share of its words is (or is corrected)
CLOSE = 0.75  # a word is corrected when its similarity to the old one is at least this...
CLOSE_LEN = 4  # ...and both have at least this many letters and digits
BLOCK = 2500  # word pairs searched for corrections in one replaced run (50 x 50 words)
PROSE = {".md", ".markdown", ".rst", ".txt", ".text", ".tex", ".html", ".htm", ""}


@dataclass(frozen=True, kw_only=True)
class Refusal:
    """Why an answer must not be written, and whether --force may write it anyway."""

    reason: str
    forceable: bool = True

    def stands(self, force: bool) -> bool:
        """Is it refused, with --force given or not?"""
        return not (force and self.forceable)

    def error(self, name: str) -> RefusedError:
        """The one line the shells say for the file `name` (exit 5)."""
        hint = " (--force to write it anyway)" if self.forceable else ""
        line = f"{name}: {self.reason}; nothing written{hint}"
        return RefusedError(line, force=self.forceable, reason=self.reason)


def judge(name: str, old: str, new: str, *, judged: bool) -> Refusal | None:
    """Why `new` must not replace `old` (the file `name`), or None; `judged`: the template
    asks for the fix checks too (Template.judged). An empty answer is not forceable."""
    if empty := never(old, new):
        return Refusal(reason=empty, forceable=False)
    if found := parse_error(name, old, new):
        return Refusal(reason=found)
    return judge_fix(name, old, new) if judged else None


def never(old: str, new: str) -> str | None:
    """What no flag writes: an empty answer (or blank lines only) for a file with text
    (a constraint only the empty text matches, a model that stopped at once). A file
    that was empty may stay so."""
    if old.strip() and not new.strip():
        return "the answer is empty"
    return None


def judge_fix(name: str, old: str, new: str) -> Refusal | None:
    """Why `new` is not a fix of `old`, or None: the `fix` checks without the parse check,
    so that they also judge one piece of the file `name` (a chunk, a paragraph). A piece of
    a code file must be one its lexer reads alone: a paragraph cut out of a docstring (a
    chunk can start at any blank line) lexes as code, and its fix as a code change; judge
    such a piece as the whole file with that piece replaced."""
    if new == old:
        return None
    words = Alignment(old, new)  # one difflib alignment serves the two word checks
    found = words.paragraph_lost() or words.too_many_changed() or _shrunk(old, new)
    prose = PurePath(name).suffix.lower() in PROSE
    if not found and not prose:
        found = _code_changed(name, old, new)
    found = found or added_markup(old, new, headings=prose)
    if not found:  # each text's skeleton read once, for both of its checks
        a, b = skeleton.of(old, name), skeleton.of(new, name)
        found = skeleton_changed(a, b) or prose_moved(a, b)
    return Refusal(reason=f"a fix {found}") if found else None


def prose_moved(a: skeleton.Skeleton, b: skeleton.Skeleton) -> str | None:
    """With the skeleton kept, the first stretch of prose between two of its pieces (of
    PARAGRAPH words or more) less than KEPT of whose words new keeps, kept or corrected,
    in the same stretch: prose moved across a piece ("add python-dotenv to your app ...
    from a `.env` file" -> "add `.env` to your app ... from a file"), which the grammar
    allows (the holes' text is free) and which changes what the text says. `a`, `b`: the
    old and new texts' skeletons."""
    old = a.text
    x, y = skeleton.segments(a), skeleton.segments(b)
    if len(x) != len(y):
        return None  # skeleton_changed says why
    at = 0
    for one, two in zip(x, y, strict=True):
        words = one.split()
        if len(words) >= PARAGRAPH and one != two:
            kept, _ = Alignment(one, two).kept()
            if sum(kept) < KEPT * len(words):
                line = old.count("\n", 0, old.index(one, at)) + 1
                return f"moves prose across the document's skeleton (line {line}: {_quote(words)})"
        at += len(one)
    return None


def cut_short(old: str, new: str) -> str | None:
    """An answer that is the start of the file and much shorter: the model stopped copying
    and closed its block early. Not a rewrite, whatever the command (--force writes it)."""
    head = new.rstrip()
    if head and len(new) < SHRINK * len(old) and old.startswith(head):
        return (
            f"stops early: it is the file's first {head.count(chr(10)) + 1} of "
            f"{old.rstrip().count(chr(10)) + 1} lines"
        )
    return None


# --- what a fix may change --------------------------------------------------------------


def _shrunk(old: str, new: str) -> str | None:
    if len(old) >= MIN_CHARS and len(new) < SHRINK * len(old):
        return f"shrinks the file from {len(old)} to {len(new)} characters"
    return None


class Alignment:
    """difflib's word alignment of old and new (words: whitespace-separated)."""

    def __init__(self, old: str, new: str):
        self.old, self.new = old, new
        self.a, self.b = old.split(), new.split()
        self.ops = difflib.SequenceMatcher(None, self.a, self.b, autojunk=False).get_opcodes()

    def too_many_changed(self) -> str | None:
        """d_w = sum over the alignment's non-equal runs of max(|run in old|, |run in new|).

        A corrected word counts here, unlike in paragraph_lost: this is the check against a
        fix that edits every word a little (Title Case, a spelling variety, punctuation or
        tense throughout), which the paragraph check lets through by design. Corrections
        alone do not reach it: WORDS is 25% and d_w must exceed MIN_WORDS, while the densest
        errors here are examples/essay.md's, 12 of its 91 words (13%; 8 of the 46 of its
        first paragraph, 17%), and the benchmark's fix inputs have 6% at most."""
        changed = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in self.ops if tag != "equal")
        if changed > MIN_WORDS and changed > WORDS * len(self.a):
            return f"changes {changed} of {len(self.a)} words (more than {WORDS:.0%})"
        return None

    def kept(self) -> tuple[list[bool], list[bool]]:
        """Which words of old and of new the alignment keeps: those of its equal runs, and
        in each replaced run the words paired with a correction of themselves (`_pairs`)."""
        kept_a, kept_b = [False] * len(self.a), [False] * len(self.b)
        for tag, i1, i2, j1, j2 in self.ops:
            if tag == "equal":
                kept_a[i1:i2] = [True] * (i2 - i1)
                kept_b[j1:j2] = [True] * (j2 - j1)
            elif tag == "replace":
                for i, j in _pairs(self.a[i1:i2], self.b[j1:j2]):
                    kept_a[i1 + i] = kept_b[j1 + j] = True
        return kept_a, kept_b

    def paragraph_lost(self) -> str | None:
        """A paragraph of old (>= PARAGRAPH words) less than KEPT of whose words are kept or
        corrected in new: dropped, or replaced by other text; or one of new that is not old's.
        Unrelated English paragraphs share a few words by chance (400 random pairs of 20-word
        pieces of the benchmark's prose: at most 25% kept or corrected, as CLOSE and CLOSE_LEN
        are; 38% with no CLOSE_LEN); a fix keeps nearly all of its paragraph's words,
        and a short one with dense errors most ("This sentense have two mistake." -> "This
        sentence has two mistakes.": 4 of 5, "have" -> "has" not being a close spelling)."""
        kept_a, kept_b = self.kept()
        for paragraph in _paragraphs(self.old, kept_a):
            return f"drops a paragraph ({_quote(paragraph)})"
        for paragraph in _paragraphs(self.new, kept_b):
            again = " ".join(paragraph) in {" ".join(p) for p in _all_paragraphs(self.old)}
            return f"{'duplicates' if again else 'adds'} a paragraph ({_quote(paragraph)})"
        return None


def _fold(word: str) -> str:
    """A word without case and punctuation: "Mistake." -> "mistake", "year's" -> "years"
    (a word of punctuation only stays itself)."""
    return re.sub(r"[\W_]+", "", word.lower()) or word


def corrected(x: str, y: str) -> bool:
    """Is `y` the word `x` or a close spelling of it, as a fix of a typo or an inflection
    makes? Folded (`_fold`), x == y; or both have >= CLOSE_LEN characters and

        ratio(x, y) = 2 M / (|x| + |y|) >= CLOSE,

    M the characters in difflib's matching blocks of the two (Ratcliff/Obershelp, the
    `SequenceMatcher.ratio` of the standard library): at most a quarter of the characters
    of the two words unmatched. "sentense" -> "sentence" 0.88, "storys" -> "stories" 0.77,
    "Their" -> "There" 0.8, "recieve" -> "receive" 0.86; not "have" -> "has" (0.57) nor
    "is" -> "are". Short words are left out: the commonest words are short and close to
    each other ("the", "then", "they"; "he", "she"), so they would pair unrelated text."""
    x, y = _fold(x), _fold(y)
    if x == y:
        return True
    if min(len(x), len(y)) < CLOSE_LEN:
        return False
    match = difflib.SequenceMatcher(None, x, y, autojunk=False)
    return match.real_quick_ratio() >= CLOSE and match.quick_ratio() >= CLOSE and match.ratio() >= CLOSE


def _pairs(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """The most pairs (i, j), in the order of both lists, with b[j] `corrected` a[i]: the
    longest common subsequence with `corrected` for equality,

        L[i][j] = L[i-1][j-1] + 1 if corrected(a_i, b_j) else max(L[i-1][j], L[i][j-1]),

    then walked back from L[n][m]. A run with more than BLOCK pairs to try, no word of
    which is kept exactly, is other text, not a fix: no pairs."""
    n, m = len(a), len(b)
    if n * m > BLOCK:
        return []
    hit = [[corrected(x, y) for y in b] for x in a]
    lcs = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n):
        for j in range(m):
            lcs[i + 1][j + 1] = lcs[i][j] + 1 if hit[i][j] else max(lcs[i][j + 1], lcs[i + 1][j])
    pairs, i, j = [], n, m
    while i and j:
        if hit[i - 1][j - 1]:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif lcs[i - 1][j] >= lcs[i][j - 1]:
            i -= 1
        else:
            j -= 1
    return pairs[::-1]


def _all_paragraphs(text: str) -> list[list[str]]:
    return [p.split() for p in re.split(r"\n[ \t]*\n", text) if p.strip()]


def _paragraphs(text: str, kept: list[bool]):
    """The paragraphs of `text` (word lists) most of whose words the alignment lost."""
    at = 0
    for words in _all_paragraphs(text):
        share = sum(kept[at : at + len(words)]) / len(words)
        if len(words) >= PARAGRAPH and share < KEPT:
            yield words
        at += len(words)


def _quote(words: list[str]) -> str:
    head = " ".join(words[:6])
    return f'"{head}…"' if len(words) > 6 else f'"{head}"'


def _code_changed(name: str, old: str, new: str) -> str | None:
    """The first code token (outside comments and strings) that differs, or None."""
    from pygments.lexers import get_lexer_for_filename
    from pygments.token import Comment, String
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_for_filename(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None

    def code(text: str) -> list[tuple[int, str]]:
        out, line = [], 1
        for kind, value in lexer.get_tokens(text):
            if value.strip() and kind not in Comment and kind not in String:
                out.append((line, value.strip()))
            line += value.count("\n")
        return out

    a, b = code(old), code(new)
    for (line, x), (_, y) in zip(a, b, strict=False):
        if x != y:
            return f"changes code, not only comments and strings (line {line}: {x!r} -> {y!r})"
    if len(a) != len(b):
        return "changes code, not only comments and strings (code added or removed)"
    return None


# --- markup a fix adds -----------------------------------------------------------------

MARKUP = {  # kind: one mark of it
    "backticks": re.compile(r"`+"),
    # a run of * or _ that opens (a letter or digit after, no word character before) or
    # closes (the reverse): not snake_case's _, not "a * b", not a "* " bullet
    "emphasis": re.compile(r"(?<![\w*])[*_]+(?=[^\W_])|(?<=[^\W_])[*_]+(?![\w*])"),
    "headings": re.compile(r"^ {0,3}#{1,6}(?=[ \t]|$)", re.M),
    "list items": re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])(?=[ \t]+\S)", re.M),
}


def added_markup(old: str, new: str, headings: bool = True) -> str | None:
    """The first kind of MARKUP with more marks in new than in old (marks counted, so
    markup old had and new keeps, wherever it moves, is fine; an apostrophe is no mark),
    with the first of new's marks whose next words on its line old does not have.
    `headings=False` for a code file, where # starts a comment."""
    flat = " ".join(old.split())
    for kind, mark in MARKUP.items():
        if (kind == "headings" and not headings) or len(mark.findall(new)) <= len(mark.findall(old)):
            continue
        for found in mark.finditer(new):
            words = new[found.start() :].split("\n", 1)[0].split()
            if " ".join(words[:4]) not in flat:
                return f"adds markup ({kind}: {_quote(words[:7])})"
        return f"adds markup ({kind})"
    return None


END_LINES = 3  # an unclosed answer that ends with the file's last lines reached its end


def reached_end(text: str, answer: str) -> bool:
    """Did an answer that ended without its closing fence still reach the end of the file?
    Its last END_LINES non-blank lines are the file's (a Markdown file that ends with a
    code block: the model took the block's closing line for its own and stopped)."""
    tail = [x.rstrip() for x in text.splitlines() if x.strip()][-END_LINES:]
    return bool(tail) and [x.rstrip() for x in answer.splitlines() if x.strip()][-END_LINES:] == tail


def incomplete(text: str, fin: Finished) -> Refusal | None:
    """Why an answer is not a whole rewrite of `text`, or None. Not forceable: one cut off
    by a limit, and an empty one for a file that has text (closed at once, or stopped at
    once: see `never`). Forceable: one that ended without closing its fence before the
    file's end (the model stopped early, or forgot the fence: pedit cannot tell; see
    reached_end), and one that is only the start of the file (`cut_short`)."""
    stop, n = fin.stats.stop_reason, fin.stats.completion_tokens
    if stop in ("max_tokens", "context"):
        why = f"was cut off after {n} tokens (by --max-tokens or the context window: raise them)"
        return Refusal(reason=f"the model's answer {why}", forceable=False)
    if never(text, fin.text):
        return Refusal(reason="the model's answer is empty", forceable=False)
    if stop != "fence" and not (stop == "eos" and reached_end(text, fin.text)):
        why = f"ended after {n} tokens without closing its code block (an incomplete rewrite)"
    else:
        why = cut_short(text, fin.text)
    return Refusal(reason=f"the model's answer {why}") if why else None
