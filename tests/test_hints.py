"""Type hints as an edit grammar and its check (pedit/tools/hints.py), on the corpus' two
type-hint tasks and on tricky signatures.

The grammar accepts the file with a right set of annotations and rejects any other answer
at its first byte that leaves the right one (a code change, a missing annotation, a name
not defined where the annotation is evaluated, a non-PEP 8 default); `annotated()` passes
the right answer and names each failure. Whatever the reference model picks under the
grammar, greedy or sampled, the answer is one `annotated()` passes and Python runs, and
speculative decoding gives the same answer as plain decoding."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pedit.backends import open_backend
from pedit.bench.corpus import CORPUS
from pedit.checks.annotated import annotated
from pedit.engine.edit import EditOptions, edit_events
from pedit.engine.grammar import Constraint, Matcher, grammar, tokenizer_for
from pedit.engine.sampling import Sampling
from pedit.events import TokenGenerated, drain
from pedit.request import EditRequest
from pedit.tools.hints import hints_grammar, slots

CALENDAR = (CORPUS / "calendar_days.py").read_text(encoding="utf-8")
SHLEX = (CORPUS / "shlex_quote.py").read_text(encoding="utf-8")
TRICKY = '''import functools
import typing
from collections.abc import Iterable


class Editor:
    """Methods keep self and cls; a lambda keeps its parameter."""

    def __init__(self, name, *, width=80):
        self.name = name

    @classmethod
    def make(cls, text="a: b = {'c': 1}"):
        return cls(text)

    @staticmethod
    def plain(x, /, y=(1, 2), *args, z: int = 0, **kwargs):
        return x

    async def run(
        self,
        items,  # a comment, with: colons = and (parens)
        key=lambda item: item[0],
    ) -> None:
        def inner(value=None):
            return value

        return inner


@functools.lru_cache(maxsize=None)
def total(values, start=0.0,
          opts={"a=b": "c:d", 'e': "f)"}):
    return sum(values, start)
'''
FORWARD = "def first(nodes):\n    return nodes[0]\n\n\nclass Tree:\n    pass\n"
FUTURE = "from __future__ import annotations\n\n" + FORWARD
SHADOW = """class Box:
    def list(self):
        return []

    def count(self, items):
        return len(items)
