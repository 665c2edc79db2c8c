"""The chat service's coordination on Redis, for several processes sharing the work.

Same interface as `LocalCoordinator`:
- `session_lock`: one turn at a time per session across processes, a `redis.asyncio.lock.Lock`.
  The lock has an expiry (`lock_ttl`, 10 s), so a dead holder frees it; a live holder renews it
  (`reacquire`) at a third of that while it works. The holder asks `still_holds()` before it acts
  on the outside world: a holder that stalled past the expiry and lost the lock learns so instead
  of posting over the next holder's work, and its release leaves the next holder's lock alone.
  Within half the TTL of the last time the lock was set or renewed (timed from before the command
  was sent, so never later than Redis set the expiry) it cannot have expired, and `still_holds()`
  says so without asking Redis: a turn is usually that short.
- `claim`: idempotency keys with a TTL, owned by the queue delivery that took them (one script).
- `remember`/`recall`: small shared facts with a TTL.
- `allow`: a sliding-window rate limit (a sorted set per key, one Lua script, atomic), decided
  once per turn when asked (the decision kept in the same script).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.lock import Lock
from redis.exceptions import LockNotOwnedError

from threadsage.delivery.current import claim_owner

log = logging.getLogger(__name__)

POLL_SECONDS = 0.05  # how often a waiter tries a taken session lock
# A claim is new (SET NX) or already this owner's (a redelivered turn).
_CLAIM = """
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return 1 end
if redis.call('get', KEYS[1]) == ARGV[1] then return 1 end
return 0
"""
_ALLOW = """
if KEYS[2] then
  local decided = redis.call('get', KEYS[2])
  if decided then return tonumber(decided) end
end
local allowed = 0
redis.call('zremrangebyscore', KEYS[1], '-inf', ARGV[1] - ARGV[2])
if redis.call('zcard', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('zadd', KEYS[1], ARGV[1], ARGV[4])
  redis.call('pexpire', KEYS[1], ARGV[2])
  allowed = 1
end
if KEYS[2] then redis.call('set', KEYS[2], allowed, 'EX', ARGV[5]) end
return allowed
"""


@dataclass
class _Held:
    """A session lock held by this task, and when it was last known to be set: the monotonic
    time before the command that set or renewed it was sent."""

    lock: Lock
    confirmed: float


_current_lock: contextvars.ContextVar[_Held | None] = contextvars.ContextVar("threadsage_lock", default=None)


MAX_CONNECTIONS = 100  # per client: the default pool's size, but waited for rather than refused
CONNECTION_WAIT = 30.0  # seconds a command waits for a free connection


def connect(url: str, decode_responses: bool = False) -> Redis:
    """A client whose commands wait for a free connection: redis-py's default pool raises
    `MaxConnectionsError` at once past 100, which a flood of turns from distinct sessions (each
    claims, counts and locks) reached — every turn beyond failed with an apology. Strings go as
    UTF-8 with lone surrogates passed through (a JSON `\\ud800` escape makes one, and strict
    UTF-8 raised on it in every claim, count and lock of that conversation)."""
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=MAX_CONNECTIONS,
        timeout=CONNECTION_WAIT,
        decode_responses=decode_responses,
        encoding_errors="surrogatepass",
    )
    return Redis.from_pool(pool)


class RedisCoordinator:
    def __init__(
        self,
        redis: Redis,
        prefix: str = "threadsage:",
        lock_ttl: float = 10.0,
        wait_timeout: float = 300.0,
    ) -> None:
        self.redis = redis
        self.prefix = prefix
        self.lock_ttl = lock_ttl
        self.wait_timeout = wait_timeout
        self._claim = redis.register_script(_CLAIM)  # sent by its digest (EVALSHA), not its text
        self._allow = redis.register_script(_ALLOW)

    @asynccontextmanager
    async def session_lock(self, key: str) -> AsyncIterator[Lock]:
        lock = self.redis.lock(
            f"{self.prefix}lock:{key}",
            timeout=self.lock_ttl,
            sleep=POLL_SECONDS,
            blocking_timeout=self.wait_timeout,
            thread_local=False,  # one Lock per hold, renewed by a task of the same thread
        )
        asked = time.monotonic()
        if not await lock.acquire():
            raise TimeoutError(f"session {key} stayed locked for {self.wait_timeout:.0f} s")
        held = _Held(lock, asked)
        released = asyncio.Event()
        renewing = asyncio.create_task(self._renew(held, key, released), name=f"renew-{key}")
        token = _current_lock.set(held)
        try:
            yield lock
        finally:
            _current_lock.reset(token)
            released.set()
            await renewing
            with suppress(LockNotOwnedError):  # lost while stalled: `still_holds` told the holder
                await lock.release()

    async def still_holds(self) -> bool:
        """Whether the current task still owns the session lock it took (see the module's docstring)."""
        held = _current_lock.get()
        if held is None:
            return False
        if time.monotonic() - held.confirmed < self.lock_ttl / 2:
            return True
        return bool(await held.lock.owned())

    async def claim(self, key: str, ttl_seconds: float) -> bool:
        owner = claim_owner()
        return bool(await self._claim(keys=[f"{self.prefix}claim:{key}"], args=[owner, max(1, int(ttl_seconds))]))

    async def remember(self, key: str, value: str, ttl_seconds: float) -> None:
        await self.redis.set(f"{self.prefix}fact:{key}", value, ex=max(1, int(ttl_seconds)))

    async def recall(self, key: str) -> str | None:
        value = await self.redis.get(f"{self.prefix}fact:{key}")
        return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value

    async def mark(self, key: str, item: str, ttl_seconds: float) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.sadd(f"{self.prefix}marks:{key}", item)
            pipe.expire(f"{self.prefix}marks:{key}", max(1, int(ttl_seconds)))
            await pipe.execute()

    async def take_marks(self, key: str) -> set[str]:
        async with self.redis.pipeline(transaction=True) as pipe:  # read and removed at once: taken once
            pipe.smembers(f"{self.prefix}marks:{key}")
            pipe.delete(f"{self.prefix}marks:{key}")
            items, _ = await pipe.execute()
        return {i.decode("utf-8", "surrogatepass") if isinstance(i, bytes) else str(i) for i in items}

    async def allow(
        self, key: str, limit: int, window_seconds: float, decision: str | None = None, decision_ttl: float = 0
    ) -> bool:
        now_ms = int(time.time() * 1000)
        member = f"{now_ms}-{secrets.token_hex(4)}"
        keys = [f"{self.prefix}rate:{key}"] + ([] if decision is None else [f"{self.prefix}rate-decision:{decision}"])
        args: list[str | int] = [now_ms, int(window_seconds * 1000), limit, member, max(1, int(decision_ttl))]
        return bool(await self._allow(keys=keys, args=args))

    async def _renew(self, held: _Held, key: str, released: asyncio.Event) -> None:
        """Reset the expiry at a third of the TTL until the holder is done; stop if it was lost.

        Told to stop by `released`, not cancelled: a cancellation that arrived while redis-py was
        renewing was swallowed once (the renewal went on for ever, and its holder waited for it
        with the session locked: bench/worker_pool.py's turns that never ended)."""
        while True:
            with suppress(TimeoutError):
                await asyncio.wait_for(released.wait(), self.lock_ttl / 3)
            if released.is_set():
                return
            try:
                asked = time.monotonic()
                await held.lock.reacquire()
                held.confirmed = asked
            except LockNotOwnedError:
                log.warning("lost the lock of session %s", key)
                return
