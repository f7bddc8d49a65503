"""fix's tools: what proposes a fix's draft before the model verifies it.

The spelling's and Harper's suggestions make the draft (`draft`); the confusion sets'
swaps (confusables.py: a word's other number and a verb's form from morphology.py among
them), the commas of commas.py, and Harper's suggestions with `sure`, are scored by the model
(engine/likelihood.py), and those it finds likelier go into the draft too (`scored`)."""

from __future__ import annotations

from dataclasses import replace

from ..backends import AnyBackend
from ..engine import likelihood, variants
from ..engine.likelihood import Scored
from ..engine.prompt import prompt_tokens
from ..request import EditRequest
from . import commas, confusables, dialect, grammarcheck, incontext
from .options import ToolOptions


def draft(text: str, name: str, options: ToolOptions) -> str:
    """The spelling's suggestions, and Harper's unless the options turn them off, in the
    file's variety of English."""
    kinds = grammarcheck.DEFAULT_RULES if options.harper else ()
    return grammarcheck.draft(text, name, kinds=kinds, variety=options.dialect)


def scored(backend: AnyBackend, req: EditRequest, options: ToolOptions) -> tuple[EditRequest, Scored | None]:
    """fix's third tool (confusables.py): each confusion-set or number swap in the text
    is scored by the model (engine/likelihood.py), and those it finds likelier by
    THRESHOLD (confusables.chosen) go into the draft beside Harper's and the
    spelling's; with those above GUESS too, the speculative draft (EditRequest.guess).
    Returns the request with those drafts and the scores (None when nothing was
    scored); the cache holds the prompt the scoring read (the rewrite reuses it)."""
    if not options.confusables or not backend.capabilities.branch:
        return req, None  # a server gives no logits; transformers reads no branch (costly)
    swaps = swaps_of(req, options)
    if not swaps:
        return req, None
    base = prompt_tokens(backend, req)
    spliced = variants.splits_at_lines(backend)
    tokens = _variants(backend, req, base, swaps, spliced)
    need = [confusables.least(w) for w in swaps]
    got = likelihood.score(backend, base, tokens, prefilter=[w.prefilter for w in swaps], need=need)
    if spliced and _misspliced(backend, req, swaps, tokens, got):  # never seen: read them whole
        tokens = _variants(backend, req, base, swaps, False)
        got = likelihood.score(backend, base, tokens, prefilter=[w.prefilter for w in swaps], need=need)
    ours = [i for i, w in enumerate(swaps) if w.kind != "harper"]  # Harper's are scored for `sure` only
    mine, deltas = [swaps[i] for i in ours], [got.deltas[i] for i in ours]
    taken = confusables.chosen(req.text, mine, deltas)
    if taken:
        new = draft(confusables.apply(req.text, taken), req.filename, options)
        req = replace(req, draft=None if new == req.text else new)
    guess_at = min(confusables.GUESS, confusables.THRESHOLD)
    likely = confusables.chosen(req.text, mine, deltas, guess_at)
    if likely != taken:  # the swaps the model probably makes too: the speculative draft's
        req = replace(req, guess=draft(confusables.apply(req.text, likely), req.filename, options))
    sure = confusables.sure(taken, swaps, got.deltas) if options.sure else []
    if sure and req.draft is not None:  # the keep-bias leans on these by sure_bias
        req = replace(req, doubtful=confusables.doubtful(req.text, req.draft, sure))
    return req, got


def _variants(
    backend: AnyBackend, req: EditRequest, base: list[int], swaps: list[confusables.Swap], spliced: bool
) -> list[list[int]]:
    """Each swap's prompt: spliced into base's tokens (engine/variants.py) where the
    backend's tokenizer allows, else tokenized whole."""
    got = variants.spliced(backend.tokenize, [backend.token_bytes(t) for t in base], base, req.text,
                           [w.edits() for w in swaps]) if spliced else [None] * len(swaps)  # fmt: skip
    return [t if t is not None else prompt_tokens(backend, replace(req, text=confusables.apply(req.text, [w])))
            for t, w in zip(got, swaps, strict=True)]  # fmt: skip


def _misspliced(
    backend: AnyBackend, req: EditRequest, swaps: list[confusables.Swap], tokens: list[list[int]], got: Scored
) -> bool:
    """Is a variant the scoring read not what its prompt tokenizes to whole? (Then the
    backend is marked as one whose variants are tokenized whole.)"""
    for w, t, d in zip(swaps, tokens, got.deltas, strict=True):
        if d is not None and t != prompt_tokens(backend, replace(req, text=confusables.apply(req.text, [w]))):
            variants.distrust(backend)
            return True
    return False


def swaps_of(req: EditRequest, options: ToolOptions) -> list[confusables.Swap]:
    """What `scored` reads: the confusion sets' swaps (confusables.candidates), the
    commas (commas.candidates), then, with `sure`, Harper's suggestions in the draft, each
    as a swap of kind "harper"."""
    o = options
    swaps = confusables.candidates(
        req.text,
        req.filename,
        articles=o.articles,
        real=o.real_words,
        forms=o.forms,
        possessives=o.possessives,
    )
    if o.commas:
        swaps += commas.candidates(req.text, req.filename)
    if o.context_spelling and o.spelling is not False:
        swaps += incontext.spelling(req.text, req.filename, _accepted(req.text, req.filename, o))
    if o.missing:
        swaps += incontext.missing(req.text, req.filename)
    if o.sure and o.harper:
        swaps += [confusables.Swap(start=c.start, end=c.end, word=req.text[c.start : c.end],
                                   replacement=c.replacement, kind="harper")
                  for c in grammarcheck.kinds_of_changes(req.text, req.filename)]  # fmt: skip
    return swaps


def _accepted(text: str, name: str, options: ToolOptions) -> frozenset[str]:
    """The unknown words of `text` the file's variety of English spells so (the spelling's
    draft leaves them: spelling.spellcheck), lower case."""
    variety = dialect.resolve(options.dialect, text)
    if not variety:
        return frozenset()
    unknown = {w.lower() for w in incontext.unknown_words(text, name)}
    return frozenset(dialect.accepted(unknown, variety)) if unknown else frozenset()
