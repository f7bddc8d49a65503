"""The levers the quality report measures: named variants of how pedit runs a task.

A variant may change the speculation (`plain`: none, the speed baseline whose output must
be the same as pedit's), the keep-bias (`kbB`), the spelling suggestions in the draft
(`nospell`), the β on the suggestions themselves (`sbB`) and on the token after a tool's
deletion ("by by" -> "by": `nodeletions`, without it) and on the suggestions the model's
reading is sure of (`nosure`: without it), Harper's grammar suggestions
beside them (`noharper`), the confusion-set swaps the model scores (`noconfusables`) and
among them the dropped articles put back (`articles`, off by default) and a word's
neighbours at one edit (`norealwords`: without them), how
a refactor runs (`notools`: the model alone, no intent, tool draft, edit grammar or check;
`noretry`: one try, refused if its check fails), how the file is cut into runs
(`whole`: as few runs as the context allows, where `fix` otherwise goes a paragraph at a
time), whether each run is told which part of the file it is (`partnote`: about 20
prompt tokens a run; off by default), or the variety of English a fix keeps (`american`:
always American, whatever the file's), or whether a fix's answer follows its file's
skeleton grammar (`noskeleton`: without it, the guard alone keeps the skeleton), or whether
each sentence is fixed as a file of its own (`sentences`: as a learner benchmark runs its
sentences, one a file), or the prompt a fix is asked with (`agreement`: its instruction
names the learner's errors, as the default model's does; `noagreement`: it does not;
`examples`: its system prompt shows six corrections; issue 57),
or the learner's candidates (`noforms`: no verb forms after a modal, "to" or "did";
`nocommas`: no commas put in; `nopossessives`: no plural noun's possessive; issue 70's
`nocontext`: a misspelling's correction not chosen in its sentence; `nomissing`: no missing
word put in; `optionalcommas`: the answer's own comma after a short phrase of time or place
kept), or the prompt's order (`filefirst`: the file, then the instruction, as the interactive
session asks; issue 71). Variants
combine: `qwen2.5-coder-0.5b+plain+kb0`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace

from ..app.jobs import Job
from ..app.options import EngineOptions
from ..app.outcome import Answering
from ..app.refactor import rewrite
from ..app.templates import FIX_LEARNER, FIX_LEARNER_CLAUSE, Template
from ..engine.options import SUGGEST_DELETIONS, EditOptions
from ..tools.options import (
    ARTICLES, COMMAS, CONTEXT_SPELLING, FORMS, MISSING, OPTIONAL_COMMAS, POSSESSIVES, REAL_WORDS, SURE, ToolOptions,
)  # fmt: skip

# The prompts a fix may be asked with instead (Variant.prompt), to measure whether the model
# fixes what it reads but leaves when told what to look for (issue 57, item 3): a sentence
# added to the instruction, or examples added to the system prompt. The examples are the
# developers' own, of the learner corpus's kinds, none of its sentences.
AGREEMENT = FIX_LEARNER  # the default model's (templates.MODEL_INSTRUCTIONS), not the others'
EXAMPLES = (
    "\n\nExamples of the corrections a fix makes (as written -> as fixed):\n"
    "- The results of the test shows a bug. -> The results of the test show a bug.\n"
    "- the server restarts every night. -> The server restarts every night.\n"
    "- You should updates the package. -> You should update the package.\n"
    "- We decided to moved the office. -> We decided to move the office.\n"
    "- When the build fails we get an email. -> When the build fails, we get an email.\n"
    "- Our office which is in Oslo opens at nine. -> Our office, which is in Oslo, opens at nine."
)


@dataclass(frozen=True)
class Variant:
    speculate: str = "auto"
    keep_bias: float | None = None  # None: the command's own, as the CLI
    spelling: bool | None = None  # None: the command's own
    chunk_tokens: int | None = None  # runs of about this many file tokens; None: the command's, 0: whole
    suggest_bias: float | None = None  # β on a tool's suggestions in the draft; None: the command's
    suggest_deletions: bool = SUGGEST_DELETIONS  # that β on the draft token after a tool's deletion too
    harper: bool = True  # Harper's grammar suggestions beside the spelling's in fix's draft
    confusables: bool = True  # the confusion-set swaps the model scores likelier, in fix's draft
    articles: bool = ARTICLES  # with them, the dropped articles put back (confusables._articles)
    real_words: bool = REAL_WORDS  # with them, a word's neighbours at one edit (confusables._real)
    sure: bool = SURE  # Harper's suggestions scored too; the sure ones leant on harder (confusables.sure)
    intents: bool = True  # a refactor through its intent's tools, grammar and check
    retry: bool = True  # a failed check retried, a strayed rename replaced by the tool's
    part_note: bool = False  # a run of a file cut in runs told which part it is (jobs.Job.part_note)
    dialect: str = "auto"  # the variety of English a fix keeps (tools/dialect.py)
    skeleton: bool = True  # a fix's answer follows its file's skeleton grammar (tools/skeleton)
    sentences: bool = False  # each sentence a file of its own (sentences()), as learner benchmarks run them
    # "": the command's prompt as asked of the model (templates.for_model); "agreement",
    # "noagreement", "examples": a fix's with AGREEMENT in its instruction, or without it
    # (the default model's has it), or with EXAMPLES in its system prompt
    prompt: str = ""
    forms: bool = FORMS  # a verb's form after a modal, "to" or "did" scored (confusables._forms)
    commas: bool = COMMAS  # commas put in, scored (commas.py)
    possessives: bool = POSSESSIVES  # a plural noun's possessive before a noun (confusables._possessive)
    context_spelling: bool = CONTEXT_SPELLING  # a misspelling's neighbours scored (incontext.spelling)
    missing: bool = MISSING  # a missing be, subject pronoun or "to" put in, scored (incontext.missing)
    optional_commas: bool = OPTIONAL_COMMAS  # the answer's own comma after a short phrase kept
    file_first: bool = False  # the file before the instruction in the prompt (EditRequest.file_first)

    def options(self) -> EngineOptions:
        """The command's options this variant gives: each of its fields on the part that has it."""

        def mine(cls) -> dict:
            return {
                f.name: getattr(self, f.name)
                for f in fields(cls)
                if f.name in _FIELDS and f.name != "keep_bias"
            }

        return EngineOptions(edit=EditOptions(**mine(EditOptions)), tools=ToolOptions(**mine(ToolOptions)),
                             keep_bias=self.keep_bias, skeleton=self.skeleton)  # fmt: skip

    def template(self, template: Template) -> Template:
        """The command's template, asked with this variant's prompt."""
        if self.prompt == "agreement" and not template.instruction.endswith(AGREEMENT):
            return replace(template, instruction=template.instruction + AGREEMENT)
        if self.prompt == "noagreement" and template.instruction.endswith(AGREEMENT):
            return replace(template, instruction=template.instruction[: -len(AGREEMENT)])
        if self.prompt == "clausecomma" and template.instruction.endswith(FIX_LEARNER):
            return replace(template, instruction=template.instruction[: -len(FIX_LEARNER)] + FIX_LEARNER_CLAUSE)
        if self.prompt == "examples":
            return replace(template, system=template.system + EXAMPLES)
        return template

    def rewrite(self, job: Job, text: str, name: str) -> Answering:
        how = {"chunk_tokens": self.chunk_tokens, "part_note": self.part_note, "file_first": self.file_first}
        return rewrite(replace(job, **how), text, name)

    def pieces(self, text: str) -> list[tuple[str, str]]:
        """What the task's text is run as, each piece with the white space that follows it
        (put back after its answer): the text itself, or (`sentences`) each sentence."""
        if not self.sentences:
            return [(text, "")]
        return [(s.rstrip(), s[len(s.rstrip()) :]) for s in sentences(text)] or [(text, "")]

    @staticmethod
    def combine(variants: list[Variant]) -> Variant:
        """Each variant's fields that differ from the default, later ones winning."""
        default = Variant()
        out = default
        for v in variants:
            changed = {
                f.name: getattr(v, f.name)
                for f in fields(v)
                if getattr(v, f.name) != getattr(default, f.name)
            }
            out = replace(out, **changed)
        return out


