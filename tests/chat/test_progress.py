"""Progress events of the chat service: a model-backed turn reports the steps its run enters
(searching → checking → writing), platform-neutral, before its replies; the offline back-end
reports none, and `handle` is unchanged."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.conversation import QUESTION, llm_chat, route_to
from threadsage.app.runtime import open_chat_service
from threadsage.chat import ACCEPTED, ClarificationAnswer, Draft, Progress, Reply, ReplyKind, Step, Turn
from threadsage.settings.environment import Settings


def turn(message_id: str, text: str | None = None, **extra) -> Turn:
    return Turn("test", "test:ws:chan:thread", "U1", message_id, text=text, **extra)


async def test_a_model_backed_turn_reports_its_steps_before_its_answer(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["answer"] = "Premium economy is allowed [1]."
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        assert chat.progress
        events = [event async for event in chat.stream(turn("m1", QUESTION))]
        assert [await chat.handle(turn("m2", QUESTION))][0][0].kind is ReplyKind.ANSWER  # handle: replies only
    steps = [e.step for e in events if isinstance(e, Progress)]
    # route gathers the evidence, generate writes (and grades it), judge checks the answer
    assert steps == [Step.SEARCHING, Step.WRITING, Step.CHECKING]
    assert isinstance(events[-1], Reply) and events[-1].kind is ReplyKind.ANSWER
    assert all(isinstance(e, Progress | Draft) for e in events[:-1])  # the answer's words while it is written


async def test_a_clicked_answer_is_accepted_before_its_steps(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script["RouteDecision"] = [
        route_to("HOW_TO", 0.3, clarify=True, clarify_prompt="Which trip?", clarify_options=["Domestic", "Abroad"]),
        route_to("HOW_TO"),
    ]
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        [ask] = await chat.handle(turn("m1", QUESTION))
        assert ask.kind is ReplyKind.CLARIFICATION and ask.interrupt_id
        click = turn("c1", answer=ClarificationAnswer(ask.interrupt_id, 1))
        events = [event async for event in chat.stream(click)]
    assert events[0] is ACCEPTED
    assert next(e.step for e in events if isinstance(e, Progress)) is Step.SEARCHING
    assert isinstance(events[-1], Reply) and events[-1].kind is ReplyKind.ANSWER


async def test_the_offline_back_end_reports_no_steps(tmp_path: Path, handbook_kb) -> None:
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path / "data", OPENAI_API_KEY=None, DATABASE_URL=None, _env_file=None)
    async with open_chat_service(settings, handbook_kb) as chat:
        assert not chat.progress
        events = [event async for event in chat.stream(turn("m1", "What is the rate limit per API key?"))]
    assert [type(e) for e in events] == [Reply]


async def test_each_step_of_a_deep_search_is_reported_with_its_sub_question(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script["RouteDecision"] = route_to("COMPARISON")
    llm.script["SubQuestions"] = {"questions": ["Lisbon hotel limit?", "Toronto hotel limit?"]}
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        events = [event async for event in chat.stream(turn("m1", "Lisbon vs Toronto hotel limits?"))]
    shown = [(e.step, e.detail) for e in events if isinstance(e, Progress)]
    assert shown == [
        (Step.SEARCHING, ""),  # route, plan
        (Step.SEARCHING, "step 1: Lisbon hotel limit?"),
        (Step.SEARCHING, "step 2: Toronto hotel limit?"),
        (Step.WRITING, ""),  # synthesise
    ]
