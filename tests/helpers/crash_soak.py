"""Every worker killed, again and again, while turns are in flight — while the model is being
asked, then right after an answer is posted — and what became of each question: answered once,
lost, answered twice, or answered with nothing (an empty message or an apology). The soak behind
tests/system/test_crash_safety.py (a short run) and bench/crash_soak.py (a long one).

A round: post a few new questions; wait until the model is asked, SIGKILL every worker, start as
many again; wait until an answer is posted (the fake Slack keeps the worker waiting for its
response), SIGKILL them all again, start them again. The model takes between 0.4 and 1.4 s a call,
so the turns in flight are at different steps when the kills come. After the rounds the workers
are left alone until every question is answered, and a little longer, for a late second answer.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp

from tests.fakes.openai_server import DEFAULTS
from tests.helpers.deployment import SECRET, Stack
from tests.helpers.served import Served

QUESTIONS = [
    "What is the rate limit per API key?",
    "How many days of annual leave do employees get?",  # not "I": employees and contractors differ
    "Which cabin class may I book for a long flight?",
    "How do I rotate my VPN password?",
]
ANSWER = str(DEFAULTS["answer"]["answer"])  # what the fake model answers: an answer without it is blank


@dataclass
class Outcome:
    questions: int
    kills: int
    lost: int  # questions never answered
    doubled: int  # questions answered more than once
    empty: int  # answers without the model's answer (empty, or an apology)
    seconds: float

    def summary(self) -> str:
        return (
            f"{self.kills} workers killed, {self.questions} questions: lost/doubled/empty "
            f"{self.lost}/{self.doubled}/{self.empty} in {self.seconds:.0f} s"
        )


async def soak(
    stack: Stack, rounds: int, questions: int, workers: int = 2, progress: Callable[[str], object] = lambda _: None
) -> Outcome:
    """`questions` new questions a round, every worker killed twice a round; `progress` hears of
    each kill."""
    # A turn caught by several kills is no poison turn: never give it up here. A dead worker's
    # turns go to another after the shortest turn timeout allowed. One person asks everything.
    stack.env.update(
        THREADSAGE_TURN_MAX_TRIES="1000", THREADSAGE_TURN_TIMEOUT="5", THREADSAGE_RATE_LIMIT_PER_MINUTE="1000"
    )
    for kind in ("RouteDecision", "answer"):
        stack.llm.script[kind] = _sometimes_slower(DEFAULTS[kind])
    began = time.monotonic()
    roots: list[str] = []
    kills = 0
    async with aiohttp.ClientSession() as http:
        front = stack.start("serve")
        pool = [stack.start("worker") for _ in range(workers)]
        await stack.ready(http, front, *pool)
        for _ in range(rounds):
            asked = len(stack.llm.chat_kinds())
            for _ in range(questions):
                roots.append(f"{1710100000 + len(roots)}.000001")
                assert await front.mention(http, SECRET, QUESTIONS[len(roots) % len(QUESTIONS)], ts=roots[-1]) == 200
            await _happens(lambda asked=asked: len(stack.llm.chat_kinds()) > asked, 30)
            kills += _kill(pool)
            progress(f"{time.monotonic() - began:5.1f} s: {kills} killed while the model was asked")
            pool = await _started(stack, http, workers)
            posted = len(stack.slack.posted())
            stack.slack.hold["chat.postMessage"] = 60
            answered = await _happens(lambda posted=posted: len(stack.slack.posted()) > posted, 30)
            kills += _kill(pool)
            after = "after an answer was posted" if answered else "(no answer was posted)"
            progress(f"{time.monotonic() - began:5.1f} s: {kills} killed {after}")
            stack.slack.hold.clear()
            pool = await _started(stack, http, workers)
        await _happens(lambda: all(_replies(stack, root) for root in roots), 120)
        await asyncio.sleep(2 * float(stack.env["THREADSAGE_TURN_TIMEOUT"]))  # a second answer would come by now
    answers = [_replies(stack, root) for root in roots]
    return Outcome(
        questions=len(roots),
        kills=kills,
        lost=sum(1 for replies in answers if not replies),
        doubled=sum(1 for replies in answers if len(replies) > 1),
        empty=sum(1 for replies in answers for reply in replies if ANSWER not in reply.get("text", "")),
        seconds=time.monotonic() - began,
    )


def _sometimes_slower(value: object) -> Callable[[dict], object]:
    """The fake model's reply, after up to a second more than its latency."""

    def reply(_request: dict) -> object:
        time.sleep(random.uniform(0, 1.0))
        return value

    return reply


def _replies(stack: Stack, root: str) -> list[dict]:
    return [message for message in stack.slack.posted() if message.get("thread_ts") == root]


def _kill(pool: list[Served]) -> int:
    for served in pool:
        served.process.kill()
    for served in pool:
        served.process.wait(timeout=30)
    return len(pool)


async def _started(stack: Stack, http: aiohttp.ClientSession, workers: int) -> list[Served]:
    pool = [stack.start("worker") for _ in range(workers)]
    await stack.ready(http, *pool)
    return pool


async def _happens(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True
