"""A fix of a code file keeps the code as it was laid out (app/codelayout.py): the
comments and strings are the answer's, every other character the source's."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pedit.app.codelayout import keep_code_layout
from pedit.checks.guard import judge_fix
from tiny import model_work

SOURCE = '''def limit(n, d):
    """Retrun the the ratio."""
    # assosiated to x
    a = n//d
    q2 = q0+a*q1
    return f(a,
             q2)  # done
'''


def test_the_code_is_the_source_s_and_the_prose_the_answer_s():
    answer = '''def limit(n, d):
    """Return the ratio."""
    # associated to x
    a = n // d
    q2 = q0 + a * q1

    return f(a, q2)  # done.
'''
    kept = keep_code_layout("limit.py", SOURCE, answer)
    assert kept == SOURCE.replace("Retrun the the", "Return the").replace("assosiated", "associated").replace(
        "# done", "# done."
    )
    assert judge_fix("limit.py", SOURCE, kept) is None


def test_an_answer_that_changes_code_or_splits_a_comment_is_left_to_the_guard():
    renamed = SOURCE.replace("q2 = q0+a*q1", "q3 = q0 + a * q1")
    assert keep_code_layout("limit.py", SOURCE, renamed) == renamed
    split = SOURCE.replace("# assosiated to x", "# associated\n    # to x")
    assert keep_code_layout("limit.py", SOURCE, split) == split
    prose = "Their  is a  cat.\n"
    assert keep_code_layout("notes.md", prose, "There is a cat.\n") == "There is a cat.\n"
    assert keep_code_layout("data.unknownext", "a=1\n", "a = 1\n") == "a = 1\n"


LINES = st.lists(
    st.tuples(
        st.sampled_from(["x", "count", "f(x)", "a[1]", "y.z"]), st.sampled_from(["word", "wrod", "other"])
    ),
    min_size=1,
    max_size=6,
)


@given(LINES, st.lists(st.sampled_from(["", " ", "  "]), min_size=6, max_size=6), st.booleans())
def test_only_comments_and_strings_change(lines, spaces, fix):
    """The source's code with any spacing the answer gave it and any words in its comments
    and strings: the result is the source, with the answer's comments and strings."""
    source = "".join(f"v = {code}  # {word}\ns = '{word}'\n" for code, word in lines)
    fixed = [(code, "word" if fix else word) for code, word in lines]
    pad = spaces * len(lines)
    answer = "".join(
        f"v{pad[i]}={pad[i + 1]}{code}{pad[i + 2]}# {word}\n\ns = '{word}'\n"
        for i, (code, word) in enumerate(fixed)
    )
    expected = "".join(f"v = {code}  # {word}\ns = '{word}'\n" for code, word in fixed)
    assert keep_code_layout("x.py", source, answer) == expected
    assert keep_code_layout("x.py", source, source) == source


def test_the_cli_writes_the_file_s_code_and_english_with_the_answer_s_fixes(tmp_path, monkeypatch):
    """`pedit fix` end to end on a model whose answer re-spaces the code and respells a
    British word: the file keeps both, and gets the fixes."""
    from typer.testing import CliRunner

    from pedit import models
    from pedit.cli.app import app
    from scripted import Answering

    code = tmp_path / "limit.py"
    code.write_text(SOURCE)
    answer = (
        SOURCE.replace("Retrun the the", "Return the")
        .replace("n//d", "n // d")
        .replace("q0+a*q1", "q0 + a * q1")
    )
    monkeypatch.setattr(models, "load", model_work(lambda: Answering(answer)))
    # a re-spaced code token is what the fix's grammar forbids (tools/skeleton): without it,
    # as on a server, the answer's code layout is put back
    args = ["fix", str(code), "-y", "-b", "reference", "--speculate", "off", "--no-skeleton"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.stderr
    assert code.read_text() == SOURCE.replace("Retrun the the", "Return the")

    notes = tmp_path / "notes.md"
    notes.write_text("The colour of teh centre was grey.\n")
    respelt = "The color of the center was gray.\n"
    monkeypatch.setattr(models, "load", model_work(lambda: Answering(respelt)))
    result = CliRunner().invoke(app, ["fix", str(notes), "-y", "-b", "reference", "--speculate", "off"])
    assert result.exit_code == 0, result.stderr
    assert notes.read_text() == "The colour of the centre was grey.\n"
    result = CliRunner().invoke(
        app, ["fix", str(notes), "-y", "-b", "reference", "--speculate", "off", "--dialect", "american"]
    )
    assert result.exit_code == 0, result.stderr
    assert notes.read_text() == respelt
