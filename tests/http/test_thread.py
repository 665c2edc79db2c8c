"""The HTTP server of `threadsage run` on its own thread: a Slack event is acknowledged while the
turns' event loop is busy, and still answered once; readiness is asked on the turns' loop; what the
HTTP thread starts on the turns' loop is handed over once per burst, in order."""

from __future__ import annotations

import asyncio
import socket
import time
import urllib.request
from pathlib import Path

import pytest

from tests.fakes.slack_api import BOT_USER, FakeSlack, event_body, signed_headers
from tests.helpers.slack_harness import CHANNEL, SECRET, TRAVEL, next_ts
from threadsage.app.runtime import open_chat_service
from threadsage.bots.slack import SlackBot
from threadsage.bots.tokens import Signer, load_secret
from threadsage.delivery.coordination import LocalCoordinator
from threadsage.http.thread import MainLoopBridge, http_server
from threadsage.settings.environment import Settings
from threadsage.support.background import BackgroundTasks

pytestmark = [pytest.mark.slow, pytest.mark.timed]  # holds the turns' loop for seconds; acknowledged within 0.75 s

BUSY = 1.5  # seconds the turns' loop is held, as a burst of turns holds it


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, float]:
    """From another thread, as Slack would: the status and the seconds it took."""
    request = urllib.request.Request(url, body, {"Content-Type": "application/json", **headers}, method="POST")
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, time.perf_counter() - started


def status_of(url: str) -> int:
    with urllib.request.urlopen(url, timeout=10) as response:
        return int(response.status)


async def test_an_event_is_acknowledged_while_the_turns_loop_is_busy_and_answered_once(
    tmp_path: Path, handbook_kb
) -> None:
    fake = FakeSlack().start()
    settings = Settings(
        THREADSAGE_DATA_DIR=tmp_path / "data",
        SLACK_BOT_TOKEN="xoxb-test",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=fake.api_url,
        DATABASE_URL=None,
        OPENAI_API_KEY=None,
        THREADSAGE_HTTP_PORT=free_port(),
        _env_file=None,
    )
    loop = asyncio.get_running_loop()

    async def on_this_loop() -> bool:  # readiness checks use this loop's connections
        return asyncio.get_running_loop() is loop

    ts = next_ts()
    event = {"type": "app_mention", "user": "U222", "text": f"<@{BOT_USER}> {TRAVEL}", "ts": ts, "channel": CHANNEL}
    body = event_body(event, "Ev-busy")
    try:
        coordinator = LocalCoordinator()
        async with (
            open_chat_service(settings, handbook_kb, coordinator) as chat,
            SlackBot(
                settings, chat, coordinator, Signer(load_secret(settings, settings.data_dir)), receive=False
            ).running() as bot,
            http_server(settings, [bot.route()], ready=on_this_loop),
        ):
            base = f"http://127.0.0.1:{settings.http_port}"
            sent = asyncio.create_task(
                asyncio.to_thread(post, f"{base}/slack/events", body, signed_headers(SECRET, body))
            )
            await asyncio.sleep(0.2)  # the request is on its way
            time.sleep(BUSY)  # noqa: ASYNC251 - the point: this loop does nothing else meanwhile
            status, took = await sent
            assert status == 200
            assert took < BUSY / 2, f"the acknowledgement waited {took:.2f} s for the busy loop"
            assert await asyncio.to_thread(status_of, f"{base}/readyz") == 200
            await bot.tasks.drain(60)
            # A redelivery of the same event (Slack retries when unsure) is acknowledged, not answered again.
            retried = signed_headers(SECRET, body) | {"X-Slack-Retry-Num": "1"}
            assert (await asyncio.to_thread(post, f"{base}/slack/events", body, retried))[0] == 200
            await bot.tasks.drain(60)
    finally:
        fake.stop()
    answers = [m for m in fake.posted() if m.get("thread_ts") == ts]
    assert len(answers) == 1, answers


async def test_works_from_the_http_thread_start_once_in_order_and_together_after_a_burst() -> None:
    main_loop = MainLoopBridge(quiet=0.2, at_most=2.0)
    tasks = BackgroundTasks()
    queued = 0
    started: list[tuple[int, int]] = []  # each work, and how many had been queued when it started

    async def work(n: int) -> None:
        started.append((n, queued))

    async def burst() -> None:  # on a loop of its own, as the HTTP thread's
        nonlocal queued
        for n in range(20):
            main_loop.start(tasks, work(n), "work")
            queued += 1
            if n == 9:
                await asyncio.sleep(0.05)  # a pause shorter than `quiet`: still the same burst
        await asyncio.sleep(0.5)  # this loop lives on while the burst is handed over

    await asyncio.to_thread(asyncio.run, burst())
    await tasks.drain(5)
    assert started == [(n, 20) for n in range(20)]


async def test_a_steady_stream_is_handed_over_without_waiting_for_a_quiet_moment() -> None:
    main_loop = MainLoopBridge(quiet=0.1, at_most=0.3)
    tasks = BackgroundTasks()
    started: list[float] = []

    async def work() -> None:
        started.append(time.monotonic())

    async def stream() -> float:
        began = time.monotonic()
        while time.monotonic() - began < 1.5:
            main_loop.start(tasks, work(), "work")
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.5)
        return began

    began = await asyncio.to_thread(asyncio.run, stream())
    await tasks.drain(5)
    assert started[0] - began < 0.3 + 0.2, "the first work waited for the stream to end"
