"""The durable turn queue between front-ends (`threadsage serve`) and workers (`threadsage
worker`), on Redis: a list of jobs per conversation, and a stream of the conversations that have
one ready, read by the workers as a consumer group.

- `put` appends the job to its conversation's list and, if the list was empty, adds the
  conversation to the stream — one script, one round trip, before the platform is acknowledged.
- A worker reads a conversation from the stream (it stays in the group's pending list, under the
  worker's name, until acknowledged), runs the job at the head of its list, then in one script
  pops it, acknowledges the entry and, if the conversation has another job, adds it again. So
  the turns of a conversation run one after another, in the order they were queued, and those of
  other conversations alongside.
- Every 0.3 × `THREADSAGE_TURN_TIMEOUT` a worker renews the idle time of the entries it is
  running; an entry idle longer than the timeout (its worker died or froze) is taken over by
  another worker (`XAUTOCLAIM`), which runs the same job again: the turn is taken over after the
  timeout (60 s by default), not after the many minutes queue libraries usually wait.
- A worker that reconnects after Redis went away first takes back its own pending entries.
- A worker's name leaves the group as it stops cleanly, or once idle for 10 turn timeouts with
  nothing pending (it died): every start takes a new one, and none stays for ever.

Delivery is therefore at-least-once, and it becomes exactly one answer through idempotency
further in: platform messages and clicks are claimed by their delivery (a redelivery of the same
job may claim them again, a second delivery of the same message may not); the chat service
finishes a redelivered turn from its last LangGraph checkpoint, or returns what it already
produced; and before posting, the Slack bot looks for the parts it already posted (by the turn id
in their message metadata) while the Telegram bot records each reply before sending it.

Why not a task-queue library: streaq did this with job dependencies for the order, at ~35 Redis
commands a turn between front-end and worker; here a turn costs four round trips (the CPU of
each: docs/performance.md, "Checkpoints and round trips a turn").
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import secrets
import socket
from collections.abc import Callable
from dataclasses import asdict
from functools import partial
from types import TracebackType
from typing import Any, cast

import redis.exceptions

from threadsage.delivery.current import Delivery, current_delivery
from threadsage.delivery.jobs import Job, Performer
from threadsage.delivery.outages import ServiceUnavailable, first_leaf, retried_by_the_queue
from threadsage.delivery.redis_coordination import connect
from threadsage.observability.redaction import redact_url
from threadsage.observability.telemetry import ERRORS, QUEUE_DEPTH, QUEUE_OLDEST
from threadsage.settings.sections import PlatformSettings, StorageSettings
from threadsage.support.backoff import Backoff

log = logging.getLogger(__name__)

GRACE_SECONDS = 30  # on stop, turns in flight get this long to finish, then are handed back
GROUP = "workers"
READ_BLOCK_MS = 1000  # a worker's blocking read returns this often to see whether it must stop
FORGOTTEN_AFTER = 10  # turn timeouts a name with nothing pending stays idle before it leaves the group
OUTAGE_BACKOFF = Backoff(1.0)  # after try n of a job a service was away for: 2^n s (its tries are bounded)

# KEYS: the conversation's jobs, the stream, the depth counter. ARGV: the job, the conversation.
PUT = """
redis.call('INCR', KEYS[3])
if redis.call('RPUSH', KEYS[1], ARGV[1]) == 1 then
  redis.call('XADD', KEYS[2], '*', 'conversation', ARGV[2])
end
"""
# KEYS: the conversation's jobs, the tries. The job at the head and the number of its try.
TAKE = """
local head = redis.call('LINDEX', KEYS[1], 0)
if not head then return false end
return {head, redis.call('HINCRBY', KEYS[2], cjson.decode(head)['id'], 1)}
"""
# KEYS: the conversation's jobs, the stream, the tries, the depth counter.
# ARGV: the group, the entry, the job id, the conversation. The job id is empty when the list was:
# then a job queued since has an entry of its own.
DONE = """
local head = redis.call('LINDEX', KEYS[1], 0)
if head and cjson.decode(head)['id'] == ARGV[3] then
  redis.call('LPOP', KEYS[1])
  redis.call('DECR', KEYS[4])
