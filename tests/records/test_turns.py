"""The record of turns, through the real chat service on SQLite and Postgres: one row per turn
(redelivered or not), the clarification's row keeping the option chosen, text left out when asked,
and the retention prune."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from starlette.datastructures import QueryParams

from threadsage.app.retention import prune_periodically
from threadsage.app.runtime import open_chat_service
from threadsage.chat import ClarificationAnswer, ReplyKind, Turn, turn_ref
from threadsage.console.filters import Filters
from threadsage.console.queries import ConsoleData
from threadsage.delivery.current import Delivery, current_delivery
from threadsage.records.turns import DAY_MS, DAYS, TABLE
from threadsage.settings.environment import Settings

AMBIGUOUS = "How do I reset my password?"
SESSION = "slack:T1:C9:1710000000.000001"


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str:
    return "" if request.param == "sqlite" else request.getfixturevalue("pg_url")


def settings_for(tmp_path: Path, database_url: str, **overrides: object) -> Settings:
    return Settings(
        THREADSAGE_DATA_DIR=tmp_path / "data",
        DATABASE_URL=database_url or None,
        OPENAI_API_KEY=None,
        _env_file=None,
        **overrides,  # type: ignore[arg-type]
    )


async def rows(chat, where: str = "1 = 1") -> list[dict]:
    store = chat.recording.store
    columns = ["message_id", "question", "outcome", "options", "choice", "chosen", "chosen_index", "answers"]
    columns += ["user_id", "answer", "citations", "channel", "thread", "platform", "answer_ref", "closest"]
    found = await store.tables.fetch(f"SELECT {', '.join(columns)} FROM {TABLE} WHERE {where} ORDER BY at")
    return [dict(zip(columns, row, strict=True)) for row in found]


async def test_clarify_click_answer_leaves_one_row_with_the_chosen_option(
    tmp_path: Path, database_url: str, handbook_kb
) -> None:
    async with open_chat_service(settings_for(tmp_path, database_url), kb=handbook_kb) as chat:
        [ask] = await chat.handle(Turn("slack", SESSION, "U1", "C9:100.1", text=AMBIGUOUS))
        assert ask.kind is ReplyKind.CLARIFICATION and ask.interrupt_id
        click = Turn("slack", SESSION, "U1", "action:1", answer=ClarificationAnswer(ask.interrupt_id, 1))
        [answer] = await chat.handle(click)
        assert answer.kind is ReplyKind.ANSWER
        await chat.record_feedback(SESSION, turn_ref("action:1"), "U1", -1)
        recorded = await rows(chat)
    assert [r["message_id"] for r in recorded] == ["C9:100.1", "action:1"]
    asked, answered = recorded
    labels = [c.label for c in ask.choices]
    assert asked["outcome"] == "clarified" and json.loads(asked["options"]) == labels
    assert (asked["choice"], asked["chosen"], asked["chosen_index"]) == ("chosen", labels[1], 1)
    assert [r for r in recorded if r["chosen"] is not None] == [asked]  # one row holds the choice
    assert asked["question"] == AMBIGUOUS and asked["user_id"] == "U1"
    assert (asked["platform"], asked["channel"], asked["thread"]) == ("slack", "C9", "1710000000.000001")
    assert answered["answers"] == "C9:100.1" and answered["outcome"] in ("answered", "low_confidence")
    assert answered["answer"] == answer.text and answered["answer_ref"] == turn_ref("action:1")
    assert [c["title"] for c in json.loads(answered["citations"])] == [c["title"] for c in answer.citations]


async def test_a_redelivered_turn_leaves_one_row(tmp_path: Path, database_url: str, handbook_kb) -> None:
    turn = Turn("slack", SESSION, "U1", "C9:200.1", text="How many vacation days do I get?")
    async with open_chat_service(settings_for(tmp_path, database_url), kb=handbook_kb) as chat:
        for attempt in (1, 2):  # the first worker died before acknowledging: the queue hands it on
            token = current_delivery.set(Delivery("job-1", attempt=attempt, final=False))
            try:
                [reply] = await chat.handle(turn)
            finally:
                current_delivery.reset(token)
        assert await chat.handle(turn) == []  # the platform delivering it again: a duplicate
        recorded = await rows(chat)
    assert len(recorded) == 1 and recorded[0]["answer"] == reply.text


async def test_an_abandoned_clarification_and_a_question_nothing_covers(tmp_path: Path, handbook_kb) -> None:
    async with open_chat_service(settings_for(tmp_path, ""), kb=handbook_kb) as chat:
        [ask] = await chat.handle(Turn("slack", SESSION, "U1", "m1", text=AMBIGUOUS))
        assert ask.kind is ReplyKind.CLARIFICATION
        await chat.handle(Turn("slack", SESSION, "U2", "m2", text="What is the airspeed of a laden swallow?"))
        [gap] = await chat.handle(
            Turn("slack", "slack:T1:C9:-", "U2", "m3", text="Can I bring my pet iguana to the office kitchen?")
        )
        recorded = await rows(chat)
        overview = await ConsoleData(chat.recording.store.tables).overview(Filters.parse(QueryParams({})))
    assert recorded[0]["choice"] == "abandoned" and recorded[0]["chosen"] is None
    assert overview.funnel == {"abandoned": 1} and overview.outcomes == {"clarified": 1, "not_covered": 2}
    assert recorded[1]["outcome"] == recorded[2]["outcome"] == "not_covered", gap.text
    assert json.loads(recorded[2]["closest"])["path"]  # the document the retriever came closest to


async def test_numbers_only_keeps_no_text(tmp_path: Path, handbook_kb) -> None:
    settings = settings_for(tmp_path, "", THREADSAGE_RECORD_QUESTIONS=False)
    async with open_chat_service(settings, kb=handbook_kb) as chat:
        [ask] = await chat.handle(Turn("slack", SESSION, "U1", "m1", text=AMBIGUOUS))
        await chat.handle(Turn("slack", SESSION, "U1", "m2", answer=ClarificationAnswer(ask.interrupt_id or "", 0)))
        recorded = await rows(chat)
    assert len(recorded) == 2
    for row in recorded:
        assert row["question"] is None and row["answer"] is None and row["user_id"] is None and row["chosen"] is None
    assert json.loads(recorded[0]["options"]) == len(ask.choices) and recorded[0]["chosen_index"] == 0
    assert AMBIGUOUS.lower() not in json.dumps(recorded).lower()


async def test_recorded_turns_go_after_their_retention(tmp_path: Path, database_url: str, handbook_kb) -> None:
    settings = settings_for(tmp_path, database_url, THREADSAGE_QUESTION_RETENTION_DAYS=90)
    assert Settings(_env_file=None).question_retention_days == 90  # the default
    async with open_chat_service(settings, kb=handbook_kb) as chat:
        store = chat.recording.store
        assert store is not None
        await chat.handle(Turn("slack", SESSION, "U1", "old", text="How many vacation days do I get?"))
        old = await rows(chat)
        await store.tables.execute(f"UPDATE {TABLE} SET at = {{p}}", (int((time.time() - 91 * 86400) * 1000),))
        await chat.handle(Turn("slack", SESSION, "U1", "new", text="How many vacation days do I get?"))
        assert [r["message_id"] for r in await rows(chat)] == ["old", "new"]
        stop = asyncio.Event()
        pruning = asyncio.create_task(prune_periodically(chat.checkpointer, settings, stop, store))
        for _ in range(100):
            if [r["message_id"] for r in await rows(chat)] == ["new"]:
                break
            await asyncio.sleep(0.05)
        stop.set()
        await asyncio.wait_for(pruning, 5)
        assert [r["message_id"] for r in await rows(chat)] == ["new"]
    assert old and settings.prune_older_than_days == 0  # checkpoint pruning off: the turns still go


async def test_the_day_counts_match_the_rows_with_votes_before_and_after_them(
    tmp_path: Path, database_url: str, handbook_kb
) -> None:
    """Each turn adds itself to its day's counts (no recount of the day); a 👍 given before its
    turn's row exists is in both, and one given after is counted by the recount a vote makes."""
    async with open_chat_service(settings_for(tmp_path, database_url), kb=handbook_kb) as chat:
        store = chat.recording.store
        assert store is not None
        early_session = "slack:T1:C5:-"  # a channel of its own: the later vote's recount does not reach it
        await chat.record_feedback(early_session, turn_ref("early"), "U2", 1)  # the row does not exist yet
        await chat.handle(Turn("slack", early_session, "U1", "early", text="How many vacation days do I get?"))
        for n in range(3):
            await chat.handle(Turn("slack", SESSION, "U1", f"m{n}", text="How do I rotate my VPN password?"))
        await chat.handle(Turn("slack", "slack:T1:C7:-", "U3", "elsewhere", text="What is the expense limit?"))
        await chat.record_feedback(SESSION, turn_ref("m1"), "U2", -1)
        await chat.handle(Turn("slack", SESSION, "U1", "late", text="What is the expense limit?"))
        kept = await store.tables.fetch(
            f"SELECT day, platform, channel, outcome, choice, turns, latency_ms, up, down FROM {DAYS} "
            "WHERE turns > 0 ORDER BY 1, 2, 3, 4, 5"
        )
        recounted = await store.tables.fetch(
            f"SELECT at / {DAY_MS}, platform, channel, outcome, COALESCE(choice, ''), COUNT(*), SUM(latency_ms), "
            f"SUM(up), SUM(down) FROM {TABLE} GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5"
        )
        early = await rows(chat, "message_id = 'early'")
    assert [tuple(int(v) if isinstance(v, (int, float)) else v for v in r) for r in kept] == [
        tuple(int(v) if isinstance(v, (int, float)) else v for v in r) for r in recounted
    ]
    assert sum(int(r[5]) for r in kept) == 6 and sum(int(r[7]) for r in kept) == 1 and sum(int(r[8]) for r in kept) == 1
    assert early and early[0]["answer_ref"] == turn_ref("early")


