"""Whole conversations through ChatService with the offline back-end on the demo handbook,
checkpointed in SQLite and in a real Postgres."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.conversation import AMBIGUOUS, Conversation, only, service, settings_for
from tests.helpers.locations import HANDBOOK
from threadsage.adapters.knowledge import open_knowledge_base
from threadsage.chat import (
    APOLOGY,
    EMPTY,
    NOT_YOURS,
    RATE_LIMITED,
    STALE,
    ReplyKind,
    Turn,
)
from threadsage.ingestion.pipeline import Ingestor


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A DATABASE_URL ('' for the SQLite file under the data dir)."""
    if request.param == "sqlite":
        return ""
    return request.getfixturevalue("pg_url")


async def test_ambiguous_question_clarify_click_and_answer(tmp_path: Path, backend: str, handbook_kb) -> None:
    async with service(tmp_path, backend, handbook_kb) as chat:
        talk = Conversation(chat)
        ask = only(await talk.say(AMBIGUOUS))
        assert ask.kind is ReplyKind.CLARIFICATION and ask.interrupt_id
        labels = [c.label for c in ask.choices]
        assert len(labels) == 2 and all(len(label) <= 75 for label in labels)
        vpn = next(i for i, label in enumerate(labels) if "VPN" in label)
        answer = only(await talk.click(ask.interrupt_id[:12], vpn))
        assert answer.kind is ReplyKind.ANSWER
        assert answer.citations and answer.citations[0]["path"] == "it/vpn.md"
        assert "Gatekeeper" in answer.text
        assert [s["node"] for s in answer.trace][:3] == ["contextualise", "route", "clarify"]


@pytest.mark.slow
async def test_a_new_process_resumes_the_paused_thread(tmp_path: Path, backend: str) -> None:
    settings = settings_for(tmp_path, backend)
    kb = open_knowledge_base(settings)
    assert Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([HANDBOOK]).ok
    async with service(tmp_path, backend, kb) as chat:
        ask = only(await Conversation(chat).say(AMBIGUOUS))
    kb.close()  # the other process takes the Milvus Lite lock
    email = next(int(c.id) for c in ask.choices if "mail" in c.label.lower())
    script = f"""
import asyncio, json
from threadsage.chat import ClarificationAnswer, Turn
from threadsage.settings.environment import Settings
from threadsage.app.runtime import open_chat_service

async def main():
    async with open_chat_service(Settings()) as chat:
        answer = ClarificationAnswer({ask.interrupt_id!r}, option={email})
        replies = await chat.handle(Turn("test", "test:ws:chan:thread", "U1", "click-1", answer=answer))
        print(json.dumps([[r.kind, r.text, [c["path"] for c in r.citations]] for r in replies]))

asyncio.run(main())
"""
    env = {**os.environ, "THREADSAGE_DATA_DIR": str(tmp_path / "data"), "DATABASE_URL": backend}
    env.pop("OPENAI_API_KEY", None)
    if not backend:
        del env["DATABASE_URL"]
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", script],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    [[kind, text, paths]] = json.loads(done.stdout.strip().splitlines()[-1])
    assert kind == "answer" and paths[0] == "it/email.md", text


