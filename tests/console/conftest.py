"""The console served by the Slack bot's own ASGI app (the Slack fake harness), with a token."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fakes.slack_api import FakeSlack
from tests.support.slack_harness import Harness, running, thread_messages

TOKEN = "console-test-password-4b1d"
TRAVEL = "Which cabin class may I book for a flight of 6 hours or more?"
GAP = "Can I bring my pet iguana to the office kitchen?"


@pytest.fixture
async def served(tmp_path: Path, handbook_kb) -> AsyncIterator[Harness]:
    fake = FakeSlack().start()
    async with running(tmp_path, handbook_kb, fake=fake, THREADSAGE_CONSOLE_TOKEN=TOKEN) as harness:
        yield harness
    fake.stop()


async def ask_and_vote_down(slack: Harness, question: str) -> str:
    """A question asked by mention, its answer given a 👎: the thread's ts."""
    ts = await slack.mention(question)
    await slack.settle()
    [answer] = thread_messages(slack.fake, ts)
    await slack.click(answer, 1)  # the feedback block's 👎
    await slack.settle()
    return ts
