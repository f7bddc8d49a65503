"""The provenance styles, in one place for every shell (the live view, the session).

They survive NO_COLOR and both terminal themes because each has a text attribute of its
own besides its colour: tokens copied from the file are dim (green), tokens the model
generated are bold (magenta), tokens drafted by prompt lookup or the n-gram model are
underlined (cyan), tokens a grammar forced (--schema, a .json file) are italic (yellow).
Text from a remote server that does not say who wrote it is plain.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

STYLES = {
    "predicted": Style(dim=True, color="green"),
    "generated": Style(bold=True, color="magenta"),
    "lookup": Style(underline=True, color="cyan"),
    "ngram": Style(underline=True, color="cyan"),
    "grammar": Style(italic=True, color="yellow"),
    "remote": Style(),  # text from a server that does not say which tokens were drafted
}
LEGEND = [
    ("copied from the file", "predicted"),
    ("generated", "generated"),
    ("drafted by lookup/n-grams", "lookup"),
    ("forced by the grammar", "grammar"),
]


def speedup_text(speedup: float) -> str:
    """A live speedup as a person should read it: its plain-decoding baseline is priced from
    the calibration, and this machine's load moves a plain run by 10% or more between runs
    (scripts/live_speedup.py), so one decimal and an approximate sign."""
    return f"≈{speedup:.1f}x"


def legend(where: str = "") -> Text:
    """The first line of a run on a terminal: what runs where, and the styles' meaning."""
    text = Text(f"pedit: {where} · " if where else "pedit: ")
    for i, (words, style) in enumerate(LEGEND):
        text.append(words, STYLES[style])
        text.append("  " if i < len(LEGEND) - 1 else "")
    return text
