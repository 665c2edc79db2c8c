"""The durable turn queue between front-ends (`threadsage serve`) and workers (`threadsage
worker`), on streaq — a task queue on Redis streams.

Why streaq: a worker acknowledges a job (XACK) only after it ran, renews the idle time of the jobs
it is running every 0.9 × `THREADSAGE_TURN_TIMEOUT`, and takes over jobs idle longer than that —
their worker died — from the stream's pending list. Delivery is therefore at-least-once, and the
takeover happens after the turn timeout (60 s by default), not after the many minutes queue
libraries usually wait. It also has per-job retry counts and job dependencies, which keep the
turns of one conversation in order (each waits for the one queued before it).

At-least-once becomes exactly one answer through idempotency further in: platform messages and
clicks are claimed by their delivery (a redelivery of the same job may claim them again, a second
delivery of the same message may not); the chat service finishes a redelivered turn from its last
LangGraph checkpoint, or returns what it already produced; and before posting, the Slack bot
looks for the parts it already posted (by the turn id in their message metadata) while the
Telegram bot records each reply before sending it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import asdict
from types import TracebackType
from typing import Any

import anyio
from streaq import StreaqRetry, TaskStatus, Worker

from threadsage.config import Settings
from threadsage.delivery.current import Delivery, current_delivery
from threadsage.delivery.jobs import Job, Performer
from threadsage.delivery.outages import first_leaf, retried_by_the_queue
from threadsage.observability import ERRORS, QUEUE_DEPTH, QUEUE_OLDEST

log = logging.getLogger(__name__)

ORDER_TTL_MS = 24 * 3600 * 1000  # how long a conversation's last job id is kept for ordering
RESULT_TTL_S = 3600  # a finished job's record; later jobs of its conversation need not wait on it
GRACE_SECONDS = 30  # on stop, turns in flight get this long to finish, then are handed back
_WAITING = {TaskStatus.QUEUED, TaskStatus.RUNNING, TaskStatus.SCHEDULED}


class _StoppedByEvent(Worker[Any]):
    """streaq's worker, stopped by the process's stop event rather than by catching SIGINT and
    SIGTERM itself: a process that runs front-ends beside it has one owner of its signals. On
    stop it does what streaq does on a signal: it takes no more jobs, gives those running
    `grace_period` seconds, then hands them back unacknowledged, for another worker at once."""

    def __init__(self, stop: asyncio.Event, **options: Any) -> None:
        super().__init__(**options)
        self._stop = stop

    async def signal_handler(self, scope: anyio.CancelScope) -> None:
        await self._stop.wait()
        scope.cancel()
        deadline = anyio.current_time() + self.grace_period
        for running in self._cancel_scopes.values():
            running.deadline = min(running.deadline, deadline)


class TurnQueue:
    """Front-ends `put` inside `async with TurnQueue(settings) as queue`; workers call `run`
    (which connects by itself) on a queue made with a `performer` and the event that stops it."""

    def __init__(
        self, settings: Settings, performer: Performer | None = None, stop: asyncio.Event | None = None
    ) -> None:
        if not settings.redis_url:
            raise ValueError("the turn queue needs REDIS_URL")
        self.max_tries = settings.turn_max_tries
        self._performer = performer
        self.worker: Worker[Any] = _StoppedByEvent(
            stop or asyncio.Event(),
            redis_url=settings.redis_url,
            queue_name=f"{settings.redis_prefix}turns",
            concurrency=settings.worker_concurrency,
            idle_timeout=settings.turn_timeout,
            serializer=_to_json,
            deserializer=json.loads,
            grace_period=GRACE_SECONDS,
        )
        # No max_tries for streaq: it would fail the job and, with it, the turns queued behind it in
        # its conversation. `_run` gives up on the job itself, with an apology, and goes on.
        self._turn = self.worker.task(name="turn", max_tries=None, ttl=RESULT_TTL_S)(self._run)
        self._last = f"{settings.redis_prefix}turns:last:"

    async def __aenter__(self) -> TurnQueue:
        await self.worker.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.worker.__aexit__(exc_type, exc, tb)

    async def put(self, job: Job) -> str:
        """Record the job durably in Redis; returns its id. Raises if Redis is unreachable, so
        that a front-end can refuse the platform's request (and the platform retries)."""
        task = self._turn.enqueue(asdict(job))
        previous = await self.worker.redis.set(self._last + job.order_key, task.id, get=True, px=ORDER_TTL_MS)
        if previous and await self.worker.status_by_id(previous) in _WAITING:
            task.start(after=previous)
        await task
        return task.id

    async def run(self, on_started: Callable[[], object] = lambda: None) -> None:
        """Take and perform jobs until the stop event is set (then the turns in flight get
        `GRACE_SECONDS` to finish, or are handed back); `on_started` runs once jobs are taken."""
        if self._performer is None:
            raise ValueError("a worker needs a performer for its jobs")
        async with anyio.create_task_group() as group:
            await group.start(self.worker.run_async)
            on_started()

    async def measure(self) -> None:
        """Set the queue depth and the age of its oldest unfinished job (Prometheus gauges)."""
        QUEUE_DEPTH.set(await self.worker.queue_size())
        oldest = 0.0
        for priority in self.worker.priorities:
            entries = await self.worker.redis.xrange(self.worker.stream_key + priority, "-", "+", count=1)
            if entries:  # a stream entry's id starts with the millisecond it was added (Redis' clock)
                enqueued_ms = int(str(entries[0].identifier).split("-", 1)[0])
                now = await self.worker.redis.time()
                oldest = max(oldest, now.timestamp() - enqueued_ms / 1000)
        QUEUE_OLDEST.set(oldest)

    async def _run(self, payload: dict[str, Any]) -> None:
        assert self._performer is not None
        job = Job(**payload)
        context = self._turn.context
        delivery = Delivery(context.task_id, attempt=context.tries, final=context.tries >= self.max_tries)
        if delivery.attempt > self.max_tries:  # its worker died at every try: a poison turn
            log.error("job %s given up after %d tries", delivery.id, self.max_tries)
            ERRORS.labels("job").inc()
            await self._give_up(job)
            return
        if delivery.attempt > 1:
            log.info("job %s: attempt %d", delivery.id, delivery.attempt)
        token = current_delivery.set(delivery)
        try:
            await self._performer.perform(job)
        except Exception as exc:
            if retried_by_the_queue(exc):
                log.warning("job %s waits for a service (%s); retrying", delivery.id, first_leaf(exc))
                raise StreaqRetry(delay=2**delivery.attempt) from exc
            # Anything else ends the job here — with an apology, so nobody waits in silence. (A
            # job failed in streaq would also fail the turns queued behind it.)
            log.exception("job %s failed", delivery.id)
            ERRORS.labels("job").inc()
            await self._give_up(job)
        finally:
            current_delivery.reset(token)

    async def _give_up(self, job: Job) -> None:
        assert self._performer is not None
        try:
            await self._performer.give_up(job)
        except Exception:  # the platform itself may be what failed
            log.warning("could not apologise for a job of %s", job.platform, exc_info=True)


def _to_json(data: Any) -> str:
    """Jobs and their results as JSON; what JSON cannot hold (an exception streaq records as a
    job's result) as its repr."""
    return json.dumps(data, default=repr)
