"""What the turn queue's tests share: the Redis they use, and a worker's bots reduced to a function."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from threadsage.delivery.jobs import Job
from threadsage.delivery.queue import TurnQueue
from threadsage.settings.environment import Settings

REDIS_URL = "redis://127.0.0.1:6379/0"


class Performer:
    """A worker's bots, reduced to a function; the jobs it gave up (apologised for) are kept."""

    def __init__(self, perform) -> None:
        self.perform = perform
        self.given_up: list[str] = []

    async def give_up(self, job: Job) -> None:
        self.given_up.append(job.payload["n"])


@asynccontextmanager
async def worker_running(settings: Settings, performer: Performer) -> AsyncIterator[None]:
    """A worker running meanwhile, then stopped as a worker process's signal handler stops it:
    by its stop event, not by cancelling its task (a cancelled worker was seen stuck "cancelling"
    in its take loop, about one test run in fifteen, and the test hung)."""
    stop = asyncio.Event()
    running = asyncio.create_task(TurnQueue(settings, settings, performer, stop).run())
    try:
        yield
    finally:
        stop.set()
        await asyncio.wait_for(running, 30)
