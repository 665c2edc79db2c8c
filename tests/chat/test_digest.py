"""The weekly digest on real Postgres and Redis, posted to the fake Slack Web API (and the fake
Telegram Bot API) over HTTP, the clock given: once per scheduled time however many processes run
the schedule and however often they restart; a time missed while down posted at start within a
day, else skipped; what the week was, short, linked to the console."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers.deployment import drop_keys
from tests.helpers.recorded import turn_row, write_turns
from threadsage.bots.slack.announcer import SlackAnnouncer
from threadsage.bots.telegram import TelegramBot
from threadsage.bots.telegram.announcer import TelegramAnnouncer
from threadsage.chat.digest import Digest, Schedule, Target
from threadsage.delivery.redis_coordination import RedisCoordinator
from threadsage.memory.checkpoints import open_checkpointer
from threadsage.records.digest import DigestRecords
from threadsage.records.knowledge import KnowledgeRecords
from threadsage.records.tables import Tables
from threadsage.records.turns import QuestionStore
from threadsage.records.votes import FeedbackStore
from threadsage.settings.environment import Settings

REDIS_URL = "redis://127.0.0.1:6379/0"
CONSOLE = "https://bot.example.com/console"
MONDAY_9 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC).timestamp()  # a time of "0 9 * * MON"
DAY = 86_400.0
KEEPERS = "C0KEEPERS"


@pytest.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    slack = FakeSlack(channel_names={"handbook-keepers": KEEPERS}).start()
    yield slack
    slack.stop()


@pytest.fixture
async def prefix() -> AsyncIterator[str]:
    prefix = f"threadsage-test-{uuid.uuid4().hex[:8]}:"
    yield prefix
    await drop_keys(prefix)


class Processes:
    """Processes of one deployment, each with its own connections to Postgres and Redis."""

    def __init__(self, stack: AsyncExitStack, settings: Settings, slack: FakeSlack, prefix: str) -> None:
        self.stack, self.settings, self.slack, self.prefix = stack, settings, slack, prefix

    async def start(self) -> Digest:
        saver = await self.stack.enter_async_context(open_checkpointer(self.settings))
        records = DigestRecords(saver)
        await records.setup()
        redis = Redis.from_url(REDIS_URL)
        self.stack.push_async_callback(redis.aclose)
        digest = Digest.from_settings(
            self.settings, self.settings.timezone, records, RedisCoordinator(redis, prefix=self.prefix)
        )
        client = AsyncWebClient(token="xoxb-test", base_url=self.slack.api_url)
        digest.announcers["slack"] = SlackAnnouncer(client)
        return digest

    def digests(self) -> list[dict]:
        return [m for m in self.slack.posted() if (m.get("metadata") or {}).get("event_type") == "threadsage_digest"]


@asynccontextmanager
async def deployment(
    tmp_path: Path, pg_url: str, slack: FakeSlack, prefix: str, **env: Any
) -> AsyncIterator[Processes]:
    env = {"THREADSAGE_DIGEST": "#handbook-keepers", "THREADSAGE_CONSOLE_URL": CONSOLE + "/", **env}
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path, DATABASE_URL=pg_url, _env_file=None, **env)
    async with AsyncExitStack() as stack:
        saver = await stack.enter_async_context(open_checkpointer(settings))
        await FeedbackStore(saver).setup()
        await QuestionStore(saver, knowledge=KnowledgeRecords(saver)).setup()
        yield Processes(stack, settings, slack, prefix)


async def test_one_digest_per_scheduled_time_across_processes_and_restarts(
    tmp_path: Path, pg_url: str, fake_slack: FakeSlack, prefix: str
) -> None:
    async with deployment(tmp_path, pg_url, fake_slack, prefix) as processes:
        three = [await processes.start() for _ in range(3)]
        outcomes = await asyncio.gather(*(d.due(MONDAY_9 + 5) for d in three))
        assert sorted(map(str, outcomes)) == ["None", "None", "slack:#handbook-keepers sent"]
        [posted] = processes.digests()
        assert posted["channel"] == KEEPERS  # posted by name, as Slack resolves it

        restarted = await processes.start()
        assert await restarted.due(MONDAY_9 + 60) is None  # the same slot, a minute later
        assert await restarted.due(MONDAY_9 + 6 * DAY) is None  # before the next one
        assert len(processes.digests()) == 1

        again = [await processes.start() for _ in range(2)]
        await asyncio.gather(*(d.due(MONDAY_9 + 7 * DAY + 1) for d in [*again, restarted]))
        assert len(processes.digests()) == 2
        history = await restarted.records.history()
        assert [slot for slot, _, _ in history] == [int((MONDAY_9 + 7 * DAY) * 1000), int(MONDAY_9 * 1000)]
        assert {outcome for _, _, outcome in history} == {"slack:#handbook-keepers sent"}


async def test_a_time_missed_while_down_is_posted_at_start_within_a_day_and_skipped_after(
    tmp_path: Path, pg_url: str, fake_slack: FakeSlack, prefix: str
) -> None:
    async with deployment(tmp_path, pg_url, fake_slack, prefix) as processes:
        late = await processes.start()
        assert await late.due(MONDAY_9 + 3 * 3600) == "slack:#handbook-keepers sent"  # up again three hours late
        much_later = await processes.start()
        assert await much_later.due(MONDAY_9 + 7 * DAY + 2 * DAY) is None  # down over the next Monday and a day
        assert len(processes.digests()) == 1


async def test_the_run_sleeps_until_the_next_time_and_posts_it(
    tmp_path: Path, pg_url: str, fake_slack: FakeSlack, prefix: str
) -> None:
    """`run` with a clock that a test moves: the first wake is at the next scheduled time."""
    async with deployment(tmp_path, pg_url, fake_slack, prefix, THREADSAGE_DIGEST_SCHEDULE="* * * * *") as processes:
        digest = await processes.start()
        now = [MONDAY_9 + 59.5]  # half a second before 9:01
        stop = asyncio.Event()
        running = asyncio.create_task(digest.run(stop, clock=lambda: now[0]))
        await fake_slack.wait_for("chat.postMessage", 1, timeout=10)  # 9:00 at start: under a day late
        now[0] += 1.0  # the sleep of ~0.5 s ends at 9:01:00.5 by the clock
        await fake_slack.wait_for("chat.postMessage", 2, timeout=10)
        stop.set()
        await running
        assert len(processes.digests()) == 2


async def test_the_digest_says_what_the_week_was_short_and_linked_to_the_console(
    tmp_path: Path, pg_url: str, fake_slack: FakeSlack, prefix: str
) -> None:
    async with deployment(tmp_path, pg_url, fake_slack, prefix) as processes:
        digest = await processes.start()
        saver = await processes.stack.enter_async_context(open_checkpointer(processes.settings))
        tables, knowledge = Tables(saver), KnowledgeRecords(saver)
        week = MONDAY_9 - 3 * DAY
        closest = json.dumps({"title": "Benefits", "path": "hr/benefits.md", "score": 0.4})
        rows = [
            *(turn_row(week + i, "How many days of leave do I get?") for i in range(3)),
            turn_row(week, "Where is the [printer](https://evil.example)?"),
            turn_row(week, "How do I request parental leave?", "not_covered", closest=closest),
            turn_row(week + 1, "How do I request parental leave?", "not_covered", closest=closest),
            turn_row(week, "Who approves sabbaticals?", "not_covered"),
            turn_row(week, "What is the VPN address?", down=1, gap=1),
            turn_row(week, "What is the VPN port?", down=1, gap=1),
            turn_row(week - 7 * DAY, "How do I book travel?", down=1, gap=1),  # the week before
            turn_row(week - 20 * DAY, "Who runs payroll?", "not_covered"),  # an open gap from before the week
            turn_row(week - 40 * DAY, "Where do old questions go?", "not_covered"),  # outside the 30-day window
        ]
        await write_turns(tables, [*rows, turn_row(week, "Which office grants sabbaticals?", "not_covered")])
        [gap] = [g for g in await knowledge.open_gaps(0) if g.question == "Which office grants sabbaticals?"]
        at = int(week * 1000)
        await knowledge.close(gap, at, {"doc_id": "d1", "title": "Sabbaticals", "path": "hr/sabbaticals.md"}, "", [])
        for key, message, user in [("s1", "m1", "U1"), ("s2", "m2", "U2")]:
            await knowledge.cited(key, message, at - 1, user, [{"doc": "d2", "title": "Travel", "version": "aaaa"}])
        await knowledge.went_stale("d2", "bbbb", "changed to version bbbb", at)

        assert await digest.due(MONDAY_9) == "slack:#handbook-keepers sent"
        [posted] = processes.digests()
        text = "\n".join(block["text"]["text"] for block in posted["blocks"])
        assert "How many days of leave do I get? — 3×" in text
        assert "How do I request parental leave? — 2×; closest: Benefits (hr/benefits.md)" in text
        assert "Who approves sabbaticals? — 1×; no document comes close" in text
        assert "Who runs payroll?" in text and "old questions" not in text  # the gap window, not the week
        assert "Sabbaticals (hr/sabbaticals.md) — 1 question(s)" in text
        assert "Which office grants" not in text  # closed: no longer an open gap
        assert "Travel, changed to version bbbb — 2 answer(s) seen by 2" in text
        assert "👎 2 (more than the week before: 1)" in text and "What is the VPN port? — 1👎" in text
        assert f"<{CONSOLE}/gaps|gaps>" in text and f"<{CONSOLE}|console>" in text
        assert "<https://evil.example" not in text  # what people wrote stays words: no link of theirs
        assert len(text) < 3000  # short: one Block Kit section


async def test_the_digest_goes_to_a_telegram_chat_too(
    tmp_path: Path, pg_url: str, fake_slack: FakeSlack, prefix: str, fake: FakeBotAPI, bot: TelegramBot
) -> None:
    group = {"id": -1001234567890, "type": "supergroup", "title": "Handbook keepers"}
    fake.chats[group["id"]] = group
    async with deployment(
        tmp_path, pg_url, fake_slack, prefix, THREADSAGE_DIGEST=f"#handbook-keepers,telegram:{group['id']}"
    ) as processes:
        digest = await processes.start()
        digest.announcers["telegram"] = TelegramAnnouncer(bot.send)
        outcome = await digest.due(MONDAY_9)
        assert outcome == f"slack:#handbook-keepers sent, telegram:{group['id']} sent"
        [message] = fake.sent(group["id"])
        assert message["text"].startswith("Weekly digest")
        assert len(processes.digests()) == 1


async def test_a_place_it_cannot_post_to_is_told_and_the_slot_stays_done(
    tmp_path: Path, pg_url: str, fake_slack: FakeSlack, prefix: str
) -> None:
    async with deployment(tmp_path, pg_url, fake_slack, prefix, THREADSAGE_DIGEST="#nowhere,telegram:-5") as processes:
        digest = await processes.start()
        assert await digest.due(MONDAY_9) == "slack:#nowhere failed, telegram:-5 no_bot"
        assert await digest.due(MONDAY_9 + 60) is None
        assert [m for m, _ in fake_slack.calls if m == "chat.postMessage#channel_not_found"]


def test_targets_and_schedule() -> None:
    assert Target.parse("#keepers") == Target("slack", "#keepers")
    assert Target.parse("C0123ABC") == Target("slack", "C0123ABC")
    assert Target.parse("slack:#keepers") == Target("slack", "#keepers")
    assert Target.parse("telegram:-1001234") == Target("telegram", "-1001234")
    assert Target.parse("-1001234") == Target("telegram", "-1001234")
    lisbon = Schedule("0 9 * * MON", "Europe/Lisbon")
    summer = datetime(2026, 7, 6, 8, 0, tzinfo=UTC).timestamp()  # 9:00 in Lisbon (UTC+1), a Monday
    assert lisbon.latest(summer).timestamp() == summer
    assert lisbon.latest(summer - 1).timestamp() == summer - 7 * DAY
    assert lisbon.following(summer).timestamp() == summer + 7 * DAY
    with pytest.raises(ValueError, match="not a cron schedule"):
        Settings(THREADSAGE_DIGEST_SCHEDULE="0 9 * * FUNDAY", _env_file=None)
    with pytest.raises(ValueError, match="no Telegram chat id"):
        Settings(THREADSAGE_DIGEST="telegram:@keepers", _env_file=None)