_FIELDS = {f.name for f in fields(Variant)}
VARIANTS: dict[str, Variant] = {
    "plain": Variant(speculate="off"),
    "nospell": Variant(spelling=False),
    "whole": Variant(chunk_tokens=0),
    "noharper": Variant(harper=False),
    "noconfusables": Variant(confusables=False),
    "articles": Variant(articles=True),
    "norealwords": Variant(real_words=False),
    "nodeletions": Variant(suggest_deletions=False),
    "nosure": Variant(sure=False),
    "notools": Variant(intents=False),
    "noretry": Variant(retry=False),
    "partnote": Variant(part_note=True),
    "american": Variant(dialect="american"),
    "noskeleton": Variant(skeleton=False),
    "sentences": Variant(sentences=True),
    "agreement": Variant(prompt="agreement"),
    "noagreement": Variant(prompt="noagreement"),
    "examples": Variant(prompt="examples"),
    "clausecomma": Variant(prompt="clausecomma"),
    "noforms": Variant(forms=False),
    "nocommas": Variant(commas=False),
    "nopossessives": Variant(possessives=False),
    "nocontext": Variant(context_spelling=False),
    "nomissing": Variant(missing=False),
    "optionalcommas": Variant(optional_commas=True),
    "filefirst": Variant(file_first=True),
}
# A sentence ends at . ! or ? before white space, or at a line break; what follows it up to
# the next sentence is its own (a learner's texts have no abbreviations that end in a dot)
_SENTENCE = re.compile(r".*?(?:[.!?](?=\s)|\n|$)\s*", re.S)


def sentences(text: str) -> list[str]:
    """The text's sentences, each with the white space after it ("".join gives the text)."""
    return [m.group() for m in _SENTENCE.finditer(text) if m.group()]


KEEP = re.compile(r"kb(-?\d+(?:\.\d+)?)$")  # kb-1.5: keep-bias β = -1.5
SUGGEST = re.compile(r"sb(-?\d+(?:\.\d+)?)$")  # sb3: β = 3 on a tool's suggestions in the draft


def lookup(name: str) -> Variant | None:
    if name in VARIANTS:
        return VARIANTS[name]
    m = KEEP.match(name)
    if m:
        return Variant(keep_bias=float(m.group(1)))
    m = SUGGEST.match(name)
    return Variant(suggest_bias=float(m.group(1))) if m else None