async def test_a_redelivered_turn_counts_the_votes_its_answer_got_meanwhile(
    tmp_path: Path, database_url: str, handbook_kb
) -> None:
    """A first delivery posts its answer after writing its row, so nobody can have voted before
    it; a redelivered turn's answer may have been shown (and voted on, the vote missing its row
    being written): its record counts the votes in."""

    async def votes(chat) -> list[tuple[int, int]]:
        return [tuple(r) for r in await chat.recording.store.tables.fetch(f"SELECT up, down FROM {TABLE}")]

    async with open_chat_service(settings_for(tmp_path, database_url), kb=handbook_kb) as chat:
        assert chat.feedback is not None
        turn = Turn("slack", SESSION, "U1", "m1", text="How do I rotate my VPN password?")
        for attempt in (1, 2):
            token = current_delivery.set(Delivery("job-1", attempt=attempt, final=False))
            try:
                [answer] = await chat.handle(turn)
            finally:
                current_delivery.reset(token)
            assert answer.kind is ReplyKind.ANSWER
            if attempt == 1:  # a vote its row's counts missed (written while the row was)
                await chat.feedback.record(SESSION, turn_ref("m1"), "U2", 1)
                assert await votes(chat) == [(0, 0)]
        assert await votes(chat) == [(1, 0)]
