"""`pedit bench --structured`: constrained output, measured (docs/structured.md).

Configurations, interleaved per task in one process (as run.py does):
    free         plain decoding without a grammar (what an answer costs unconstrained)
    plain        plain constrained decoding: one forward pass per token, forced ones too
                 (the baseline of every ratio)
    coalesce     forced tokens take no pass of their own (.txt's "Coalescence")
    pedit        coalescence and drafts (the file, prompt lookup, n-grams), --speculate auto
    pedit free   pedit's drafts without a grammar (a JSON edit: what the grammar adds)
and the peers on the same model and prompt: llama-cpp-python with a GBNF grammar
(`LlamaGrammar.from_json_schema`, its JSON grammar for a free edit), and Outlines (the
seed's own system) on the transformers model. A peer's grammar is the JSON alone: it
stops where the JSON ends, with no closing fence to write (a few tokens fewer than pedit).
Every run is checked: valid JSON (against the schema), or a full match of the regex.
"""

from __future__ import annotations

import json
import re
import time
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass

from ..app.templates import BUILTIN
from ..engine.costmodel import CostModel, measure
from ..engine.edit import EditOptions, edit_events
from ..engine.grammar import Constraint
from ..engine.prompt import SUMMARY_SYSTEM, build_prompt, build_summary_prompt
from ..events import drain
from ..request import EditRequest
from .corpus import CORPUS

CONFIGS = {
    "free": {"speculate": "off", "constrained": False},
    "plain": {"speculate": "off", "coalesce": False},
    "coalesce": {"speculate": "off"},
    "pedit": {"speculate": "auto"},
    "pedit free": {"speculate": "auto", "constrained": False},
}
PEERS = {"llama.cpp": "llama-cpp-python GBNF", "transformers": "Outlines"}


@dataclass(frozen=True)
class StructuredTask:
    id: str
    file: str
    kind: str  # "edit", "extract", "regex"
    instruction: str = ""
    schema: str = ""  # a file under the corpus (extract)
    regex: str = ""
    max_tokens: int | None = None

    def text(self) -> str:
        return (CORPUS / self.file).read_text(encoding="utf-8")

    def schema_text(self) -> str:
        return (CORPUS / self.schema).read_text(encoding="utf-8") if self.schema else ""

    @property
    def answer_kind(self) -> str:
        return "rewrite" if self.kind == "edit" else "summary"

    def request(self) -> EditRequest:
        if self.kind == "edit":
            t = BUILTIN["edit"]
            return EditRequest(self.text(), t.render(self.instruction), self.file, t.system)
        if self.kind == "extract":
            t = BUILTIN["extract"]
            return EditRequest(self.text(), t.render(self.schema_text()), self.file, t.system)
        return EditRequest(self.text(), self.instruction, self.file, SUMMARY_SYSTEM)

    def constraint(self) -> Constraint:
        if self.kind == "edit":
            return Constraint("json", "")  # as pedit constrains a .json file
        if self.kind == "extract":
            return Constraint("json", self.schema_text(), compact=True)
        return Constraint("regex", self.regex)

    def valid(self, text: str) -> bool:
        """Is this answer what the task asks for (parsed, validated, or matched)?"""
        import jsonschema

        if self.kind == "regex":
            return re.fullmatch(self.regex, text.strip()) is not None
        try:
            data = json.loads(text)
            if self.kind == "extract":
                jsonschema.validate(data, json.loads(self.schema_text()))
        except (ValueError, jsonschema.ValidationError):
            return False
        return True


def load_structured(path=CORPUS / "structured.toml") -> list[StructuredTask]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [StructuredTask(**t) for t in data["task"]]


@dataclass(frozen=True, kw_only=True)
class StructuredRun:
    task: str
    backend: str
    config: str
    repeat: int
    output_tokens: int
    forward_passes: int
    coalesced: int
    accepted: int
    rejected: int
    prefill_seconds: float
    decode_seconds: float
    valid: bool
    same: bool | None  # tokens identical to plain constrained decoding's (None: a peer, or "free")

    @property
    def total_seconds(self) -> float:
        return self.prefill_seconds + self.decode_seconds


