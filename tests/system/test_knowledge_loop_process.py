"""The knowledge loop in a real `threadsage run`, as operators start it: signed Slack events over
HTTP to the process, the fake Slack Web API, the offline answerer, Postgres and Redis, a synced
folder and a synced web site (`THREADSAGE_SOURCES`), the console over HTTP.

A question not covered, asked in two Slack channels (one of which may not read the `hr` documents)
and a Telegram group, and another not covered; a page added to the web site closes the first: one
follow-up in the original thread (Slack) or in reply to the original message (Telegram, long
polling the fake Bot API) where the place may read it, none where it may not; a page added to the folder closes the
other, held back by the place's hourly limit. A verified answer is reused for a paraphrase; its
page changed, the answers that cited it are stale in the console and the verified answer is no
longer given, then retired. The weekly digest (every minute here) is posted once per scheduled
time to a Slack channel and a Telegram group, also across a restart."""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import psycopg

from tests.fakes.sites import FakeSite
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers.deployment import drop_keys
from tests.helpers.served import Served, post_mention, serve
from tests.helpers.telegram_harness import ANN, GROUP, mention
from tests.helpers.telegram_harness import TOKEN as TELEGRAM_TOKEN

SECRET = "knowledge-loop-signing-secret"
TOKEN = "console-token-of-the-loop-test-4b1d"
KEEPERS = "C0KEEPERS"
TRAVEL = "# Travel\n\nFlights of six hours or more may be booked in business class. Shorter flights are economy.\n"
TRAVEL_2 = "# Travel\n\nFrom May on, flights of six hours or more are booked in economy class, like shorter ones.\n"
LEAVE = (
    "To request parental leave, send the parental leave form to the people team eight weeks before the "
    "leave starts. Parental leave lasts sixteen weeks."
)
SABBATICALS = "# Sabbaticals\n\nSabbaticals are approved by the head of the department, after five years of service.\n"
GAP = "How do I request parental leave?"
OTHER_GAP = "Who approves sabbaticals?"
COVERED = "Which class may I book for flights of six hours?"
PARAPHRASE = "Flights of six hours: which class may I book?"


class Bot:
    """The process, the fakes it talks to, and the test's ways of asking and looking."""

    def __init__(self, served: Served, slack: FakeSlack, http: aiohttp.ClientSession) -> None:
        self.served, self.slack, self.http = served, slack, http
        self.number = 0

    async def ask(self, text: str, channel: str = "C1", user: str = "U1") -> tuple[str, str]:
        """A mention in a new thread; its ts and the answer posted in that thread."""
        self.number += 1
        ts = f"1710000000.{self.number:06d}"
        assert await post_mention(self.http, self.served.url, SECRET, text, ts, channel=channel, user=user) == 200
        answer = await until(lambda: self.thread(ts), 30, f"an answer to {text!r}")
        return ts, answer[0]

    def thread(self, ts: str) -> list[str]:
        return [
            json.dumps(m.get("blocks", [])) + m.get("text", "") for m in self.slack.posted() if m.get("thread_ts") == ts
        ]

    def notes(self, ts: str) -> list[str]:
        return [m for m in self.thread(ts) if "now covered" in m]

    async def api(self, view: str) -> Any:
        async with self.http.get(f"{self.served.url}/console/api/{view}", headers=self._auth) as response:
            assert response.status == 200, await response.text()
            return await response.json()

    async def page(self, path: str) -> str:
        async with self.http.get(f"{self.served.url}{path}", headers=self._auth) as response:
            assert response.status == 200
            return await response.text()

    async def post(self, path: str, form: dict[str, str]) -> int:
        async with self.http.post(
            f"{self.served.url}{path}", data=form, headers=self._auth, allow_redirects=False
        ) as response:
            return response.status

    @property
    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {TOKEN}"}

    def digests(self) -> list[dict]:
        return [m for m in self.slack.posted() if (m.get("metadata") or {}).get("event_type") == "threadsage_digest"]


