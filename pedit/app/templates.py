"""The prompts behind each command, as templates a user can read and override.

A template has a system prompt and an instruction; `{instruction}` in the instruction is
replaced by what the user typed (refactor, edit). `kind` says what the answer is: the
whole file rewritten ("rewrite": primed with the file's fence, the file is the draft) or
new text about it ("summary": printed, never written; prompt lookup and n-grams draft).

Overrides come from the config (`[templates.NAME]` with `system` and/or `instruction`,
in the user config file or a project's [tool.pedit]) and, for one run, from --system.
`pedit templates` prints them all with their sources.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..engine.prompt import EXTRACT_SYSTEM, REWRITE_SYSTEM, SUMMARY_SYSTEM
from ..errors import UsageError

FIX_KEEP_BIAS = 1.5  # see Template.keep_bias
FIX_CHUNK_TOKENS = 96  # see Template.chunk_tokens
# β on the suggestions a tool made in fix's draft (Template.suggest_bias): measured in the
# quality report against the keep-bias there too (+sb1.5), on the same machine and model
FIX_SUGGEST_BIAS = 4.0
# β on the suggestions the model's reading is sure of (Template.sure_bias, tools/options.SURE):
# enough to outweigh a copying model's preference for the file's token
FIX_SURE_BIAS = 10.0
# A sentence a fix's instruction adds on the models it helps (MODEL_INSTRUCTIONS; issue 57):
# the errors an English learner makes that the model reads but leaves. On the default model
# it helped on both training parts (the report's `+agreement` lever, runs at cd76091 and
# 30d0faf, AMD EPYC: learner GLEU 93.2 -> 94.6, recall 83% -> 87%, precision 99% -> 100%,
# 52 more prompt tokens a file; natural-error tuning files 101 -> 105 errors fixed, 8 -> 7
# wrong changes), and held out it was no worse (learner GLEU 91.3 -> 93.9; natural 45 = 45).
# On the 0.5B model it turned the answer on transformers (no scored swaps) from right to
# wrong on tests/test_real_model.py's paragraph ("Their are", "take", "teach" left), so it
# is that model's only with the `+agreement` lever. Six examples in the system prompt
# instead did worse on the learner training part (GLEU 90.9, recall 78%; `+examples`).
FIX_LEARNER = (
    " Make every verb agree with its subject, start every sentence with a capital letter, "
    'use a verb\'s base form after a modal, "to" or "did", and put a comma after an '
    "introductory phrase or clause and around a non-restrictive clause."
)
# issue 70's trial (the report's `+clausecomma`): a comma after an introductory clause, not
# after a short phrase ("Last year", "In my country"), which learners' correctors leave
FIX_LEARNER_CLAUSE = (
    " Make every verb agree with its subject, start every sentence with a capital letter, "
    'use a verb\'s base form after a modal, "to" or "did", and put a comma after an '
    "introductory clause (not after a short phrase) and around a non-restrictive clause."
)
# What a built-in instruction adds on a model, by the name pedit knows it by (-m NAME; a
# path to the same file is not recognised): measured on that model, a prompt is its own
MODEL_INSTRUCTIONS: dict[str, dict[str, str]] = {"qwen2.5-coder-1.5b": {"fix": FIX_LEARNER}}


@dataclass(frozen=True)
class Template:
    name: str
    kind: str  # "rewrite" or "summary"
    system: str
    instruction: str  # may contain {instruction}
    source: str = "built-in"  # where it came from: "built-in[, for MODEL]" or the config's file
    # the keep-bias its runs use unless --keep-bias / keep_bias says otherwise (keepbias.py):
    # a fix is asked to change little, and measured (docs/quality.md) it is more often right
    keep_bias: float = 0.0
    # the β on the draft's tokens that a tool changed (a suggestion); None: keep_bias there too
    suggest_bias: float | None = None
    # the β on the suggestions the model's reading is sure of (EditRequest.doubtful); None:
    # suggest_bias there too
    sure_bias: float | None = None
    # its draft has the spelling suggestions of spelling.py (with a keep-bias, the model
    # leans towards each correction and keeps or rejects it) unless --no-spelling
    spelling: bool = False
    # rewrite in runs of about this many file tokens, lines kept whole (None: as few runs
    # as the context allows): a small model fixes more in a paragraph than in a whole file
    chunk_tokens: int | None = None
    # its instruction is read as an intent (intent.py: rename, type hints, other) that tools
    # propose, grammars constrain and a check decides (refactor.py)
    intents: bool = False
    # each piece's answer is judged by the guard's fix checks (guard.judge_fix); a piece
    # that fails stays as it was and the others are still written (jobs.Job._piece_refused)
    judged: bool = False
    # its answer gets back the line breaks the model dropped (linebreaks.py) and a code
    # file's code as it was laid out (codelayout.py): a fix keeps the file's layout
    keeps_lines: bool = False
    # its answers may change only the file's prose: a grammar forces the skeleton (links,
    # code, markup: tools/skeleton) where the backend runs one, the guard checks it everywhere
    skeleton: bool = False

    def bias(self, given: float | None) -> float:
        """The keep-bias a run of this template uses: `given` (--keep-bias, keep_bias), else its own."""
        return self.keep_bias if given is None else given

    def render(self, user_instruction: str | None) -> str:
        if "{instruction}" in self.instruction:
            if not (user_instruction or "").strip():
                raise UsageError(f"{self.name} needs an instruction")
            return self.instruction.replace("{instruction}", user_instruction.strip())
        return self.instruction


BUILTIN = {
    t.name: t
    for t in (
        Template(
            "fix",
            "rewrite",
            REWRITE_SYSTEM,
            "Fix the grammar, spelling and punctuation of the prose in this file (for a code "
            "file: its comments, docstrings and messages, and any obvious typo) without "
            "changing its meaning, its formatting or the code's behaviour.",
            keep_bias=FIX_KEEP_BIAS,
            spelling=True,
            chunk_tokens=FIX_CHUNK_TOKENS,
            suggest_bias=FIX_SUGGEST_BIAS,
            sure_bias=FIX_SURE_BIAS,
            judged=True,
            keeps_lines=True,
            skeleton=True,
        ),
        Template(
            "refactor",
            "rewrite",
            REWRITE_SYSTEM,
            "Refactor this code: {instruction}. Keep its behaviour, style and formatting everywhere else.",
            intents=True,
        ),
        Template("edit", "rewrite", REWRITE_SYSTEM, "{instruction}"),
        Template("summarize", "summary", SUMMARY_SYSTEM, "Summarize this file."),
        Template(
            "extract",
            "summary",
            EXTRACT_SYSTEM,
            "Extract the data this JSON Schema describes from the file below.\n\nSchema:\n{instruction}",
        ),
    )
}


FIELDS = ("system", "instruction")  # what a [templates.NAME] table may override, as strings


def check_overrides(table: object, where: str) -> dict[str, dict]:
    """A config file's `templates` table: {built-in name: {system/instruction: str}}."""
    if not isinstance(table, dict):
        raise UsageError(f"{where}: templates must be a table of [templates.NAME] tables (got {table!r})")
    for name, fields in table.items():
        at = f"[templates.{name}] in {where}"
        if name not in BUILTIN:
            raise UsageError(f"{at}: no such template ({', '.join(BUILTIN)})")
        if not isinstance(fields, dict):
            raise UsageError(f"{at}: must be a table with {' and/or '.join(FIELDS)} (got {fields!r})")
        unknown = set(fields) - set(FIELDS)
        if unknown:
            raise UsageError(f"{at}: unknown key(s) {', '.join(sorted(unknown))}")
        for key, value in fields.items():
            if not isinstance(value, str):
                raise UsageError(f"{at}: {key} must be a string (got {value!r})")
    return table


def templates(
    overrides: dict[str, tuple[dict, str]] | None = None, model: str | None = None
) -> dict[str, Template]:
    """The built-in templates as asked of `model` (for_model), with the config's overrides applied."""
    out = {name: for_model(t, model) for name, t in BUILTIN.items()}
    for name, (fields, source) in (overrides or {}).items():
        check_overrides({name: fields}, source)
        out[name] = replace(out[name], **fields, source=source)
    return out


def for_model(template: Template, model: str | None) -> Template:
    """`template` as asked of `model`: its built-in instruction with what MODEL_INSTRUCTIONS
    adds on that model (an instruction the config overrides is the user's, as written)."""
    more = MODEL_INSTRUCTIONS.get(model or "", {}).get(template.name, "")
    if not more or template.instruction != BUILTIN[template.name].instruction:
        return template
    return replace(
        template, instruction=template.instruction + more, source=f"{template.source}, for {model}"
    )