def run_structured(
    backend,
    tasks: list[StructuredTask],
    repeats: int,
    *,
    with_peers: bool = True,
    cost: CostModel | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> tuple[CostModel, list[StructuredRun]]:
    cost = cost or measure(backend)
    peer = open_peer(backend) if with_peers and backend.name in PEERS else None
    names = [*CONFIGS, *([PEERS[backend.name]] if peer else [])]
    runs: list[StructuredRun] = []
    try:
        for task in tasks:
            req, plain = task.request(), None
            build = build_prompt if task.answer_kind == "rewrite" else build_summary_prompt
            prompt = list(build(backend, req).tokens)
            for rep in range(repeats):
                for name in names:
                    progress(f"{backend.name}: {task.id} ({rep + 1}/{repeats}) {name}")
                    if name in CONFIGS:
                        tokens, run = _pedit(backend, task, req, name, cost, rep)
                        plain = tokens if name == "plain" and plain is None else plain
                        same = tokens == plain if name in ("plain", "coalesce", "pedit") else None
                        runs.append(StructuredRun(**{**asdict(run), "same": same}))
                    elif task.kind != "regex" or peer.regex:
                        runs.append(peer.run(task, prompt, rep))
    finally:
        if peer is not None:
            peer.close()
    return cost, runs


def _pedit(backend, task, req, name, cost, rep) -> tuple[tuple[int, ...], StructuredRun]:
    config = dict(CONFIGS[name])
    constrained = config.pop("constrained", True)
    events = edit_events(
        backend,
        req,
        EditOptions(
            max_tokens=task.max_tokens,
            cost=cost,
            kind=task.answer_kind,
            constraint=task.constraint() if constrained else None,
            **config,
        ),
    )
    fin = drain(events)
    s = fin.stats
    run = StructuredRun(
        task=task.id, backend=backend.name, config=name, repeat=rep, output_tokens=s.completion_tokens,
        forward_passes=s.forward_passes, coalesced=s.coalesced_tokens, accepted=s.accepted_prediction_tokens,
        rejected=s.rejected_prediction_tokens, prefill_seconds=s.prefill_seconds,
        decode_seconds=s.decode_seconds,
        valid=task.valid(fin.text) and s.stop_reason not in ("max_tokens", "context"), same=None,
    )  # fmt: skip
    return fin.tokens, run


def open_peer(backend):
    return LlamaGrammarPeer(backend) if backend.name == "llama.cpp" else OutlinesPeer(backend)


class LlamaGrammarPeer:
    """llama-cpp-python's Llama.generate with a GBNF grammar, greedy: masks, no forcing."""

    regex = False  # llama-cpp-python has no regex -> GBNF converter

    def __init__(self, backend, n_ctx: int = 4096):
        from llama_cpp import Llama

        path, threads = str(backend.path), backend.n_threads
        self.llm = Llama(model_path=path, n_ctx=n_ctx, n_threads=threads, verbose=False)
        self.backend = backend

    def run(self, task: StructuredTask, prompt: list[int], rep: int) -> StructuredRun:
        from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

        if task.kind == "extract":
            grammar = LlamaGrammar.from_json_schema(task.schema_text(), verbose=False)
        else:
            grammar = LlamaGrammar.from_string(JSON_GBNF, verbose=False)
        llm, passes = self.llm, []
        inner = type(llm).eval

        def counted(tokens):
            passes.append(time.perf_counter())
            return inner(llm, tokens)

        llm.eval = counted
        llm.reset()
        limit = task.max_tokens or 2 * len(self.backend.tokenize(task.text())) + 1024
        out: list[int] = []
        t0 = time.perf_counter()
        first = t0
        try:
            greedy = {"temp": 0.0, "top_k": 1, "top_p": 1.0, "repeat_penalty": 1.0}
            for token in llm.generate(prompt, grammar=grammar, **greedy):
                if token in self.backend.eos_ids or len(out) >= limit:
                    break
                out.append(token)
                if len(out) == 1:
                    first = time.perf_counter()
        finally:
            del llm.eval
        end = time.perf_counter()
        text = self.backend.detokenize(out)
        return StructuredRun(
            task=task.id, backend=self.backend.name, config=PEERS["llama.cpp"], repeat=rep,
            output_tokens=len(out), forward_passes=len(passes), coalesced=0, accepted=0, rejected=0,
            prefill_seconds=first - t0, decode_seconds=end - first,
            valid=task.valid(text) and len(out) < limit, same=None,
        )  # fmt: skip

    def close(self) -> None:
        self.llm.close()


class OutlinesPeer:
    """Outlines' Generator on the transformers backend's own model, greedy."""

    regex = True

    def __init__(self, backend):
        import outlines

        self.backend = backend
        self.model = outlines.from_transformers(backend.model, backend.tokenizer)

    def run(self, task: StructuredTask, prompt: list[int], rep: int) -> StructuredRun:
        import outlines
        from outlines.types import JsonSchema, Regex

        if task.kind == "extract":
            kind = JsonSchema(task.schema_text())
        elif task.kind == "edit":
            kind = JsonSchema("{}", whitespace_pattern=r"[\n\t ]*")  # the file's own layout
        else:
            kind = Regex(task.regex)
        generator = outlines.Generator(self.model, kind)
        marks: list[float] = []
        handle = self.backend.model.register_forward_hook(lambda *a: marks.append(time.perf_counter()))
        limit = task.max_tokens or 2 * len(self.backend.tokenize(task.text())) + 1024
        text_prompt = self.backend.tokenizer.decode(prompt)
        t0 = time.perf_counter()
        try:
            text = generator(text_prompt, max_new_tokens=limit, do_sample=False)
        finally:
            handle.remove()
        end = time.perf_counter()
        first = marks[0] if marks else end
        n = len(self.backend.tokenize(text))
        return StructuredRun(
            task=task.id, backend=self.backend.name, config=PEERS["transformers"], repeat=rep,
            output_tokens=n, forward_passes=len(marks), coalesced=0, accepted=0, rejected=0,
            prefill_seconds=first - t0, decode_seconds=end - first, valid=task.valid(text) and n < limit,
            same=None,
        )  # fmt: skip

    def close(self) -> None:
        pass
