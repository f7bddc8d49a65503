"""An editing session: turns on the reference backend, the cache of the shared prompt
prefix kept between turns, the previous answer as the next draft, accept / reject /
undo / redo, cancellation. Exactness: reusing the cache never changes an output."""

from __future__ import annotations

from dataclasses import replace

import pytest
from flat_options import engine_options

from pedit.app.options import EngineOptions
from pedit.app.session import Session, SessionError
from pedit.backends.reference import ReferenceBackend
from pedit.engine.costmodel import measure
from pedit.engine.decode import common_prefix
from pedit.engine.edit import EditOptions, edit_events
from pedit.engine.prompt import build_prompt
from pedit.engine.sampling import Sampling
from pedit.errors import RefusedError
from pedit.events import Prefilled, TokenGenerated, TokensAccepted
from pedit.request import EditRequest

TEXT = (  # distinct lines: the greedy reference model copies it whole (repeated lines, it
    # would close its block after the first repeat: an answer that stops early, refused)
    "The quick brown fox jumps over the lazy dog.\nIt was the best of times, it was the worst of times.\n"
    "A stitch in time saves nine, they said.\nNo man is an island, entire of itself.\n"
    "Call me Ishmael; some years ago I went to sea.\nAll happy families are alike.\n"
)


def last(events):
    out = list(events)
    return out[-1], out


def test_common_prefix():
    assert common_prefix([1, 2, 3], [1, 2, 4]) == 2
    assert common_prefix([], [1]) == 0
    assert common_prefix([1, 2], [1, 2, 3]) == 2
    assert common_prefix([5], [6]) == 0


@pytest.mark.parametrize("speculate", ["off", "auto"])
@pytest.mark.parametrize("cut", [0, 5, 40, 10_000])
def test_reusing_the_cache_never_changes_the_output(speculate, cut):
    backend = ReferenceBackend()
    cost = measure(backend)
    req = EditRequest(TEXT, "Fix it.", "a.txt")
    fresh, _ = last(edit_events(backend, req, EditOptions(speculate=speculate, cost=cost)))
    prompt = build_prompt(backend, req).tokens
    other = build_prompt(backend, EditRequest(TEXT.upper(), "Shout.", "a.txt")).tokens
    # the cache holds a prompt sharing `cut` tokens with this one (or all of it, and more)
    held = prompt[:cut] + other[cut:] if cut < len(prompt) else prompt + [7, 8, 9]
    backend.truncate(0)
    backend.eval(held, n_logits=1)
    fin, events = last(edit_events(backend, req, EditOptions(speculate=speculate, cost=cost)))
    assert fin.tokens == fresh.tokens and fin.text == fresh.text
    pre = next(e for e in events if isinstance(e, Prefilled))
    assert pre.reused == min(common_prefix(held, prompt), len(prompt) - 1)


def session(**kw) -> Session:
    return Session(ReferenceBackend(), TEXT, "notes.txt", options=engine_options(**kw))


def run(s: Session, instruction: str, **kw):
    return list(s.run(instruction, **kw))


def test_second_turn_reuses_the_first_and_drafts_from_its_answer():
    s = session(speculate="fixed")  # verify every draft: the counts show where drafts came from
    run(s, "Fix the grammar.")
    t1 = s.pending
    assert t1.reused_tokens == 0 and t1.before == TEXT
    assert t1.stats.accepted_by_drafter.get("predicted", 0) > 0  # the file was the draft
    s.accept()
    assert s.text == t1.answer and s.unsaved == (t1.answer != TEXT)
    events = run(s, "Make it shorter.")
    t2 = s.pending
    # turn 2's prompt begins with turn 1's prompt and answer: all of turn 1's prompt is reused
    assert t2.reused_tokens >= t1.prompt_tokens
    assert t2.prompt_tokens - t2.reused_tokens < t1.prompt_tokens - t1.reused_tokens
    assert t2.stats.accepted_by_drafter.get("predicted", 0) > 0  # turn 1's answer was the draft
    assert t2.before == t1.answer
    # exactly what a fresh backend produces for the same conversation, with plain decoding
    req = s.request("Make it shorter.")
    assert [h.instruction for h in req.history] == ["Fix the grammar."]
    fresh, _ = last(edit_events(ReferenceBackend(), req, EditOptions(speculate="off")))
    assert events[-1].text == fresh.text == t2.answer


def test_a_rejected_turn_leaves_no_trace():
    s = session()
    run(s, "Fix the grammar.")
    s.reject()
    assert s.text == TEXT and not s.unsaved and s.pending is None
    run(s, "Fix the spelling.")
    t2 = s.pending
    assert s.request("x").history == ()
    assert 0 < t2.reused_tokens < t2.prompt_tokens  # system prompt and more, up to the instruction
    fresh, _ = last(edit_events(ReferenceBackend(), s.request("Fix the spelling.")))
    assert t2.answer == fresh.text