async def until(check: Callable[[], Any], seconds: float, what: str) -> Any:
    """Poll `check` (a function or a coroutine function) until it returns something truthy."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        await asyncio.sleep(0.2)
    raise AssertionError(f"no {what} within {seconds} s")


async def test_gaps_close_answers_go_stale_and_the_digest_is_posted_once_per_time(tmp_path: Path, pg_url: str) -> None:
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "travel.md").write_text(TRAVEL)
    site = FakeSite()
    site.page("/dental", "Dental cover", "Dental cover is part of the health plan from the first day.")
    sources = tmp_path / "sources.yaml"
    sources.write_text(
        "sources:\n"
        f"  - {{name: handbook, type: folder, path: {folder}, category: docs, every: 1h}}\n"
        f"  - {{name: people, type: web, url: {site.url}/sitemap.xml, category: hr, every: 2s, max_page_kb: 64}}\n"
    )
    slack = FakeSlack(channel_names={"handbook-keepers": KEEPERS}).start()
    telegram = await FakeBotAPI(TELEGRAM_TOKEN).start()
    telegram.chats[GROUP["id"]] = GROUP  # the bot is a member of the group before the test begins
    prefix = f"threadsage-test-{uuid.uuid4().hex[:8]}:"
    env = {
        "THREADSAGE_DATA_DIR": str(tmp_path / "data"),
        "THREADSAGE_LOG_FORMAT": "text",
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": slack.api_url,
        "TELEGRAM_BOT_TOKEN": TELEGRAM_TOKEN,
        "TELEGRAM_API_URL": telegram.url,
        "THREADSAGE_TELEGRAM_ALLOWED": "*",
        "THREADSAGE_SLACK_PROGRESS": "false",  # each answer one new message in its thread
        "DATABASE_URL": pg_url,
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "THREADSAGE_REDIS_PREFIX": prefix,
        "THREADSAGE_SOURCES": str(sources),
        "THREADSAGE_CHANNEL_CATEGORIES": json.dumps(
            {"C1": ["docs", "hr"], "C2": ["docs"], "C3": ["docs"], str(GROUP["id"]): ["docs", "hr"]}
        ),
        "THREADSAGE_GAP_FOLLOW_UPS_PER_HOUR": "1",
        "THREADSAGE_RATE_LIMIT_PER_MINUTE": "1000",
        "THREADSAGE_CONSOLE_TOKEN": TOKEN,
        "THREADSAGE_CONSOLE_URL": "https://bot.example.com/console",
        "THREADSAGE_DIGEST": f"#handbook-keepers,telegram:{GROUP['id']}",
        "THREADSAGE_DIGEST_SCHEDULE": "* * * * *",
    }
    started = time.time()
    served = serve(["run"], env, tmp_path)
    try:
        async with aiohttp.ClientSession() as http:
            await served.ready(http)
            bot = Bot(served, slack, http)
            # The first sync has read the folder once the covered question cites it (asked in C3: a
            # question asked before is a gap that closes with the sync, and takes its place's follow-up).
            await until(lambda: _cited(bot, COVERED, "travel.md"), 40, "answer citing travel.md")

            gap_ts, answer = await bot.ask(GAP)
            assert "leave form" not in answer
            unreadable_ts, _ = await bot.ask(GAP, channel="C2", user="U2")  # C2 may not read hr
            other_ts, _ = await bot.ask(OTHER_GAP)
            asked = telegram.say(GROUP, ANN, mention(GAP))
            await until(lambda: _replies(telegram, asked), 30, "the Telegram answer")
            gaps = await bot.api("gaps")
            assert {g["newest"]["question"] for g in gaps} >= {GAP, OTHER_GAP}

            # A verified answer, reused for a paraphrase.
            questions = await bot.page("/console/questions")
            form = re.search(r'name="session_key" value="([^"]+)".*?name="message_id" value="([^"]+)"', questions, re.S)
            assert form
            verify = {"session_key": form.group(1), "message_id": form.group(2), "by": "Ada"}
            assert await bot.post("/console/verify", verify) == 303
            _, reused = await bot.ask(PARAPHRASE)
            assert "Verified answer (by Ada" in reused and "business class" in reused

            # A page added to the web site closes the gap: one follow-up where the place may read it.
            site.page("/parental-leave", "Parental leave", LEAVE)
            closed = await until(lambda: _closed(bot, 3), 40, "three closed gaps")
            group = str(GROUP["id"])
            assert {(c["channel"], c["follow_up"]) for c in closed} == {
                ("C1", "sent"),
                ("C2", "scope"),
                (group, "sent"),
            }
            [note] = await until(lambda: bot.notes(gap_ts), 10, "follow-up")
            assert "eight weeks" in note and "Parental leave" in note
            assert bot.notes(unreadable_ts) == []
            [telegram_note] = await until(lambda: _notes(telegram, asked), 10, "the Telegram follow-up")
            assert "eight weeks" in telegram_note["text"]

            # A page added to the folder closes the other: C1 had its one follow-up this hour.
            (folder / "sabbaticals.md").write_text(SABBATICALS)
            closed = await until(lambda: _closed(bot, 4), 40, "the fourth closed gap")
            assert {c["question"]: c["follow_up"] for c in closed if c["channel"] == "C1"} == {
                GAP: "sent",
                OTHER_GAP: "limit",
            }
            assert bot.notes(other_ts) == [] and len(bot.notes(gap_ts)) == 1 and len(_notes(telegram, asked)) == 1

            # The cited page changed: its answers stale in the console, the verified answer no longer given.
            (folder / "travel.md").write_text(TRAVEL_2)
            [stale] = await until(lambda: bot.api("stale"), 40, "stale answers")
            assert stale["title"] == "Travel" and stale["answers"] >= 1
            # Marked after the answers (`KnowledgeLoop.changed`): read once it is, not at once.
            [kept] = await until(lambda: _verified_stale(bot), 40, "the verified answer stale")
            assert kept["stale_at"] is not None
            _, fresh = await bot.ask(PARAPHRASE)
            assert "Verified answer" not in fresh and "economy" in fresh
            assert await bot.post("/console/retire", {"id": kept["id"]}) == 303
            assert (await bot.api("verified"))[0]["retired_at"] is not None

            # The digest: once per time (every minute here), a restart within a minute posting nothing again.
            code, output = served.stop()
            assert code == 0 and "Traceback" not in output, output[-3000:]
            served = serve(["run"], env, tmp_path)
            await served.ready(http)
            boundary = (time.time() // 60 + 1) * 60
            await asyncio.sleep(boundary + 5 - time.time())  # one more time passes with the process up
            digests = bot.digests()
            slots = await _digest_slots(pg_url)
            assert len(digests) == len(slots) >= 2, (digests, slots)
            assert slots == list(range(slots[0], slots[0] + 60_000 * len(slots), 60_000))  # each minute once
            assert slots[0] <= started * 1000 + 60_000
            assert all(d["channel"] == KEEPERS for d in digests)
            in_group = [m for m in telegram.sent(GROUP["id"]) if m["text"].startswith("Weekly digest")]
            assert len(in_group) == len(slots)
            latest = json.dumps(digests[-1]["blocks"])
            assert "Gaps closed this week" in latest and "Parental leave" in latest and "Sabbaticals" in latest
            assert "Travel" in latest and "https://bot.example.com/console/gaps" in latest
        code, output = served.stop()
        assert code == 0 and "Traceback" not in output, output[-3000:]
    finally:
        if served.process.poll() is None:
            served.process.kill()
        slack.stop()
        await telegram.stop()
        await drop_keys(prefix)


async def _cited(bot: Bot, question: str, needle: str) -> bool:
    _, answer = await bot.ask(question, channel="C3", user="U3")
    return needle in answer


async def _verified_stale(bot: Bot) -> list[dict] | None:
    """The verified answers, once one of them is marked stale."""
    verified = await bot.api("verified")
    return verified if any(v["stale_at"] is not None for v in verified) else None


async def _closed(bot: Bot, count: int) -> list[dict] | None:
    """The gaps of this test's two questions closed, once `count` are (questions asked while the
    first sync ran may close too: not these)."""
    closed = [c for c in await bot.api("closed") if c["question"] in (GAP, OTHER_GAP)]
    return closed if len(closed) >= count and all(c["follow_up"] != "pending" for c in closed) else None


def _replies(telegram: FakeBotAPI, asked: dict) -> list[dict]:
    return [
        m
        for m in telegram.sent(GROUP["id"])
        if (m.get("reply_to_message") or {}).get("message_id") == asked["message_id"]
    ]


def _notes(telegram: FakeBotAPI, asked: dict) -> list[dict]:
    return [m for m in _replies(telegram, asked) if "now covered" in m["text"]]


async def _digest_slots(pg_url: str) -> list[int]:
    async with await psycopg.AsyncConnection.connect(pg_url) as conn:
        cursor = await conn.execute("SELECT slot, outcome FROM threadsage_digests ORDER BY slot")
        rows = await cursor.fetchall()
    expected = f"slack:#handbook-keepers sent, telegram:{GROUP['id']} sent"
    assert all(outcome == expected for _, outcome in rows), rows
    return [int(slot) for slot, _ in rows]