async def test_stale_repeated_and_foreign_answers(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        talk = Conversation(chat)
        ask = only(await talk.say(AMBIGUOUS))
        assert only(await talk.click("ffffffff", 0)).text == STALE
        assert only(await talk.click(ask.interrupt_id, 0, user="U2")).text == NOT_YOURS
        assert only(await talk.click(ask.interrupt_id, 7)).text == STALE
        first = await talk.click(ask.interrupt_id, 0, click_id="click-a")
        assert only(first).kind is ReplyKind.ANSWER
        assert await talk.click(ask.interrupt_id, 0, click_id="click-a") == []  # the same delivery again
        assert only(await talk.click(ask.interrupt_id, 1, click_id="click-b")).text == STALE  # a second click


async def test_anyone_may_answer_when_configured(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb, anyone_may_answer=True) as chat:
        talk = Conversation(chat)
        ask = only(await talk.say(AMBIGUOUS))
        assert only(await talk.click(ask.interrupt_id, 0, user="U2")).kind is ReplyKind.ANSWER


async def test_typing_instead_of_clicking_answers_the_clarification(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        talk = Conversation(chat)
        only(await talk.say(AMBIGUOUS))
        by_number = only(await talk.say("2"))
        assert by_number.kind is ReplyKind.ANSWER
        only(await talk.say(AMBIGUOUS))
        by_words = only(await talk.say("the VPN one, Larkspur Connect"))
        assert by_words.citations[0]["path"] == "it/vpn.md"
        assert any(s["node"] == "clarify" for s in by_words.trace)
        # someone else typing in the thread asks their own question instead
        only(await talk.say(AMBIGUOUS))
        other = only(await talk.say("Which cabin class may I book for a flight of 6 hours or more?", user="U2"))
        assert other.kind is ReplyKind.ANSWER and other.citations[0]["path"] == "finance/travel.md"


async def test_repeat_delivery_gets_no_second_answer(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        turn = Turn("test", "test:ws:c:t", "U1", "same-id", text="What is the rate limit per API key?")
        assert only(await chat.handle(turn)).kind is ReplyKind.ANSWER
        assert await chat.handle(turn) == []


async def test_empty_and_huge_messages(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        talk = Conversation(chat)
        assert only(await talk.say("   ")).text == EMPTY
        huge = only(await talk.say("Which cabin class may I book for a flight of 6 hours or more? " * 800))
        assert huge.kind is ReplyKind.ANSWER and huge.citations[0]["path"] == "finance/travel.md"


async def test_follow_up_in_the_same_thread_uses_its_memory(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        talk = Conversation(chat)
        only(await talk.say("What is the rate limit per API key for the Tidewater API?"))
        follow = only(await talk.say("and what happens when it is exceeded?"))
        assert "Tidewater API" in follow.trace[0]["detail"]  # the standalone question
        assert follow.citations[0]["path"] == "engineering/api-style-guide.md"
        without_memory = only(
            await Conversation(chat, "test:ws:chan:other").say("and what happens when it is exceeded?")
        )
        assert without_memory.trace[0]["detail"] == "first question"
        # Read without the earlier question (the one passage holding "exceeded" may still lead).
        assert without_memory.text != follow.text


async def test_a_question_after_one_a_tool_answered_is_answered_from_the_documents(tmp_path: Path, handbook_kb) -> None:
    """The tool's route is the last turn's, not the next one's (it once made the next question
    in the thread end in an apology)."""
    async with service(tmp_path, "", handbook_kb) as chat:
        talk = Conversation(chat)
        sum_ = only(await talk.say("what is 17 * 23?"))
        assert sum_.route == "tools" and "391" in sum_.text
        answer = only(await talk.say("How many days of annual leave do employees get?"))
    assert answer.kind is ReplyKind.ANSWER and answer.route != "tools" and answer.citations


async def test_new_forgets_the_session(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        talk = Conversation(chat)
        ask = only(await talk.say(AMBIGUOUS))
        await chat.reset(talk.key, talk.platform)
        assert only(await talk.click(ask.interrupt_id, 0)).text == STALE


async def test_routes_of_the_offline_back_end(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        talk = Conversation(chat)
        cases = {
            "hello!": "direct_reply",
            "Which cabin class may I book for a flight of 6 hours or more?": "fast_retrieval",
            "How do I request an exception to a security rule?": "standard_retrieval",
            "What's the difference between the Lisbon and Toronto hotel limits?": "deep_search",
            "Which command rolls back tidewater-api in production?": "code_search",
            "Who won the football world cup in 1998?": "fallback",
        }
        for question, route in cases.items():
            reply = only(await talk.say(question))
            assert (reply.kind, reply.route) == (ReplyKind.ANSWER, route), (question, reply.trace)


async def test_a_broken_knowledge_base_gets_an_apology_not_silence(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, "")
    kb = open_knowledge_base(settings)
    Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([HANDBOOK / "finance"])
    async with service(tmp_path, "", kb) as chat:
        kb.close()  # every search now fails
        reply = only(await Conversation(chat).say("What is the hotel limit?"))
        assert reply.kind is ReplyKind.NOTICE and reply.text == APOLOGY


async def test_rate_limit_is_friendly_and_clicks_do_not_count(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb, rate_limit_per_minute=2) as chat:
        talk = Conversation(chat)
        ask = only(await talk.say(AMBIGUOUS))
        assert only(await talk.click(ask.interrupt_id, 0)).kind is ReplyKind.ANSWER
        assert only(await talk.say("hello")).kind is ReplyKind.ANSWER
        assert only(await talk.say("hello again")).text == RATE_LIMITED
        assert await talk.say("and again") == []  # one notice per person and minute, not a flood
        other_user = only(await talk.say("hello", user="U2"))
        assert other_user.kind is ReplyKind.ANSWER
