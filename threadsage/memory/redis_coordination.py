"""The chat service's coordination on Redis, for several processes sharing the work.

Same interface as `LocalCoordinator`:
- `session_lock`: one turn at a time per session across processes. The lock has an expiry, so a
  dead holder frees it; a live holder renews it while it works. Every acquisition takes a fencing
  number (an ever-increasing counter per session), and the holder can ask `still_holds()` before
  it acts on the outside world: a holder that stalled past the expiry and lost the lock learns so
  instead of posting over the next holder's work.
- `claim`: idempotency keys with a TTL, owned by the queue delivery that took them (one script).
- `remember`/`recall`: small shared facts with a TTL.
- `allow`: a sliding-window rate limit (a sorted set per key, one Lua script, atomic).
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

from redis.asyncio import Redis

from threadsage.delivery.current import claim_owner

log = logging.getLogger(__name__)

# Renew only while the lock is still ours; release only if it is still ours.
_RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
# A claim is new (SET NX) or already this owner's (a redelivered turn).
_CLAIM = """
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return 1 end
if redis.call('get', KEYS[1]) == ARGV[1] then return 1 end
return 0
"""
_ALLOW = """
redis.call('zremrangebyscore', KEYS[1], '-inf', ARGV[1] - ARGV[2])
if redis.call('zcard', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('zadd', KEYS[1], ARGV[1], ARGV[4])
redis.call('pexpire', KEYS[1], ARGV[2])
return 1
"""


class LockLost(RuntimeError):
    """The session lock expired while held (a stalled holder) and may belong to another now."""


@dataclass(frozen=True)
class Hold:
    key: str
    token: str
    fence: int  # strictly increasing per session: a later holder always has a larger one


_current_hold: contextvars.ContextVar[Hold | None] = contextvars.ContextVar("threadsage_hold", default=None)


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

    @asynccontextmanager
    async def session_lock(self, key: str) -> AsyncIterator[Hold]:
        hold = await self._acquire(key)
        renewing = asyncio.create_task(self._renew(hold), name=f"renew-{key}")
        token = _current_hold.set(hold)
        try:
            yield hold
        finally:
            _current_hold.reset(token)
            renewing.cancel()
            with suppress(asyncio.CancelledError):
                await renewing
            await self.redis.eval(_RELEASE, 1, self._lock_key(key), hold.token)

    async def still_holds(self, hold: Hold | None = None) -> bool:
        """Whether this holder still owns its lock (the one of the current task by default)."""
        hold = hold or _current_hold.get()
        if hold is None:
            return False
        return await self.redis.get(self._lock_key(hold.key)) == hold.token.encode()

    async def claim(self, key: str, ttl_seconds: float) -> bool:
        owner = claim_owner()
        return bool(await self.redis.eval(_CLAIM, 1, f"{self.prefix}claim:{key}", owner, max(1, int(ttl_seconds))))

    async def remember(self, key: str, value: str, ttl_seconds: float) -> None:
        await self.redis.set(f"{self.prefix}fact:{key}", value, ex=max(1, int(ttl_seconds)))

    async def recall(self, key: str) -> str | None:
        value = await self.redis.get(f"{self.prefix}fact:{key}")
        return value.decode() if value is not None else None

    async def allow(self, key: str, limit: int, window_seconds: float) -> bool:
        now_ms = int(time.time() * 1000)
        member = f"{now_ms}-{secrets.token_hex(4)}"
        allowed = await self.redis.eval(
            _ALLOW, 1, f"{self.prefix}rate:{key}", now_ms, int(window_seconds * 1000), limit, member
        )
        return bool(allowed)

    # --- the lock --------------------------------------------------------------------------

    def _lock_key(self, key: str) -> str:
        return f"{self.prefix}lock:{key}"

    async def _acquire(self, key: str) -> Hold:
        token = secrets.token_hex(16)
        deadline = time.monotonic() + self.wait_timeout
        pause = 0.01
        while True:
            if await self.redis.set(self._lock_key(key), token, nx=True, px=int(self.lock_ttl * 1000)):
                fence = await self.redis.incr(f"{self.prefix}fence:{key}")
                return Hold(key, token, int(fence))
            if time.monotonic() > deadline:
                raise TimeoutError(f"session {key} stayed locked for {self.wait_timeout:.0f} s")
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.2)

    async def _renew(self, hold: Hold) -> None:
        """Extend the expiry at a third of the TTL while the holder works; stop if it was lost."""
        while True:
            await asyncio.sleep(self.lock_ttl / 3)
            renewed = await self.redis.eval(_RENEW, 1, self._lock_key(hold.key), hold.token, int(self.lock_ttl * 1000))
            if not renewed:
                log.warning("lost the lock of session %s (fence %d)", hold.key, hold.fence)
                return