end
redis.call('HDEL', KEYS[3], ARGV[3])
if redis.call('XACK', KEYS[2], ARGV[1], ARGV[2]) == 1 then
  redis.call('XDEL', KEYS[2], ARGV[2])
  if ARGV[3] ~= '' and redis.call('LLEN', KEYS[1]) > 0 then
    redis.call('XADD', KEYS[2], '*', 'conversation', ARGV[4])
  end
end
"""
# KEYS: the conversation's jobs, the stream, the tries. ARGV: the group, the entry, the job id,
# the conversation. A job handed back by a stopping worker: not a try, and ready again at once.
HAND_BACK = """
redis.call('HINCRBY', KEYS[3], ARGV[3], -1)
if redis.call('XACK', KEYS[2], ARGV[1], ARGV[2]) == 1 then
  redis.call('XDEL', KEYS[2], ARGV[2])
  redis.call('XADD', KEYS[2], '*', 'conversation', ARGV[4])
end
"""
# KEYS: the stream. ARGV: the group, the least idle time (ms), a name (empty: any). The names in the
# group with nothing pending and idle that long leave it — in one script, so that none reads an
# entry between the look and the deletion (which would drop that entry from the pending list).
FORGET = """
for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local fields = {}
  for i = 1, #consumer, 2 do fields[consumer[i]] = consumer[i + 1] end
  if fields['pending'] == 0 and fields['idle'] >= tonumber(ARGV[2])
     and (ARGV[3] == '' or fields['name'] == ARGV[3]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], fields['name'])
  end
end
"""
# KEYS: the stream. ARGV: the group, this consumer, the entries it runs. Their idle time reset,
# those still its own (one taken over by another worker meanwhile stays the other's).
RENEW = """
for i = 3, #ARGV do
  local pending = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if pending[1] and pending[1][2] == ARGV[2] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
  end