def test_a_retry_reads_only_its_instruction():
    """The file comes before the instruction in a session's prompt (session.FILE_FIRST): after
    a rejected answer, a retry with another instruction finds the whole file in the cache."""
    s = session()
    backend = s.backend
    first = build_prompt(backend, s.request("Fix the grammar.")).tokens
    run(s, "Fix the grammar.")
    s.reject()
    again = build_prompt(backend, s.request("Fix the grammar, and the spelling too.")).tokens
    run(s, "Fix the grammar, and the spelling too.")
    t2 = s.pending
    assert t2.reused_tokens == common_prefix(first, again)
    assert TEXT in backend.detokenize(again[: t2.reused_tokens])  # the file: read once
    tail = backend.detokenize(again[t2.reused_tokens :])
    assert tail.startswith(" and the spelling too.") or tail.startswith(", and the spelling too.")


def test_accept_some_hunks_undo_redo():
    s = session()
    run(s, "Fix it.")
    s.accept("a merged text\n")
    assert s.text == "a merged text\n" and not s.redo()
    run(s, "Again.")
    second = s.pending.answer
    s.accept()
    assert s.undo() and s.text == "a merged text\n"
    assert s.undo() and s.text == TEXT and not s.unsaved and not s.undo()
    assert s.redo() and s.text == "a merged text\n"
    assert s.redo() and s.text == second and not s.redo()
    s.mark_saved()
    assert not s.unsaved


def test_one_turn_at_a_time_and_instructions_required():
    s = session()
    with pytest.raises(SessionError):
        run(s, "   ")
    run(s, "Fix it.")
    with pytest.raises(SessionError, match="accept or reject"):
        run(s, "Again.")
    assert not s.undo()  # not while an answer is pending
    s.reject()
    with pytest.raises(SessionError):
        s.accept()


def test_cancel_keeps_the_text_and_the_next_turn_is_exact():
    s = session(speculate="off")
    seen = []

    def cancelled():
        return len(seen) >= 3

    for event in s.run("Fix it.", cancelled=cancelled):
        if isinstance(event, TokenGenerated | TokensAccepted):
            seen.append(event)
    assert len(seen) == 3 and s.pending is None and s.text == TEXT and not s.turns
    run(s, "Fix it.")
    fresh, _ = last(
        edit_events(
            ReferenceBackend(), EditRequest(TEXT, "Fix it.", "notes.txt"), EditOptions(speculate="off")
        )
    )
    assert s.pending.answer == fresh.text and s.pending.reused_tokens > 0


def test_a_file_larger_than_the_context_is_refused():
    s = Session(ReferenceBackend(n_ctx=256), TEXT * 20, "big.txt")
    with pytest.raises(SessionError, match="context"):
        run(s, "Fix it.")


def test_a_long_conversation_starts_again_from_the_working_text():
    s = Session(ReferenceBackend(n_ctx=1024), TEXT, "notes.txt")
    texts = [s.text]
    for i in range(5):
        run(s, f"Turn {i}.")
        s.accept()
        texts.append(s.text)
        req = s.request("next")
        prompt = build_prompt(s.backend, req).tokens
        assert req.history == () or len(prompt) <= 512  # half the context at most
    assert len(s.request("next").history) < 5  # it started again at least once
    for text in reversed(texts[:-1]):  # undo still walks back through every accepted turn
        assert s.undo() and s.text == text


TUI_TEXT = (
    "The quick brown fox jumps over the lazy dog.\n"
    "It was the best of times, it was the worst of times.\n"
    "And so it goes, and so it went.\n"
    "One more line here.\n"
)


@pytest.mark.parametrize(
    ("backend_seed", "seed", "why"),
    [
        (0, 4, "was cut off after 200 tokens"),
        (1, 1, "ended after 128 tokens without closing its code block (an incomplete rewrite)"),
    ],
)
def test_an_answer_that_is_not_a_whole_rewrite_is_never_offered(backend_seed, seed, why):
    """Sampled on the reference model, these answers run off (max_tokens) or stop before
    closing their fence: the turn raises, no answer is pending, the text is unchanged."""
    sampling = Sampling(temperature=1.0, seed=seed)
    options = EngineOptions(edit=EditOptions(max_tokens=200, sampling=sampling, speculate="fixed"))
    session = Session(ReferenceBackend(seed=backend_seed), TUI_TEXT, "notes.txt", options=options)
    with pytest.raises(RefusedError) as refused:
        list(session.run("Fix it."))
    assert refused.value.message.startswith(f"notes.txt: the model's answer {why}")
    assert session.pending is None and session.text == TUI_TEXT and not session.turns


def test_a_json_file_in_a_session_is_held_to_json():
    """The same sampled turn with and without the JSON grammar: held, it ends as JSON (its
    closing fence forced); free, the model wanders off and never closes the block."""
    import json

    text = '{\n  "name": "pedit",\n  "tags": ["cli"]\n}\n'
    options = EngineOptions(
        edit=EditOptions(sampling=Sampling(temperature=3.0, seed=1), speculate="off", max_tokens=400)
    )
    held = Session(ReferenceBackend(), text, "data.json", options=options)
    events = list(held.run("add a tag"))
    assert any(isinstance(e, TokensAccepted) and e.source == "grammar" for e in events)
    json.loads(held.pending.answer)
    free = Session(ReferenceBackend(), text, "data.json", options=replace(options, json_auto=False))
    with pytest.raises(RefusedError):
        list(free.run("add a tag"))
