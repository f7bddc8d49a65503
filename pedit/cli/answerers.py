"""Who answers a command's files: the model loaded in this process (Here), or the resident
process (There, resident/client.py). Both begin a file's job the same way, and the rest of
the command (the live view, the guard, the write-back) cannot tell them apart.

    begun = answerer.begin(kind, source)   # the file's tokens, a summary's runs, the stream
    outcome = ui.runs.answer(begun.stream, show)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from ..app import fileio
from ..app.answercache import AnswerCache, job_key, replay
from ..resident.client import Begun, Resident
from ..resident.protocol import Request

if TYPE_CHECKING:
    from ..app.jobs import Job


class Answerer(Protocol):
    def begin(self, kind: str, source: fileio.Source, count: bool) -> Begun: ...


@dataclass(frozen=True)
class Here:
    """The model loaded in this process."""

    job: Job
    backend: str = ""
    device: str = ""

    def begin(self, kind: str, source: fileio.Source, count: bool) -> Begun:
        from ..app import wholefile
        from ..app.refactor import rewrite

        job, text, name = self.job, source.text, source.name
        tokens = job.backend.count_tokens(text) if count else None
        pieces = len(job.pieces(text, name, "summary")) if kind == "summary" else 1
        stream = wholefile.summarize(job, text, name) if kind == "summary" else rewrite(job, text, name)
        return Begun(tokens, pieces, stream, self.backend, self.device)


@dataclass(frozen=True)
class There:
    """The resident process: the command's template, instruction and options go with each
    file's text, so that it answers with this command's settings alone."""

    resident: Resident
    inv: object  # cli.rewrite.Invocation (not imported: rewrite imports this module)
    template: object  # app.templates.Template

    def begin(self, kind: str, source: fileio.Source, count: bool) -> Begun:
        inv = self.inv
        req = Request(
            kind=kind, template=self.template, instruction=inv.instruction, options=inv.options,
            system=inv.system, force=inv.force, chunk_tokens=inv.settings.chunk_tokens,
            text=source.text, name=source.name, count=count, keep_alive=inv.settings.keep_alive,
            answer_cache=inv.settings.answer_cache, answer_cache_mb=inv.settings.answer_cache_mb,
        )  # fmt: skip
        return self.resident.begin(req)


class NotCached(Exception):
    """The answer cache has no answer for this file (Cached with no model behind it)."""


@dataclass(frozen=True)
class Cached:
    """The answer cache first: a file whose answer it has is answered with no model; what
    the answerer behind it (None: none) answers is kept there."""

    inner: Answerer | None
    cache: AnswerCache
    job: tuple  # the job's key parts (cache_parts), the file's name and text apart

    def begin(self, kind: str, source: fileio.Source, count: bool) -> Begun:
        key = job_key(*self.job, kind, source.name, source.text)
        entry = self.cache.get(key)
        if entry is not None:
            return Begun(entry.tokens, 1, replay(entry), "", "", cached=True)
        if self.inner is None:
            raise NotCached(source.name)
        begun = self.inner.begin(kind, source, count)
        return replace(begun, stream=self.cache.kept(key, begun.stream, begun.tokens))


def cache_parts(inv, template: object) -> tuple:
    """What an answer depends on besides the file: the model and its load settings, and the
    command's job as the resident gets it (There)."""
    s = inv.settings
    return (s.model, s.backend, s.base_url, s.n_ctx, s.threads, template, inv.instruction, inv.options,
            inv.system, inv.force, s.chunk_tokens)  # fmt: skip
