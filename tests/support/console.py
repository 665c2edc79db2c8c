"""What the console tests share: the console's token, two questions, and a question asked and voted down."""

from __future__ import annotations

from tests.support.slack_harness import Harness, thread_messages

TOKEN = "console-test-password-4b1d"
TRAVEL = "Which cabin class may I book for a flight of 6 hours or more?"
GAP = "Can I bring my pet iguana to the office kitchen?"


async def ask_and_vote_down(slack: Harness, question: str) -> str:
    """A question asked by mention, its answer given a 👎: the thread's ts."""
    ts = await slack.mention(question)
    await slack.settle()
    [answer] = thread_messages(slack.fake, ts)
    await slack.click(answer, 1)  # the feedback block's 👎
    await slack.settle()
    return ts
