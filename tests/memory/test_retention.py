"""Checkpoint retention on real conversations (the offline back-end on the demo handbook),
checkpointed in SQLite and in a real Postgres; the counts are checked against the tables."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.helpers.locations import HANDBOOK
from threadsage.app.retention import parse_age, prune, prune_periodically
from threadsage.app.runtime import open_chat_service
from threadsage.chat import ChatService, ClarificationAnswer, Reply, ReplyKind, Turn
from threadsage.memory.pruning.base import PruneReport
from threadsage.memory.pruning.postgres import PostgresPruner
from threadsage.memory.pruning.sqlite import SQLitePruner
from threadsage.memory.sessions import thread_id
from threadsage.settings.environment import Settings

AMBIGUOUS = "How do I reset my password?"
RATE_LIMIT = "What is the rate limit per API key for the Tidewater API?"
FOLLOW_UP = "and what happens when it is exceeded?"
MONTH = timedelta(days=30)


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str:
    return "" if request.param == "sqlite" else request.getfixturevalue("pg_url")


def settings_for(tmp_path: Path, database_url: str, **values) -> Settings:
    return Settings(
        THREADSAGE_DATA_DIR=tmp_path / "data",
        DATABASE_URL=database_url or None,
        OPENAI_API_KEY=None,
        _env_file=None,
        **values,
    )


class Session:
    def __init__(self, chat: ChatService, key: str, user: str) -> None:
        self.chat, self.key, self.user, self.n = chat, key, user, 0
        self.thread = thread_id(key)

    async def say(self, text: str) -> Reply:
        self.n += 1
        [reply] = await self.chat.handle(Turn("test", self.key, self.user, f"m{self.n}", text=text))
        return reply

    async def click(self, interrupt_id: str, option: int) -> Reply:
        self.n += 1
        [reply] = await self.chat.handle(
            Turn("test", self.key, self.user, f"c{self.n}", answer=ClarificationAnswer(interrupt_id, option))
        )
        return reply

    async def state(self):
        return await self.chat.graph.aget_state({"configurable": {"thread_id": self.thread}})


# --- reading the tables directly -----------------------------------------------------------


async def query(checkpointer, sql: str, params: tuple = ()) -> list[tuple]:
    conn = checkpointer.conn
    if type(conn).__module__.startswith("aiosqlite"):
        async with conn.execute(sql.replace("%s", "?"), params) as cursor:
            return [tuple(row) for row in await cursor.fetchall()]
    async with conn.connection() as pooled:
        cursor = await pooled.execute(sql, params)
        return [tuple(row.values()) for row in await cursor.fetchall()]


async def thread_tables(checkpointer) -> list[str]:
    """Every table with a thread_id column: whatever the saver keeps, not a list of ours."""
    if type(checkpointer.conn).__module__.startswith("aiosqlite"):
        tables = [name for (name,) in await query(checkpointer, "SELECT name FROM sqlite_master WHERE type = 'table'")]
        return [
            t
            for t in tables
            if any(col[1] == "thread_id" for col in await query(checkpointer, f"PRAGMA table_info({t})"))
        ]
    rows = await query(
        checkpointer,
        "SELECT table_name FROM information_schema.columns"
        " WHERE column_name = 'thread_id' AND table_schema = current_schema()",
    )
    return sorted(name for (name,) in rows)


async def row_counts(checkpointer) -> dict[str, Counter]:
    """Rows per thread, per table."""
    return {
        table: Counter(dict(await query(checkpointer, f"SELECT thread_id, COUNT(*) FROM {table} GROUP BY thread_id")))
        for table in await thread_tables(checkpointer)
    }


def removed(before: dict[str, Counter], after: dict[str, Counter]) -> dict[str, int]:
    names = {
        "checkpoints": "checkpoints",
        "writes": "writes",
        "checkpoint_writes": "writes",
        "checkpoint_blobs": "blobs",
    }
    return {names[t]: before[t].total() - after[t].total() for t in before}


def counts_of(report: PruneReport) -> dict[str, int]:
    counts = {"checkpoints": report.checkpoints_deleted, "writes": report.writes_deleted}
    if report.backend == "postgres":
        counts["blobs"] = report.blobs_deleted
    return counts


# --- the tests ----------------------------------------------------------------------------


async def test_prune_deletes_abandoned_threads_and_keeps_the_latest_checkpoint_of_live_ones(
    tmp_path: Path, database_url: str, handbook_kb
) -> None:
    async with open_chat_service(settings_for(tmp_path, database_url), kb=handbook_kb) as chat:
        saver = chat.graph.checkpointer
        old_answered, old_paused = Session(chat, "test:ws:c:old-1", "U1"), Session(chat, "test:ws:c:old-2", "U2")
        assert (await old_answered.say(RATE_LIMIT)).kind is ReplyKind.ANSWER
        assert (await old_answered.say(FOLLOW_UP)).kind is ReplyKind.ANSWER
        assert (await old_paused.say(AMBIGUOUS)).kind is ReplyKind.CLARIFICATION
        await asyncio.sleep(0.05)
        boundary = datetime.now(UTC)  # 30 days after this, the two above are abandoned
        await asyncio.sleep(0.05)
        answered, paused = Session(chat, "test:ws:c:live-1", "U3"), Session(chat, "test:ws:c:live-2", "U4")
        assert (await answered.say(RATE_LIMIT)).kind is ReplyKind.ANSWER
        assert (
            await paused.say("Which cabin class may I book for a flight of 6 hours or more?")
        ).kind is ReplyKind.ANSWER
        ask = await paused.say(AMBIGUOUS)
        assert ask.kind is ReplyKind.CLARIFICATION

        before = await row_counts(saver)
        tables = set(before)
        assert {"checkpoints"} < tables and len(tables) == (2 if database_url == "" else 3), tables
        for session in (old_answered, old_paused):
            assert before["checkpoints"][session.thread] >= 1
        for session in (answered, paused):
            assert before["checkpoints"][session.thread] >= 2  # one a step: pruning keeps the latest
        states = {s.thread: await s.state() for s in (answered, paused)}
        assert states[paused.thread].interrupts  # the pending clarification

        now = boundary + MONTH
        dry = await prune(saver, MONTH, now=now, dry_run=True)
        assert await row_counts(saver) == before  # nothing deleted
        report = await prune(saver, MONTH, now=now)
        after = await row_counts(saver)

        assert report.threads_deleted == 2 and report.threads_kept == 2 and report.threads_skipped == 0
        assert set(report.deleted_thread_ids) == {old_answered.thread, old_paused.thread}
        assert counts_of(report) == removed(before, after)  # the report is what left the tables
        assert {**asdict(dry), "dry_run": False} == asdict(report)
        assert "would delete 2 abandoned threads" in dry.summary()
        assert report.summary().startswith(f"deleted 2 abandoned threads and {report.checkpoints_deleted} checkpoints")
        if database_url:
            assert report.blobs_deleted > 0 and "blobs" in report.summary()

        # abandoned: not a row left in any table, and no state
        for session in (old_answered, old_paused):
            assert all(after[table][session.thread] == 0 for table in tables)
            snapshot = await session.state()
            assert snapshot.values == {} and not snapshot.interrupts
        # live: only the latest checkpoint, with its writes and blobs, and the very same state
        for session in (answered, paused):
            assert after["checkpoints"][session.thread] == 1
            snapshot = await session.state()
            old = states[session.thread]
            assert snapshot.config == old.config and snapshot.values == old.values
            assert snapshot.next == old.next and snapshot.interrupts == old.interrupts
            assert snapshot.created_at == old.created_at  # idle expiry still sees the same age
            head = snapshot.config["configurable"]["checkpoint_id"]
            writes = "writes" if database_url == "" else "checkpoint_writes"
            assert {
                i
                for (i,) in await query(
                    saver, f"SELECT DISTINCT checkpoint_id FROM {writes} WHERE thread_id = %s", (session.thread,)
                )
            } <= {head}
            if database_url:
                tuple_ = await saver.aget_tuple(snapshot.config)
                blobs = await query(
                    saver, "SELECT channel, version FROM checkpoint_blobs WHERE thread_id = %s", (session.thread,)
                )
                assert set(blobs) <= set(tuple_.checkpoint["channel_versions"].items())
                assert before["checkpoint_blobs"][session.thread] > len(blobs) > 0
        assert await saver.aget_tuple(states[paused.thread].config) is not None
        assert (await saver.aget_tuple(states[paused.thread].config)).pending_writes  # the interrupt

        # a second prune finds nothing to do
        again = await prune(saver, MONTH, now=now)
        assert (again.threads_deleted, again.checkpoints_deleted, again.writes_deleted, again.blobs_deleted) == (
            0,
            0,
            0,
            0,
        )
        assert again.threads_kept == 2 and await row_counts(saver) == after

        # the paused clarification resumes, and the answered thread remembers its topic
        vpn = next(i for i, choice in enumerate(ask.choices) if "VPN" in choice.label)
        resumed = await paused.click(ask.interrupt_id[:12], vpn)
        assert resumed.kind is ReplyKind.ANSWER and resumed.citations[0]["path"] == "it/vpn.md"
        follow = await answered.say(FOLLOW_UP)
        assert "Tidewater API" in follow.trace[0]["detail"]
        assert follow.citations[0]["path"] == "engineering/api-style-guide.md"
        # an abandoned session starts afresh
        fresh = await old_answered.say(FOLLOW_UP)
        assert fresh.trace[0]["detail"] == "first question"


async def test_a_live_thread_is_pruned_again_after_more_turns(tmp_path: Path, database_url: str, handbook_kb) -> None:
    async with open_chat_service(settings_for(tmp_path, database_url), kb=handbook_kb) as chat:
        saver = chat.graph.checkpointer
        talk = Session(chat, "test:ws:c:t", "U1")
        await talk.say(RATE_LIMIT)
        first = await prune(saver, timedelta(minutes=1))
        assert first.threads_kept == 1 and first.threads_deleted == 0 and first.checkpoints_deleted > 0
        await talk.say(FOLLOW_UP)
        before = await row_counts(saver)
        second = await prune(saver, timedelta(minutes=1))
        assert counts_of(second) == removed(before, await row_counts(saver))
        assert second.checkpoints_deleted == before["checkpoints"][talk.thread] - 1
        assert "Tidewater API" in (await talk.say("and how do I get a higher one?")).trace[0]["detail"]
        everything = await prune(saver, timedelta(minutes=1), now=datetime.now(UTC) + timedelta(minutes=2))
        assert everything.threads_deleted == 1 and all(c.total() == 0 for c in (await row_counts(saver)).values())


async def test_a_turn_during_pruning_is_kept(tmp_path: Path, database_url: str, handbook_kb) -> None:
    """Pruning goes by the checkpoints it saw: a turn that runs meanwhile keeps everything it
    writes, and a thread judged abandoned that comes back before its deletion is spared."""
    async with open_chat_service(settings_for(tmp_path, database_url), kb=handbook_kb) as chat:
        saver = chat.graph.checkpointer
        talk = Session(chat, "test:ws:c:busy", "U1")
        await talk.say(RATE_LIMIT)
        for question in (FOLLOW_UP, "and how do I get a higher one?"):
            reply, report = await asyncio.gather(talk.say(question), prune(saver, MONTH))
            assert reply.kind is ReplyKind.ANSWER and report.threads_kept == 1 and report.threads_skipped == 0
        assert "Tidewater API" in (await talk.say("and is it per minute?")).trace[0]["detail"]
        messages = (await talk.state()).values["messages"]
        assert len(messages) == 8  # four questions, four answers

        backend = SQLitePruner(saver) if database_url == "" else PostgresPruner(saver)
        async with backend.session():
            heads = await backend.heads()  # as if judged abandoned from these...
            await talk.say("and per user?")  # ...and then the thread comes back
            report = PruneReport(backend.name)
            await backend.delete_thread(talk.thread, heads[talk.thread], report, dry_run=False)
        assert report.threads_deleted == 0 and report.threads_kept == 1 and report.checkpoints_deleted == 0
        assert len((await talk.state()).values["messages"]) == 10


async def test_nothing_to_prune_and_bad_ages(tmp_path: Path, database_url: str) -> None:
    async with open_checkpointer_for(tmp_path, database_url) as saver:
        report = await prune(saver, MONTH)
        assert asdict(report) == asdict(PruneReport(backend="postgres" if database_url else "sqlite"))
        assert report.summary().startswith("deleted 0 abandoned threads and 0 checkpoints, 0 writes")
        with pytest.raises(ValueError, match="must be positive"):
            await prune(saver, timedelta(0))


def open_checkpointer_for(tmp_path: Path, database_url: str):
    from threadsage.memory.checkpoints import open_checkpointer

    return open_checkpointer(settings_for(tmp_path, database_url))


async def test_periodic_pruning(tmp_path: Path, handbook_kb) -> None:
    off = settings_for(tmp_path, "")
    assert off.prune_older_than_days == 0 and off.prune_every_hours == 24
    async with open_chat_service(off, kb=handbook_kb) as chat:
        saver = chat.graph.checkpointer
        await asyncio.wait_for(prune_periodically(saver, off, asyncio.Event()), 1)  # off: returns at once
        talk = Session(chat, "test:ws:c:periodic", "U1")
        await talk.say(RATE_LIMIT)
        await asyncio.sleep(0.2)
        tiny = settings_for(tmp_path, "", THREADSAGE_PRUNE_OLDER_THAN_DAYS=0.1 / 86400, THREADSAGE_PRUNE_EVERY_HOURS=1)
        stop = asyncio.Event()
        task = asyncio.create_task(prune_periodically(saver, tiny, stop))
        for _ in range(100):
            if (await row_counts(saver))["checkpoints"][talk.thread] == 0:
                break
            await asyncio.sleep(0.05)
        assert (await row_counts(saver))["checkpoints"][talk.thread] == 0
        assert not task.done()  # waiting for its next tick
        stop.set()
        await asyncio.wait_for(task, 2)


# --- the command ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "age"),
    [
        ("30d", timedelta(days=30)),
        ("12h", timedelta(hours=12)),
        ("90m", timedelta(minutes=90)),
        (" 7d ", timedelta(days=7)),
    ],
)
def test_ages_that_parse(text: str, age: timedelta) -> None:
    assert parse_age(text) == age


@pytest.mark.parametrize("text", ["30", "30s", "2w", "0d", "-1d", "1.5d", "d", "30 days", ""])
def test_ages_that_do_not(cli, text: str) -> None:
    with pytest.raises(ValueError, match="expected a whole number of days, hours or minutes"):
        parse_age(text)
    result = cli("prune", "--older-than", text)
    assert result.exit_code == 2
    assert "error: --older-than: expected a whole number of days, hours or minutes" in result.stderr
    assert result.stdout == ""


def test_the_prune_command(cli) -> None:
    assert cli("prune").exit_code == 2  # --older-than is required
    empty = cli("prune", "--older-than", "30d")
    assert empty.exit_code == 0, empty.output
    assert (
        empty.stdout.strip()
        == "deleted 0 abandoned threads and 0 checkpoints, 0 writes; kept 0 live threads at the latest checkpoint"
    )
    chatted = cli("chat", "--demo", str(HANDBOOK), "--session", "team", stdin="What is the hotel limit?\n2\n")
    assert chatted.exit_code == 0, chatted.output
    dry = cli("prune", "--older-than", "12h", "--dry-run")
    assert dry.exit_code == 0, dry.output
    match = re.search(
        r"^would delete 0 abandoned threads and (\d+) checkpoints, (\d+) writes; kept 1 live thread", dry.stdout
    )
    assert match and int(match.group(1)) > 0, dry.stdout
    assert "(dry run: nothing deleted)" in dry.stdout
    real = cli("prune", "--older-than", "90m")
    assert real.stdout.startswith(
        f"deleted 0 abandoned threads and {match.group(1)} checkpoints, {match.group(2)} writes"
    )
    again = cli("prune", "--older-than", "30d")
    assert again.stdout.startswith("deleted 0 abandoned threads and 0 checkpoints, 0 writes; kept 1 live thread")
    resumed = cli("chat", "--session", "team", stdin="and for a conference?\n")
    assert resumed.exit_code == 0 and "went wrong" not in resumed.stdout
