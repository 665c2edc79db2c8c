"""The chat service under the turn queue's at-least-once delivery: a turn handed to a second worker
is finished from its checkpoint or given back, never run twice; an outage is raised for the queue
to retry, except on the last try."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from redis.asyncio import Redis

from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.conversation import QUESTION, delivering, llm_chat, route_to
from threadsage.chat import APOLOGY, RATE_LIMITED, ReplyKind, Turn
from threadsage.delivery.current import Delivery
from threadsage.delivery.outages import ServiceUnavailable
from threadsage.delivery.redis_coordination import RedisCoordinator

TURN = Turn("test", "test:ws:chan:thread", "U1", "m1", text=QUESTION)


async def test_a_redelivered_finished_turn_gives_its_replies_back_without_running(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["answer"] = "Premium economy is allowed [1]."
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        with delivering(Delivery("job-1", attempt=1, final=False)):
            [first] = await chat.handle(TURN)
        calls = len(llm.chat_kinds())
        with delivering(Delivery("job-1", attempt=2, final=False)):  # the worker died before acknowledging
            [again] = await chat.handle(TURN)
        with delivering(Delivery("job-2")):  # the same message delivered again by the platform
            assert await chat.handle(TURN) == []
    assert first.kind is ReplyKind.ANSWER and (again.text, again.citations) == (first.text, first.citations)
    assert len(llm.chat_kinds()) == calls  # nothing ran again


async def test_a_redelivered_finished_turn_gives_the_same_reply_hand_off_included(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    llm.script["answer"] = "The documents I have access to don't say whether dogs may come to the office."
    uncovered = Turn("test", "test:ws:chan:dogs", "U1", "m1", text="Can I bring my dog to the office?")
    async with llm_chat(tmp_path, llm, handbook_kb, THREADSAGE_HANDOFF="*=#help-desk") as chat:
        with delivering(Delivery("job-1", attempt=1, final=False)):
            [first] = await chat.handle(uncovered)
        with delivering(Delivery("job-1", attempt=2, final=False)):
            [again] = await chat.handle(uncovered)
    assert first.handoff is not None and first.handoff.plain == "#help-desk"
    assert again == first


async def test_a_redelivered_unfinished_turn_continues_from_its_last_checkpoint(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    answering = threading.Event()

    def stuck(_request: dict) -> str:
        answering.set()
        time.sleep(2)
        return "never read"

    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["answer"] = stuck
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        with delivering(Delivery("job-1", attempt=1, final=False)):
            turn = asyncio.create_task(chat.handle(TURN))
            await asyncio.to_thread(answering.wait, 30)
            turn.cancel()  # the worker dies inside the answer node
            with pytest.raises(asyncio.CancelledError):
                await turn
        llm.script["answer"] = "Premium economy is allowed [1]."
        llm.requests.clear()
        with delivering(Delivery("job-1", attempt=2, final=False)):
            [answer] = await chat.handle(TURN)
    assert answer.kind is ReplyKind.ANSWER and answer.text == "Premium economy is allowed [1]."
    assert llm.chat_kinds() == ["answer", "Verdict"]  # routing was not repeated


async def test_an_outage_is_raised_for_a_retry_until_the_last_try(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        unreachable = Redis.from_url("redis://127.0.0.1:1/0")  # nothing listens: connection refused
        chat.coordinator = RedisCoordinator(unreachable)
        with delivering(Delivery("job-1", attempt=1, final=False)), pytest.raises(ServiceUnavailable):
            await chat.handle(TURN)
        with delivering(Delivery("job-1", attempt=3, final=True)):
            assert [r.text for r in await chat.handle(TURN)] == [APOLOGY]
        assert [r.text for r in await chat.handle(TURN)] == [APOLOGY]  # no queue: apologise at once
        await unreachable.aclose()
    assert llm.chat_kinds() == []


async def test_the_rate_limit_decides_once_per_turn(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    async with llm_chat(tmp_path, llm, handbook_kb, THREADSAGE_RATE_LIMIT_PER_MINUTE=1) as chat:
        second = Turn("test", TURN.session_key, "U1", "m2", text=QUESTION)
        with delivering(Delivery("job-1", attempt=1, final=False)):
            [first] = await chat.handle(TURN)
        with delivering(Delivery("job-2", attempt=1, final=False)):
            assert [r.text for r in await chat.handle(second)] == [RATE_LIMITED]
        with delivering(Delivery("job-1", attempt=2, final=False)):  # not limited by its own first try
            assert [r.kind for r in await chat.handle(TURN)] == [first.kind] == [ReplyKind.ANSWER]
        with delivering(Delivery("job-2", attempt=2, final=False)):  # still limited, not answered now
            assert [r.text for r in await chat.handle(second)] == [RATE_LIMITED]
