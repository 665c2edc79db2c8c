"""Drafts through the real chat service, against the fake model streaming over real HTTP: the
answer's words arrive before the final reply, each draft extending the one before; a draft the
self-check rejects is withdrawn; a redelivered message streams nothing; a model that dies mid-reply
still ends in exactly one reply; a click resumes and streams; only the person's words stream."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

from tests.fakes.openai_server import DiesMidway, FakeOpenAI, kind_of
from tests.helpers.conversation import AMBIGUOUS, QUESTION, llm_chat, route_to
from threadsage.chat import (
    ACCEPTED,
    APOLOGY,
    ClarificationAnswer,
    Draft,
    Progress,
    Reply,
    ReplyKind,
    Step,
    Turn,
    TurnEvent,
    readable,
)
from threadsage.i18n import say

ANSWER = "Premium economy is allowed for flights of six hours or more [1], booked through TripDesk [1]."


def turn(message_id: str, text: str | None = None, **extra) -> Turn:
    return Turn("test", "test:ws:chan:thread", "U1", message_id, text=text, **extra)


def drafts_of(events: list[TurnEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, Draft)]


def replies_of(events: list[TurnEvent]) -> list[Reply]:
    return [e for e in events if isinstance(e, Reply)]


def growing(drafts: list[str]) -> bool:
    return all(later.startswith(earlier) and later != earlier for earlier, later in pairwise(drafts))


def streamed_kinds(llm: FakeOpenAI) -> list[str]:
    return [kind_of(body) for path, body in llm.requests if path.endswith("/chat/completions") and body.get("stream")]


async def test_a_structured_answer_streams_its_words_before_the_reply(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    """The answer comes as a function call's argument deltas: the drafts show its `answer` field
    only (no JSON, no citation numbers), growing, and the reply comes after them."""
    llm.tokens_per_second = 400
    llm.script["RouteDecision"] = route_to("HOW_TO")  # the standard route: checked after it is written
    llm.script["answer"] = {"answer": ANSWER, "used": [1]}
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        events = [event async for event in chat.stream(turn("m1", QUESTION))]
    drafts = drafts_of(events)
    [reply] = replies_of(events)
    assert len(drafts) >= 2 and growing(drafts), drafts
    assert drafts[0] and all("{" not in d and "[1]" not in d and "used" not in d for d in drafts)
    assert drafts[-1] == readable(ANSWER) == readable(reply.text)
    assert events[-1] is reply and reply.kind is ReplyKind.ANSWER and reply.citations
    # the first words come while it writes: before the check starts
    checking = next(e for e in events if isinstance(e, Progress) and e.step is Step.CHECKING)
    assert events.index(next(e for e in events if isinstance(e, Draft))) < events.index(checking)
    assert checking.found is not None and checking.found.passages >= 1  # what the search found, told
    assert streamed_kinds(llm) == ["answer"]  # routing and judging never stream


async def test_plain_text_from_a_server_that_ignores_tool_choice_streams_too(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.habits = {"ignores_tool_choice"}
    llm.tokens_per_second = 400  # paced as a server writes: unpaced, the reply is read whole at once
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.script["answer"] = ANSWER  # content, not a call
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        events = [event async for event in chat.stream(turn("m1", QUESTION))]
    drafts = drafts_of(events)
    assert len(drafts) >= 2 and growing(drafts) and drafts[-1] == readable(ANSWER)
    assert replies_of(events)[0].text == ANSWER


async def test_a_draft_the_judge_rejects_is_withdrawn_and_the_next_one_streams(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script["RouteDecision"] = route_to("HOW_TO")
    first, second = "Ask your manager, maybe [1].", "Book premium economy through TripDesk [1]."
    llm.script["answer"] = [{"answer": first, "used": [1]}, {"answer": second, "used": [1]}]
    llm.script["Verdict"] = [
        {"grounded": 0.1, "useful": 0.1, "reasoning": "unsupported"},
        {"grounded": 1.0, "useful": 1.0, "reasoning": "fine"},
    ]
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        events = [event async for event in chat.stream(turn("m1", QUESTION))]
    drafts = drafts_of(events)
    withdrawn = drafts.index("")
    assert growing(drafts[:withdrawn]) and drafts[withdrawn - 1] == readable(first)
    assert growing(drafts[withdrawn + 1 :]) and drafts[-1] == readable(second)
    [reply] = replies_of(events)
    assert reply.text == second and events[-1] is reply


async def test_a_redelivered_message_streams_nothing_and_handle_never_streams(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.script["answer"] = {"answer": ANSWER, "used": [1]}
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        first = [event async for event in chat.stream(turn("m1", QUESTION))]
        again = [event async for event in chat.stream(turn("m1", QUESTION))]
        assert drafts_of(first) and again == []
        assert streamed_kinds(llm) == ["answer"]
        [reply] = await chat.handle(turn("m2", QUESTION))
    assert reply.kind is ReplyKind.ANSWER
    assert streamed_kinds(llm) == ["answer"]  # handle's turn: no stream asked for


async def test_a_model_that_dies_mid_answer_still_ends_in_one_reply(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    """The connection closes after a few tokens, on every attempt: the words shown are replaced by
    the documents' own words, said to be that — one reply, no apology."""
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.script["answer"] = DiesMidway({"answer": ANSWER, "used": [1]}, tokens=4)
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        events = [event async for event in chat.stream(turn("m1", QUESTION))]
    [reply] = replies_of(events)
    assert events[-1] is reply and reply.text != APOLOGY
    assert reply.kind is ReplyKind.ANSWER and reply.text.startswith(say("model_failed")) and reply.low_confidence
    drafts = drafts_of(events)
    assert drafts and readable(ANSWER).startswith(drafts[0])  # the words began to arrive
    assert len(llm.abandoned) == 0 and streamed_kinds(llm) == ["answer"] * (1 + 1)  # one retry


async def test_a_click_is_accepted_and_its_answer_streams(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script["RouteDecision"] = [
        route_to("HOW_TO", 0.3, clarify=True, clarify_prompt="Which account?", clarify_options=["Laptop", "VPN"]),
        route_to("HOW_TO"),
    ]
    llm.script["answer"] = {"answer": ANSWER, "used": [1]}
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        asked = [event async for event in chat.stream(turn("m1", AMBIGUOUS))]
        [ask] = replies_of(asked)
        assert ask.kind is ReplyKind.CLARIFICATION and not drafts_of(asked)
        click = turn("c1", answer=ClarificationAnswer(ask.interrupt_id or "", 1))
        events = [event async for event in chat.stream(click)]
    assert events[0] is ACCEPTED
    drafts = drafts_of(events)
    assert drafts and growing(drafts) and drafts[-1] == readable(ANSWER)
    assert [r.kind for r in replies_of(events)] == [ReplyKind.ANSWER]


async def test_small_talk_streams_too(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script["RouteDecision"] = route_to("CHIT_CHAT")
    llm.script["chat"] = "Hello there! Ask me anything about the handbook."
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        events = [event async for event in chat.stream(turn("m1", "hi, how are you doing today?"))]
    drafts = drafts_of(events)
    assert drafts and growing(drafts) and drafts[-1] == "Hello there! Ask me anything about the handbook."
    assert replies_of(events)[0].text == drafts[-1]