end
"""


def conversation_name(order_key: str) -> str:
    """The name a conversation's jobs go under in Redis: a digest of its order key, so that what a
    platform sends there (of any length, with any characters) never becomes part of a key."""
    return hashlib.sha256(order_key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class TurnQueue:
    """Front-ends `put` inside `async with TurnQueue(settings, settings) as queue`; workers call `run`
    (which connects by itself) on a queue made with a `performer` and the event that stops it."""

    def __init__(
        self,
        storage: StorageSettings,
        limits: PlatformSettings,
        performer: Performer | None = None,
        stop: asyncio.Event | None = None,
        consumer: str | None = None,
    ) -> None:
        """`storage`: where the Redis is; `limits`: the turn queue's section (tries, concurrency,
        timeout). `consumer`: the worker's name in the stream's group; give the same one to the queue a
        worker makes after Redis went away, and it takes back its own pending entries at once."""
        if not storage.redis_url:
            raise ValueError("the turn queue needs REDIS_URL")
        self._url = storage.redis_url
        self.redis = connect(storage.redis_url, decode_responses=True)
        self.max_tries = limits.turn_max_tries
        self.concurrency = limits.worker_concurrency
        self.timeout = limits.turn_timeout
        self.grace_period: float = GRACE_SECONDS
        self._performer = performer
        self._stop = stop or asyncio.Event()
        self.consumer = consumer or consumer_name()
        prefix = f"{storage.redis_prefix}turns:"
        self._stream, self._jobs, self._tries, self._depth = (prefix + k for k in ("ready", "jobs:", "tries", "depth"))
        self._put, self._take, self._done, self._hand_back, self._renew, self._forget = (
            self.redis.register_script(s) for s in (PUT, TAKE, DONE, HAND_BACK, RENEW, FORGET)
        )
        self._running: dict[str, asyncio.Task[None]] = {}  # by stream entry
        self._taken: dict[str, tuple[str, str]] = {}  # the conversation and job id of a running entry

    async def __aenter__(self) -> TurnQueue:
        """Connected, to put jobs in; Redis unreachable is said in one line (the process exits)."""
        try:
            await self.redis.ping()
        except Exception as exc:  # noqa: BLE001 - whatever the client raises, said in one line
            await self.redis.aclose()
            where = redact_url(self._url)
            raise ServiceUnavailable(f"cannot reach Redis at REDIS_URL={where}: {first_leaf(exc)}") from None
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.redis.aclose()

    async def put(self, job: Job) -> str:
        """Record the job durably in Redis; returns its id. Raises if Redis is unreachable, so
        that a front-end can refuse the platform's request (and the platform retries)."""
        job_id = secrets.token_hex(12)
        entry = json.dumps(
            {"id": job_id, "job": asdict(job)}, ensure_ascii=False
        )  # Redis' cjson refuses a lone surrogate's escape
        conversation = conversation_name(job.order_key)
        await self._put(keys=[self._jobs + conversation, self._stream, self._depth], args=[entry, conversation])
        return job_id

    async def run(self, on_started: Callable[[], object] = lambda: None) -> None:
        """Take and perform jobs until the stop event is set (then the turns in flight get
        `grace_period` seconds to finish, or are handed back); `on_started` runs once jobs are
        taken. Raises when Redis goes away, the turns in flight cancelled (they stay pending)."""
        if self._performer is None:
            raise ValueError("a worker needs a performer for its jobs")
        try:
            await self.redis.xgroup_create(self._stream, GROUP, id="0", mkstream=True)
        except redis.exceptions.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        renewing = asyncio.create_task(self._renew_periodically())
        try:
            await self._start(await self._read("0"))  # its own, left when Redis went away
            on_started()
            await self._take_until_stopped()
            await self._finish_or_hand_back()
            await self._forget_names(0, self.consumer)  # its own, now that nothing of it is pending
        finally:
            renewing.cancel()
            for task in self._running.values():
                task.cancel()
            await asyncio.gather(renewing, *self._running.values(), return_exceptions=True)
            await self.redis.aclose()

    async def measure(self) -> None:
        """Set the queue depth and the age of its oldest unfinished job (Prometheus gauges)."""
        depth = await self.redis.get(self._depth)
        QUEUE_DEPTH.set(max(0, int(depth or 0)))
        oldest = 0.0
        entries = await self.redis.xrange(self._stream, "-", "+", count=1)
        if entries:  # an entry's id starts with the millisecond it was added (Redis' clock)
            seconds, micros = await self.redis.time()
            oldest = max(0.0, seconds + micros / 1e6 - int(str(entries[0][0]).split("-", 1)[0]) / 1000)
        QUEUE_OLDEST.set(oldest)

    # --- the worker --------------------------------------------------------------------------

    async def _take_until_stopped(self) -> None:
        claim_every = self.timeout / 4
        next_claim = 0.0
        loop = asyncio.get_running_loop()
        while not self._stop.is_set():
            free = self.concurrency - len(self._running)
            if free <= 0:
                await self._slot_or_stop()
                continue
            if loop.time() >= next_claim:  # names gone idle; entries of workers that died or froze
                next_claim = loop.time() + claim_every
                await self._forget_names(self.timeout * FORGOTTEN_AFTER)
                claimed = await self.redis.xautoclaim(
                    self._stream, GROUP, self.consumer, int(self.timeout * 1000), "0-0", count=free
                )
                if claimed[1]:
                    log.info("taking over %d turns whose worker stopped", len(claimed[1]))
                    await self._start(claimed[1])
                    continue
            await self._start(await self._read(">", count=free, block=READ_BLOCK_MS))

    async def _read(self, start: str, count: int | None = None, block: int | None = None) -> list[Any]:
        streams = await self.redis.xreadgroup(GROUP, self.consumer, {self._stream: start}, count=count, block=block)
        return cast(list[Any], streams)[0][1] if streams else []  # [[stream, entries]] (RESP2)

    async def _start(self, entries: list[Any]) -> None:
        for entry_id, fields in entries:
            if not fields:  # deleted (finished) while pending: nothing left to run
                await self.redis.xack(self._stream, GROUP, entry_id)
            elif entry_id not in self._running:
                task = asyncio.create_task(self._handle(entry_id, fields["conversation"]))
                self._running[entry_id] = task
                task.add_done_callback(partial(self._ended, entry_id))

    def _ended(self, entry_id: str, _: asyncio.Task[None]) -> None:
        del self._running[entry_id]

    async def _slot_or_stop(self) -> None:
        stopping = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait({stopping, *self._running.values()}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()

    async def _finish_or_hand_back(self) -> None:
        """On stop: no more jobs; those running get the grace period, then go back to the stream
        for another worker at once."""
        if self._running:
            await asyncio.wait(list(self._running.values()), timeout=self.grace_period)
        for entry_id, task in list(self._running.items()):
            taken = self._taken.get(entry_id)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            if taken is not None:
                conversation, job_id = taken
                log.info("handing job %s back to the queue", job_id)
                await self._hand_back(
                    keys=[self._jobs + conversation, self._stream, self._tries],
                    args=[GROUP, entry_id, job_id, conversation],
                )

    async def _forget_names(self, idle_seconds: float, name: str = "") -> None:
        """Take out of the group the names (`name`, or any) with nothing pending, idle at least
        `idle_seconds`: each worker start takes a new name, and every one would otherwise stay."""
        await self._forget(keys=[self._stream], args=[GROUP, int(idle_seconds * 1000), name])

    async def _renew_periodically(self) -> None:
        while True:
            await asyncio.sleep(self.timeout * 0.3)
            try:
                if self._running:
                    await self._renew(keys=[self._stream], args=[GROUP, self.consumer, *self._running])
            except redis.exceptions.RedisError as exc:  # the worker's loop notices Redis away too
                log.warning("could not renew the turns in flight: %s", exc)

    async def _handle(self, entry_id: str, conversation: str) -> None:
        keys = [self._jobs + conversation, self._stream, self._tries, self._depth]
        try:
            taken = await self._take(keys=[self._jobs + conversation, self._tries])
            job_id = ""
            if taken:
                head, attempt = taken
                entry = json.loads(head)
                job_id = entry["id"]
                self._taken[entry_id] = (conversation, job_id)
                if (job := _job_of(entry)) is not None:
                    await self._perform(job, Delivery(job_id, attempt, final=attempt >= self.max_tries))
            await self._done(keys=keys, args=[GROUP, entry_id, job_id, conversation])
        except Exception:  # Redis went away: the entry stays pending, to be taken again
            log.warning("job of %s left in the queue", conversation, exc_info=True)
        finally:
            self._taken.pop(entry_id, None)

    async def _perform(self, job: Job, delivery: Delivery) -> None:
        """Run the job's tries from `delivery` on: a service outage is tried again after a growing
        pause (the entry stays this worker's meanwhile), anything else ends it with an apology."""
        assert self._performer is not None
        while True:
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
                return
            except Exception as exc:
                if not retried_by_the_queue(exc):
                    # Anything else ends the job here — with an apology, so nobody waits in
                    # silence; the turns queued behind it in its conversation go on.
                    log.exception("job %s failed", delivery.id)
                    ERRORS.labels("job").inc()
                    await self._give_up(job)
                    return
                log.warning("job %s waits for a service (%s); retrying", delivery.id, first_leaf(exc))
            finally:
                current_delivery.reset(token)
            await asyncio.sleep(OUTAGE_BACKOFF.delay(delivery.attempt))
            attempt = await self.redis.hincrby(self._tries, delivery.id, 1)
            delivery = Delivery(delivery.id, attempt, final=attempt >= self.max_tries)

    async def _give_up(self, job: Job) -> None:
        assert self._performer is not None
        try:
            await self._performer.give_up(job)
        except Exception:  # the platform itself may be what failed
            log.warning("could not apologise for a job of %s", job.platform, exc_info=True)


def _job_of(entry: dict[str, Any]) -> Job | None:
    """The job of a queue entry; None (said in the log, and the entry is finished) for one that
    is not a job: taken again, it would fail again and hold up its conversation."""
    try:
        return Job(**entry["job"])
    except (KeyError, TypeError):
        log.error("job %s dropped: its entry holds no job this version can read", entry.get("id"))
        return None


def consumer_name() -> str:
    """A worker's name in the stream's group: its host, process and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
