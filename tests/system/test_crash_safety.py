"""Processes stopped or killed with turns in flight, as operators and crashes stop them: real
`threadsage` processes, Redis and Postgres, a fake Slack and a slow fake model over HTTP.

- SIGTERM: no new work is taken (/readyz 503, deliveries refused for Slack to retry), the turn in
  flight is answered once, and the process exits 0 within the grace period — HTTP going last;
- a worker loop stopped with a turn running past the grace period hands it back to the queue,
  and another worker answers it;
- `threadsage run` with REDIS_URL killed with SIGKILL mid-turn answers the turn once restarted;
- workers killed again and again mid-turn lose, double and blank no answer (tests/helpers/crash_soak.py).
"""

from __future__ import annotations

import asyncio
import signal
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import aiohttp

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_api import FakeSlack
from tests.helpers.crash_soak import soak
from tests.helpers.deployment import QUESTION, SECRET, Stack, drop_keys
from tests.helpers.locations import HANDBOOK
from tests.helpers.served import Served, serve, slack_with_model
from threadsage.delivery.jobs import Job
from threadsage.delivery.queue import TurnQueue
from threadsage.settings.environment import Settings

GRACE = 30  # seconds a stopping process gives the turns in flight


async def until(condition: Callable[[], object], timeout: float = 60, what: Callable[[], str] = lambda: "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what()
        await asyncio.sleep(0.02)


async def status(http: aiohttp.ClientSession, url: str) -> int:
    async with http.get(url) as response:
        return response.status


async def exits(served: Served, timeout: float) -> tuple[int, str, float]:
    """Wait for the process to exit: its code, what it printed, and how long it took."""
    began = time.monotonic()
    output, _ = await asyncio.to_thread(served.process.communicate, timeout=timeout)
    return served.process.returncode, output, time.monotonic() - began


async def test_sigterm_stops_run_in_order_and_its_turn_in_flight_is_answered(tmp_path: Path) -> None:
    slack = FakeSlack().start()
    llm = FakeOpenAI(latency=1.5).start()
    env = {
        **slack_with_model(tmp_path / "data", slack, llm, SECRET),
        "THREADSAGE_SLACK_PROGRESS": "false",  # the answer is one new message, read from the posts
    }
    served = serve(["run", "--demo", str(HANDBOOK)], env, tmp_path)
    try:
        async with aiohttp.ClientSession() as http:
            await served.ready(http)
            assert await served.mention(http, SECRET, QUESTION) == 200
            await until(llm.chat_kinds)  # the model is being asked
            served.process.send_signal(signal.SIGTERM)
            stopping = asyncio.create_task(exits(served, GRACE + 10))
            await asyncio.sleep(0.3)
            # Draining: alive, not ready, and a new delivery is refused — Slack delivers it again later.
            assert await status(http, f"{served.url}/healthz") == 200
            assert await status(http, f"{served.url}/readyz") == 503
            assert await served.mention(http, SECRET, "Who approves expenses?", ts="1710000000.000002") == 503
            code, output, took = await stopping
        assert code == 0 and took < GRACE and "Traceback" not in output, output[-3000:]
        [answer] = slack.posted()
        assert answer["thread_ts"] == "1710000000.000001" and "api-style-guide" in str(answer["blocks"])
    finally:
        if served.process.poll() is None:
            served.process.kill()
        slack.stop()
        llm.stop()


async def test_sigterm_lets_a_worker_finish_its_turn_and_exit(stack: Stack) -> None:
    stack.llm.latency = 1.5
    front, worker = stack.start("serve"), stack.start("worker")
    async with aiohttp.ClientSession() as http:
        await stack.ready(http, front, worker)
        assert await front.mention(http, SECRET, QUESTION) == 200
        await until(stack.llm.chat_kinds, what=stack.output)
        worker.process.send_signal(signal.SIGTERM)
        stopping = asyncio.create_task(exits(worker, GRACE + 10))
        await asyncio.sleep(0.3)
        assert await status(http, f"{worker.url}/readyz") == 503  # takes no more turns
        code, output, took = await stopping
        await asyncio.sleep(1)
    assert code == 0 and took < GRACE and "Traceback" not in output, output[-3000:]
    [answer] = stack.answers()
    assert "api-style-guide" in str(answer["blocks"])


class Performer:
    """Jobs performed in this process: each job's payload recorded when it starts and ends."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started: list[dict] = []
        self.finished: list[dict] = []

    async def perform(self, job: Job) -> None:
        self.started.append(job.payload)
        await asyncio.sleep(self.seconds)
        self.finished.append(job.payload)

    async def give_up(self, job: Job) -> None:
        raise AssertionError(f"gave up on {job}")


async def test_a_stopped_worker_hands_a_turn_longer_than_the_grace_back_to_another() -> None:
    prefix = f"threadsage-test-{uuid.uuid4().hex[:8]}:"
    settings = Settings(
        REDIS_URL="redis://127.0.0.1:6379/0", THREADSAGE_REDIS_PREFIX=prefix, THREADSAGE_TURN_TIMEOUT=60, _env_file=None
    )
    stopping, staying = asyncio.Event(), asyncio.Event()
    slow, other = Performer(seconds=30), Performer(seconds=0)
    leaving = TurnQueue(settings, settings, slow, stopping)
    leaving.grace_period = 1
    try:
        async with TurnQueue(settings, settings) as front:
            await front.put(Job("slack", "message", {"n": 1}, "slack:T:C:1"))
            first = asyncio.create_task(leaving.run())
            await until(lambda: slow.started, timeout=10)
            stopping.set()
            await asyncio.wait_for(first, 10)  # stopped after the grace period, the turn unfinished
            second = asyncio.create_task(TurnQueue(settings, settings, other, staying).run())
            await until(lambda: other.finished, timeout=10)  # at once, not after the 60 s turn timeout
            staying.set()
            await asyncio.wait_for(second, 10)
    finally:
        await drop_keys(prefix)
    assert slow.finished == [] and other.finished == [{"n": 1}]


async def test_run_with_redis_killed_mid_turn_answers_it_once_restarted(stack: Stack) -> None:
    stack.llm.latency = 1.5
    doomed = stack.start("run")
    async with aiohttp.ClientSession() as http:
        await stack.ready(http, doomed)
        assert await doomed.mention(http, SECRET, QUESTION) == 200
        await until(stack.llm.chat_kinds, what=stack.output)
        doomed.process.kill()  # kill -9: acknowledged to Slack, not answered
        doomed.process.wait(timeout=30)
        assert stack.answers() == []
        restarted = stack.start("run")
        await stack.ready(http, restarted)
        [answer] = await stack.wait_for_answers(1)
        await asyncio.sleep(2)
    assert len(stack.answers()) == 1 and "api-style-guide" in str(answer["blocks"])
    code, output = restarted.stop()
    assert code == 0 and "Traceback" not in output, output[-3000:]


async def test_workers_killed_again_and_again_lose_double_and_blank_no_answer(stack: Stack) -> None:
    """Serve and two workers, 12 questions; every worker killed while the model is asked, then
    again right after an answer is posted, twice over (bench/crash_soak.py: a longer run)."""
    outcome = await soak(stack, rounds=2, questions=6)
    assert outcome.kills >= 8 and (outcome.lost, outcome.doubled, outcome.empty) == (0, 0, 0), outcome.summary()


async def test_run_with_redis_polls_telegram_into_the_queue_and_answers_after_a_kill(stack: Stack) -> None:
    from tests.fakes.telegram_api import FakeBotAPI
    from tests.helpers.telegram_harness import ANN, TOKEN

    fake = await FakeBotAPI(TOKEN).start()
    del stack.env["SLACK_BOT_TOKEN"]
    stack.env.update(TELEGRAM_BOT_TOKEN=TOKEN, TELEGRAM_API_URL=fake.url, THREADSAGE_TELEGRAM_ALLOWED=str(ANN["id"]))
    stack.llm.latency = 1.5
    private = {"id": ANN["id"], "type": "private", "first_name": "Ann"}
    try:
        doomed = stack.start("run")
        async with aiohttp.ClientSession() as http:
            await stack.ready(http, doomed)
            fake.say(private, ANN, QUESTION)
            await until(stack.llm.chat_kinds, what=stack.output)
            doomed.process.kill()
            doomed.process.wait(timeout=30)
            assert fake.sent(private["id"]) == []
            restarted = stack.start("run")
            [answer] = await fake.wait_for(lambda: fake.sent(private["id"]), timeout=60)
            await asyncio.sleep(2)
        assert len(fake.sent(private["id"])) == 1 and "api-style-guide" in answer["text"]
        code, output = restarted.stop()
        assert code == 0 and "Traceback" not in output, output[-3000:]
    finally:
        await fake.stop()