"""


def swap(text: str, *pairs: str) -> str:
    """`text` with each `old` (pairs: old, new, old, new...) replaced; each occurs once."""
    for old, new in zip(pairs[::2], pairs[1::2], strict=True):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


RIGHT = {  # each file with a right set of annotations, written by hand
    "calendar": swap(
        CALENDAR,
        "isleap(year):", "isleap(year: int) -> bool:",
        "leapdays(y1, y2):", "leapdays(y1: int, y2: int) -> int:",
        "weekday(year, month, day):", "weekday(year: int, month: int, day: int) -> int:",
        "_prevmonth(year, month):", "_prevmonth(year: int, month: int) -> tuple[int, int]:",
        "_nextmonth(year, month):", "_nextmonth(year: int, month: int) -> tuple[int, int]:",
    ),
    "shlex": swap(
        SHLEX,
        "split(s, comments=False, posix=True):",
        "split(s: str | None, comments: bool = False, posix: bool = True) -> list[str]:",
        "join(split_command):", "join(split_command: list[str]) -> str:",
        "quote(s):", "quote(s: str) -> str:",
    ),
    "tricky": swap(
        TRICKY,
        "__init__(self, name, *, width=80):", "__init__(self, name: str, *, width: int = 80) -> None:",
        "make(cls, text=", "make(cls, text: str = ",
        "'c': 1}\"):", "'c': 1}\") -> typing.Any:",
        "plain(x, /, y=(1, 2), *args, z: int = 0, **kwargs):",
        "plain(x: object, /, y: tuple[int, ...] = (1, 2), *args: str, z: int = 0, **kwargs: bytes) -> int:",
        "        items,  #", "        items: Iterable[str],  #",
        "        key=lambda", "        key: typing.Callable[..., str] = lambda",
        "inner(value=None):", "inner(value: Editor | None = None) -> Editor | None:",
        "total(values, start=0.0,", "total(values: Iterable[float], start: float = 0.0,",
        "opts={", "opts: dict[str, str] = {",
        "\"f)\"}):", "\"f)\"}) -> float:",
    ),
    "future": swap(FUTURE, "first(nodes):", "first(nodes: list[Tree]) -> Tree:"),
    "forward": swap(FORWARD, "first(nodes):", "first(nodes: list[object]) -> object:"),
    "shadow": swap(
        SHADOW,
        "list(self):", "list(self) -> list[int]:",  # `list` is not yet the method here
        "count(self, items):", "count(self, items: tuple[int, ...]) -> int:",
    ),
}  # fmt: skip
FILES = {"calendar": CALENDAR, "shlex": SHLEX, "tricky": TRICKY, "future": FUTURE, "forward": FORWARD,
         "shadow": SHADOW}  # fmt: skip

# (file, old, new, what annotated() says): the right answer with one thing made wrong
CHANGES = "changes code beyond annotations"
WRONG = {
    "a renamed variable": ("shlex", "    lex = shlex(", "    lexer = shlex(", f"{CHANGES} (line 12)"),
    "a changed default": ("shlex", "posix: bool = True", "posix: bool = False", f"{CHANGES} (line 6)"),
    "a changed statement": ("calendar", "y1 -= 1", "y1 -= 2", f"{CHANGES} (line 12)"),
    "a missing annotation": ("shlex", "quote(s: str)", "quote(s)", "leaves quote(s) unannotated"),
    "a missing return": ("calendar", ") -> bool:", "):", "leaves the return of isleap unannotated"),
    "an unknown type": (
        "shlex", "quote(s: str)", "quote(s: String)", "names String, which is not defined (line 26)",
    ),
    "a type not imported": (
        "shlex", "split_command: list[str]", "split_command: Iterable[str]",
        "names Iterable, which is not defined (line 19)",
    ),
    "a class defined later": (
        "forward", "list[object]) -> object", "list[Tree]) -> Tree",
        "names Tree, which is defined only later (line 1)",
    ),
    "a method naming its class": (
        "tricky", "-> typing.Any:", "-> Editor:", "names Editor, which is defined only later (line 13)",
    ),
    "a builtin the class rebinds": (
        "shadow", "items: tuple[int, ...]", "items: list[int]", "names list, which Box rebinds (line 5)",
    ),
    "a changed annotation": (
        "tricky", "z: int = 0", "z: str = 0", "changes the annotation of Editor.plain(z) (line 17)",
    ),
    "a default without PEP 8 spacing": ("shlex", "comments: bool = False", "comments: bool=False", None),
}  # fmt: skip


@pytest.fixture(scope="module")
def ref():
    return open_backend("reference")


def rejected_at(backend, g: str, answer: str) -> int | None:
    """The byte of `answer` where the grammar (as a rewrite wraps it: then the closing
    fence) first refuses it, fed one byte token at a time; None if it takes the whole
    answer and nothing may follow."""
    m = Matcher(tokenizer_for(backend), grammar(Constraint("lark", g), after="\n```"))
    data = list((answer + "```").encode())  # the reference vocabulary's first 256 tokens are bytes
    n = m.valid_prefix(data)
    if n < len(data):
        return n
    m.consume(data)
    return None if m.done else len(data)


def first_change(right: str, wrong: str) -> int:
    return len(os.path.commonprefix([right.encode(), wrong.encode()]))


@pytest.mark.parametrize("name", list(RIGHT))
def test_the_right_answer_passes_the_grammar_and_the_check(ref, name):
    text, right = FILES[name], RIGHT[name]
    assert (rejected_at(ref, hints_grammar(text), right), annotated(text, right)) == (None, None)


@pytest.mark.parametrize("case", list(WRONG))
def test_the_grammar_rejects_a_wrong_answer_at_its_first_wrong_byte(ref, case):
    name, old, new, _ = WRONG[case]
    wrong = swap(RIGHT[name], old, new)
    assert rejected_at(ref, hints_grammar(FILES[name]), wrong) == first_change(RIGHT[name], wrong)


@pytest.mark.parametrize("case", list(WRONG))
def test_the_check_names_what_is_wrong(case):
    name, old, new, reason = WRONG[case]
    assert annotated(FILES[name], swap(RIGHT[name], old, new)) == reason


@pytest.mark.parametrize(
    "text, answer, reason",
    [
        (CALENDAR, CALENDAR, "leaves isleap(year) unannotated (and 14 more)"),
        (CALENDAR, swap(RIGHT["calendar"], "-> bool:", "-> bool"), "does not parse (line 4: expected ':')"),
        (CALENDAR, swap(RIGHT["calendar"], "import datetime\n", ""), f"{CHANGES} (line 3)"),
        ("def f(:\n", CALENDAR, "cannot be checked: the file does not parse (line 1: invalid syntax)"),
        # what the grammar does not offer but a right answer may hold: a new import for
        # the annotations, an annotated assignment
        (SHLEX, swap(RIGHT["shlex"], "list[str]) -> str", "Iterable[str]) -> str", "import re\n",
                     "import re\nfrom collections.abc import Iterable\n"), None),
        (SHLEX, swap(RIGHT["shlex"], "    lex = shlex(", "    lex: shlex = shlex("), None),
    ],
    ids=["unchanged", "not Python", "a removed import", "a file not Python", "a new import",
         "an annotated assignment"],
)  # fmt: skip
def test_the_check_on_other_answers(text, answer, reason):
    assert annotated(text, answer) == reason


LAYOUTS = [  # (file, a right answer): line ends, tabs, non-ASCII, defaults laid out oddly
    ("def f(a, b=1):\r\n    return a\r\n", "def f(a: int, b: int = 1) -> int:\r\n    return a\r\n"),
    ("def f(a): return a", "def f(a: int) -> int: return a\n"),
    ("", "\n"),
    ("def f(a,\n      b=\n      2):\n\treturn a\n",
     "def f(a: int,\n      b: int =\n      2) -> int:\n\treturn a\n"),
    ("s = 'é'; x = 1\ndef f(a='é', b=2): pass\n",
     "s = 'é'; x = 1\ndef f(a: str = 'é', b: int = 2) -> None: pass\n"),
    ("def f(x=1  ,y = 2): pass\n", "def f(x: int = 1  ,y: int = 2) -> None: pass\n"),
    ("w = '👋 \\\n'\n\x0c\ndef f(a=w): pass\n", "w = '👋 \\\n'\n\x0c\ndef f(a: str = w) -> None: pass\n"),
    ("def f(x=  # one\n  1): pass\n", "def f(x: int = # one\n  1) -> None: pass\n"),
    ("async def f(x, /, *, y): pass\n", "async def f(x: int, /, *, y: int) -> None: pass\n"),
    ("from typing import Iterable as It, TypeVar\nT = TypeVar('T')\ndef f(x): pass\n",
     "from typing import Iterable as It, TypeVar\nT = TypeVar('T')\ndef f(x: It[T] | None) -> None: pass\n"),
    ("import datetime, os\ndef f(d, p):\n    pass\n",
     "import datetime, os\ndef f(d: datetime.date, p: os.PathLike[str] | str) -> None:\n    pass\n"),
]  # fmt: skip


@pytest.mark.parametrize("text, right", LAYOUTS, ids=range(len(LAYOUTS)))
def test_odd_layouts_keep_every_byte_but_the_slots(ref, text, right):
    assert rejected_at(ref, hints_grammar(text), right) is None


@pytest.mark.parametrize(
    "text, words", [("def f(:\n", "invalid syntax"), ("def f(a):\r    return a\r", "lone carriage returns")]
)
def test_a_file_it_cannot_read_is_a_syntax_error(text, words):
    with pytest.raises(SyntaxError, match=words):
        hints_grammar(text)


def run(backend, name: str, sampling: Sampling, speculate: str = "off"):
    req = EditRequest(FILES[name], "add type hints", f"{name}.py")
    c = Constraint("lark", hints_grammar(FILES[name]))
    return drain(edit_events(backend, req, EditOptions(sampling=sampling, speculate=speculate, constraint=c)))


SAMPLINGS = st.builds(Sampling, temperature=st.sampled_from([0.0, 0.7, 1.0, 1.5]), seed=st.integers(0, 2**16))
SLOW_OK = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


@settings(max_examples=24, deadline=None, suppress_health_check=SLOW_OK)
@given(name=st.sampled_from(list(FILES)), sampling=SAMPLINGS)
def test_whatever_the_model_picks_the_answer_is_annotated_and_runs(ref, name, sampling):
    fin = run(ref, name, sampling)
    assert annotated(FILES[name], fin.text) is None
    exec(compile(fin.text, f"{name}.py", "exec"), {"__name__": "hinted"})  # every annotation evaluates


@settings(max_examples=12, deadline=None, suppress_health_check=SLOW_OK)
@given(name=st.sampled_from(list(FILES)), sampling=SAMPLINGS)
def test_speculative_decoding_under_the_grammar_gives_the_plain_answer(ref, name, sampling):
    assert run(ref, name, sampling, "fixed").tokens == run(ref, name, sampling).tokens


@pytest.mark.parametrize("name", ["calendar", "shlex", "tricky"])
def test_the_model_chooses_only_the_types(ref, name):
    """A drawn token starts where the grammar leaves a choice: inside a type, or where one
    may end. So drawn tokens <= the bytes the answer adds + one per slot; all else is forced."""
    drawn = []
    req = EditRequest(FILES[name], "add type hints", f"{name}.py")
    c = Constraint("lark", hints_grammar(FILES[name]))
    fin = drain(edit_events(ref, req, EditOptions(speculate="off", constraint=c)), drawn.append)
    drawn = [e for e in drawn if isinstance(e, TokenGenerated)]
    added = len(fin.text.encode()) - len(FILES[name].encode())
    assert len(drawn) <= added + len(slots(FILES[name]))


DONE = """import os


def f(x: int) -> int:
    return x


class A:
    def g(self, *args: str) -> None:
        pass
"""


def test_a_file_with_nothing_to_annotate_costs_no_pass_but_the_prefill(ref):
    text = DONE
    req = EditRequest(text, "add type hints", "a.py")
    fin = drain(
        edit_events(
            ref, req, EditOptions(speculate="off", constraint=Constraint("lark", hints_grammar(text)))
        )
    )
    assert (fin.text, fin.stats.forward_passes) == (text, 1)
