"""`threadsage run` as operators start it — a real process, Slack over HTTP (fake Slack and model
servers), `THREADSAGE_SOURCES` naming a watched folder: a file saved while it runs is cited in
answers to signed Slack events within 10 s, and the process still stops cleanly."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiohttp
import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_api import FakeSlack
from tests.helpers.served import Served, serve, slack_with_model

pytestmark = pytest.mark.timed  # a saved file answered from within 10 s

SECRET = "sync-process-signing-secret"


def answer_in(slack: FakeSlack, ts: str) -> str:
    """What the bot posted in the thread of the mention `ts` ("" before it answers)."""
    return " ".join(str(m.get("blocks") or m.get("text")) for m in slack.posted() if m.get("thread_ts") == ts)


class Asker:
    """Mentions the bot, one new Slack thread per question, until an answer cites `needle`. Each
    question in a channel of its own: the answers come faster than Slack's one post a second in a
    channel, which the bot keeps (`bots/slack/limits.py`), and this test is about the sync's pace."""

    def __init__(self, served: Served, slack: FakeSlack, http: aiohttp.ClientSession) -> None:
        self.served, self.slack, self.http, self.number = served, slack, http, 0

    async def until_cited(self, question: str, needle: str, seconds: float) -> float:
        started = time.monotonic()
        answer = ""
        while time.monotonic() - started < seconds:
            self.number += 1
            ts = f"1710000000.{self.number:06d}"
            channel = f"C{self.number}"
            assert await self.served.mention(self.http, SECRET, question, ts=ts, channel=channel) == 200
            for _ in range(int(seconds * 10)):  # polls the fake's record of posted messages
                if (answer := answer_in(self.slack, ts)) or time.monotonic() - started > seconds:
                    break
                await asyncio.sleep(0.1)
            if needle in answer:
                return time.monotonic() - started
        raise AssertionError(f"{needle} not cited within {seconds} s; last answer: {answer}")


async def test_a_file_saved_beside_a_running_process_is_answered_from_within_10_s(tmp_path: Path) -> None:
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "travel.md").write_text("# Travel\nTrains are booked through the travel desk.\n")
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n  - {{name: handbook, type: folder, path: {folder}, every: 1h}}\n")
    slack, llm = FakeSlack().start(), FakeOpenAI().start()
    env = {
        **slack_with_model(tmp_path / "data", slack, llm, SECRET),
        "THREADSAGE_SOURCES": str(sources),
        "THREADSAGE_SLACK_PROGRESS": "false",  # each answer is one new message in the thread
        "THREADSAGE_RATE_LIMIT_PER_MINUTE": "1000",  # the test asks again and again while it waits
    }
    served = serve(["run"], env, tmp_path)
    try:
        async with aiohttp.ClientSession() as http:
            await served.ready(http)
            asker = Asker(served, slack, http)
            await asker.until_cited("How are trains booked?", "travel.md", 30)  # the first sync is done
            (folder / "bicycle-cage.md").write_text("# Bikes\nThe bicycle cage code is given out by porter Ignatius.\n")
            seconds = await asker.until_cited("Who gives out the bicycle cage code?", "bicycle-cage.md", 10)
            assert seconds < 10
        code, output = served.stop()
        assert code == 0 and "Traceback" not in output, output[-3000:]
        assert "live sync of 1 sources: handbook" in output
    finally:
        if served.process.poll() is None:
            served.process.kill()
        slack.stop()
        llm.stop()
