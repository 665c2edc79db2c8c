"""The turn queue on the real Redis, in one process: order within a conversation, retries after
an outage, and a failing job that does not take the turns behind it down."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator

import pytest
import redis.exceptions
from redis.asyncio import Redis

from tests.helpers.queue import REDIS_URL, Performer, worker_running
from threadsage.delivery import queue
from threadsage.delivery.current import current_delivery
from threadsage.delivery.jobs import Job
from threadsage.delivery.queue import GROUP, TurnQueue
from threadsage.settings.environment import Settings
from threadsage.support.backoff import Backoff


@pytest.fixture
async def settings() -> AsyncIterator[Settings]:
    prefix = f"test-queue-{uuid.uuid4().hex[:8]}:"
    yield Settings(REDIS_URL=REDIS_URL, THREADSAGE_REDIS_PREFIX=prefix, THREADSAGE_WORKER_CONCURRENCY=4, _env_file=None)
    redis = Redis.from_url(REDIS_URL)
    keys = [key async for key in redis.scan_iter(match=f"*{prefix}*")]
    if keys:
        await redis.delete(*keys)
    await redis.aclose()


async def acknowledged(settings: Settings) -> None:
    """Until no entry is pending in the workers' group: the last job's acknowledgement (in one
    script with its clean-up) follows its `perform`."""
    redis = Redis.from_url(REDIS_URL)
    try:
        for _ in range(1500):  # 30 s at most
            if (await redis.xpending(f"{settings.redis_prefix}turns:ready", GROUP))["pending"] == 0:
                return
            await asyncio.sleep(0.02)
        raise AssertionError("a job performed was never acknowledged")
    finally:
        await redis.aclose()


async def run_until(settings: Settings, performer: Performer, done: asyncio.Event, jobs: list[Job]) -> None:
    """Queue `jobs` from a front-end's queue, run a worker's until `done`."""
    async with TurnQueue(settings, settings) as front:
        for job in jobs:
            await front.put(job)
    async with worker_running(settings, performer):
        await asyncio.wait_for(done.wait(), 30)
        await acknowledged(settings)


async def test_jobs_of_a_conversation_run_in_order_others_alongside(settings: Settings) -> None:
    log: list[str] = []
    done = asyncio.Event()

    async def perform(job: Job) -> None:
        log.append(f"{job.payload['n']} in")
        await asyncio.sleep(0.3 if job.payload["n"] == "a1" else 0.05)
        log.append(f"{job.payload['n']} out")
        if len(log) == 8:
            done.set()

    jobs = [Job("slack", "message", {"n": n}, key) for n, key in [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b")]]
    performer = Performer(perform)
    await run_until(settings, performer, done, jobs)
    assert performer.given_up == []
    conversation_a = [entry for entry in log if entry.startswith("a")]
    assert conversation_a == ["a1 in", "a1 out", "a2 in", "a2 out", "a3 in", "a3 out"]
    assert log.index("b1 out") < log.index("a1 out")  # another conversation did not wait


async def test_an_outage_is_retried_and_a_failing_job_is_apologised_for_and_does_not_stop_the_next(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(queue, "OUTAGE_BACKOFF", Backoff(0.05))  # the pause before a retry: not what is tested
    attempts: dict[str, list[int]] = {}
    done = asyncio.Event()

    async def perform(job: Job) -> None:
        n = job.payload["n"]
        delivery = current_delivery.get()
        assert delivery is not None
        attempts.setdefault(n, []).append(delivery.attempt)
        if n == "outage" and delivery.attempt == 1:  # as seen when a worker's Redis restarted
            raise redis.exceptions.ConnectionError("Connection closed by server.")
        if n == "bug":
            raise KeyError("a bug in this job")
        if n == "after the bug":
            done.set()

    jobs = [Job("slack", "message", {"n": n}, "a") for n in ("outage", "bug", "after the bug")]
    performer = Performer(perform)
    await run_until(settings, performer, done, jobs)
    assert attempts == {"outage": [1, 2], "bug": [1], "after the bug": [1]}
    assert performer.given_up == ["bug"]  # the person hears of it


async def test_a_drained_queue_leaves_nothing_behind(settings: Settings) -> None:
    """Every job's entry acknowledged and deleted, its list gone, its tries forgotten, the depth
    back to 0: nothing grows with the turns a queue has seen."""
    done = asyncio.Event()
    performed: list[str] = []

    async def perform(job: Job) -> None:
        performed.append(job.payload["n"])
        if len(performed) == 20:
            done.set()

    jobs = [Job("slack", "message", {"n": f"{c}{i}"}, f"conversation-{c}") for i in range(4) for c in "abcde"]
    await run_until(settings, Performer(perform), done, jobs)
    assert sorted(performed) == sorted(job.payload["n"] for job in jobs)
    redis = Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        keys = {key async for key in redis.scan_iter(match=f"{settings.redis_prefix}*")}
        stream = f"{settings.redis_prefix}turns:ready"
        assert keys == {stream, f"{settings.redis_prefix}turns:depth"}
        assert await redis.xlen(stream) == 0 and (await redis.xpending(stream, "workers"))["pending"] == 0
        assert await redis.get(f"{settings.redis_prefix}turns:depth") == "0"
    finally:
        await redis.aclose()


async def test_a_worker_that_stops_cleanly_leaves_the_group(settings: Settings) -> None:
    """A worker stopped by its stop event, its turns done, takes its name out of the stream's
    consumer group: restarts and deploys do not pile up names there."""
    stop, performed = asyncio.Event(), asyncio.Event()

    async def perform(job: Job) -> None:
        performed.set()

    async with TurnQueue(settings, settings) as front:
        await front.put(Job("slack", "message", {"n": "one"}, "a"))
    worker = TurnQueue(settings, settings, Performer(perform), stop)
    running = asyncio.create_task(worker.run())
    stream = f"{settings.redis_prefix}turns:ready"
    redis = Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        await asyncio.wait_for(performed.wait(), 30)
        consumers = [c["name"] for c in await redis.xinfo_consumers(stream, "workers")]
        assert consumers == [worker.consumer]
        stop.set()
        await asyncio.wait_for(running, 30)
        assert await redis.xinfo_consumers(stream, "workers") == []
    finally:
        await redis.aclose()


async def test_the_names_of_workers_gone_leave_the_group(settings: Settings) -> None:
    """A name with nothing pending, idle for FORGOTTEN_AFTER turn timeouts (a worker that died,
    its turns taken over), is taken out by a live worker's takeover round. (A live worker's own
    name may go too while it waits with nothing pending; its next read brings it back.)"""
    settings = settings.model_copy(update={"turn_timeout": 0.1})  # gone after 10 × 0.1 s idle
    stream = f"{settings.redis_prefix}turns:ready"
    redis = Redis.from_url(REDIS_URL, decode_responses=True)
    stop, performed = asyncio.Event(), asyncio.Event()

    async def perform(job: Job) -> None:
        performed.set()

    await redis.xgroup_create(stream, "workers", id="0", mkstream=True)
    await redis.xgroup_createconsumer(stream, "workers", "host:1:dead")
    running = asyncio.create_task(TurnQueue(settings, settings, Performer(perform), stop).run())
    try:
        names: set[str] = {"host:1:dead"}
        for _ in range(100):  # 10 s at most
            names = {c["name"] for c in await redis.xinfo_consumers(stream, "workers")}
            if "host:1:dead" not in names:
                break
            await asyncio.sleep(0.1)
        assert "host:1:dead" not in names
        async with TurnQueue(settings, settings) as front:  # the live worker still takes turns
            await front.put(Job("slack", "message", {"n": "after"}, "a"))
        await asyncio.wait_for(performed.wait(), 10)
    finally:
        stop.set()
        await asyncio.wait_for(running, 30)
        await redis.aclose()


async def test_a_turn_longer_than_the_timeout_is_renewed_not_taken_over(settings: Settings) -> None:
    """A worker renews the entries it runs: a second worker does not take over a turn that runs
    past THREADSAGE_TURN_TIMEOUT while its worker is alive."""
    # one turn at a time: a worker busy with its turn takes none over (its own included)
    # (a short timeout: the renewal's pace and the takeover rounds follow it)
    settings = settings.model_copy(update={"turn_timeout": 2.0, "worker_concurrency": 1})
    started: list[str] = []
    done = asyncio.Event()

    async def perform(job: Job) -> None:
        started.append(job.payload["n"])
        await asyncio.sleep(3)  # past the timeout, and past the next takeover rounds (every timeout / 4)
        done.set()

    async with worker_running(settings, Performer(perform)):
        await run_until(settings, Performer(perform), done, [Job("slack", "message", {"n": "long"}, "a")])
    assert started == ["long"]


async def test_an_entry_that_holds_no_job_is_finished_and_its_conversation_goes_on(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """Written by another version, say: taken again it would fail again, for ever."""
    done = asyncio.Event()
    performed: list[str] = []

    async def perform(job: Job) -> None:
        performed.append(job.payload["n"])
        done.set()

    async with TurnQueue(settings, settings) as front:
        not_a_job = json.dumps({"id": "0123", "job": {"platform": "slack", "payload": {"n": "lost"}}})
        await front._put(keys=[front._jobs + "a", front._stream, front._depth], args=[not_a_job, "a"])
    with caplog.at_level(logging.ERROR, "threadsage.delivery.queue"):
        await run_until(settings, Performer(perform), done, [Job("slack", "message", {"n": "next"}, "a")])
    assert performed == ["next"]
    assert "job 0123 dropped: its entry holds no job this version can read" in caplog.messages
