"""The levers the quality report measures: named variants of how pedit runs a task.

A variant may change the speculation (`plain`: none, the speed baseline whose output must
be the same as pedit's), the prompt (a template's instruction or system prompt), or how
the file is cut into runs. Variants combine: `qwen2.5-coder-0.5b+plain`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..jobs import Job, Outcome
from ..templates import Template
from .corpus import Task


@dataclass(frozen=True)
class Variant:
    speculate: str = "auto"
    instruction: dict[str, str] | None = None  # {command: instruction}, replaces the template's
    system: str | None = None
    keep_bias: float | None = None  # None: the command's own, as the CLI
    chunk_tokens: int | None = None  # rewrite in runs of about this many file tokens

    def template(self, base: Template, task: Task) -> Template:
        out = base
        if self.instruction and base.name in self.instruction:
            out = replace(out, instruction=self.instruction[base.name])
        if self.system:
            out = replace(out, system=self.system)
        return out

    def rewrite(self, job: Job, text: str, name: str, render) -> Outcome:
        return replace(job, chunk_tokens=self.chunk_tokens).rewrite(text, name, render)

    @staticmethod
    def combine(variants: list[Variant]) -> Variant:
        out = Variant()
        for v in variants:
            changed = {
                k: getattr(v, k)
                for k in ("speculate", "instruction", "system", "keep_bias", "chunk_tokens")
                if getattr(v, k) != getattr(Variant(), k)
            }
            out = replace(out, **changed)
        return out


VARIANTS: dict[str, Variant] = {
    "plain": Variant(speculate="off"),
    "para": Variant(chunk_tokens=96),  # a paragraph or so at a time
}
KEEP = re.compile(r"kb(-?\d+(?:\.\d+)?)$")  # kb-1.5: keep-bias β = -1.5


def lookup(name: str) -> Variant | None:
    if name in VARIANTS:
        return VARIANTS[name]
    m = KEEP.match(name)
    return Variant(keep_bias=float(m.group(1))) if m else None
