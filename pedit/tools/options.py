"""Which tools propose a draft, each a lever the quality report measures (docs/quality.md),
declared without the engine so that a command's options hold them before a model loads."""

from __future__ import annotations

from dataclasses import dataclass

from .dialect import AUTO

# Each default was chosen on the quality report's tuning tasks (AMD EPYC, 2026-11-27).
ARTICLES = False  # did not pay: 2 more tuning errors fixed, none held out, 11% slower
REAL_WORDS = True  # mean score 0.67 without, 0.70 with (docs/quality.md, `+norealwords`)
FORMS = True  # issue 57: a verb's form after a modal, "to" or "did" (confusables._forms)
POSSESSIVES = True  # issue 57: a plural noun's possessive before a noun (confusables._possessive)
COMMAS = True  # issue 57: a comma after an introduction, around a non-restrictive clause (commas.py)
# issue 70: chosen on the learner sentences' training part (the report's `+nocontext` and
# `+nomissing` levers measure them)
CONTEXT_SPELLING = True  # a misspelling's neighbours scored in its sentence (incontext.spelling)
MISSING = True  # a missing be, subject pronoun or "to" put in (incontext.missing)
# the learner sentences' training part: the model's own commas after a short phrase of time or
# place were 5, none in a correction (commas.optional_added; the report's `+optionalcommas`)
OPTIONAL_COMMAS = False
SURE = True  # mean 0.71 without, 0.75 with; held-out natural errors 68% -> 78% (`+nosure`)


@dataclass(frozen=True, kw_only=True)
class ToolOptions:
    """The tools' options (a fix's draft, a refactor's proposal and check)."""

    spelling: bool | None = (
        None  # the spelling's and Harper's suggestions in a fix's draft; None: the template's
    )
    harper: bool = True  # Harper's grammar suggestions with them (grammarcheck.py)
    dialect: str = AUTO  # the variety of English a fix keeps (dialect.py; "auto": the file's)
    confusables: bool = True  # the confusion sets' swaps the model scores likelier (confusables.py)
    articles: bool = ARTICLES  # with them, a dropped article put back
    real_words: bool = REAL_WORDS  # with them, a word's neighbours at one edit
    forms: bool = FORMS  # with them, a verb's form after a modal, "to" or "did" (morphology.py)
    possessives: bool = POSSESSIVES  # with them, a plural noun's possessive ("designers job")
    commas: bool = COMMAS  # with them, the commas of commas.py
    context_spelling: bool = CONTEXT_SPELLING  # a misspelling's correction chosen in its sentence
    missing: bool = MISSING  # a missing be, subject pronoun or "to" put back
    optional_commas: bool = OPTIONAL_COMMAS  # the answer's own comma after "Last week" kept
    sure: bool = SURE  # Harper's suggestions scored too, the sure ones leant on harder
    intents: bool = True  # a refactor through its intent's tools, grammar and check (refactor.py)
    retry: bool = True  # a failed check tried again, then the tool's own edit (refactor.py)
