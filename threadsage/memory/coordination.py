"""Coordination the chat service needs: one turn at a time per session, each platform message
or click handled once, and a per-person rate limit. In-process here; a Redis version can stand
behind the same interface when several processes share the work.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol


class Coordinator(Protocol):
    def session_lock(self, key: str) -> AbstractAsyncContextManager[None]: ...

    async def claim(self, key: str, ttl_seconds: float) -> bool:
        """True the first time a key is claimed within its TTL, False after that."""

    async def allow(self, key: str, limit: int, window_seconds: float) -> bool:
        """True while `key` has been allowed fewer than `limit` times in the window."""

    async def still_holds(self) -> bool:
        """Whether the current task still holds the session lock it took (a lock that can
        expire under a stalled holder can be lost)."""


class LocalCoordinator:
    """For one process: asyncio locks per session (dropped when nobody waits) and a bounded
    TTL map of claimed keys."""

    def __init__(self, max_claims: int = 100_000, max_rate_keys: int = 100_000) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._waiters: dict[str, int] = {}
        self._claims: OrderedDict[str, float] = OrderedDict()
        self._max_claims = max_claims
        self._events: OrderedDict[str, deque[float]] = OrderedDict()
        self._max_rate_keys = max_rate_keys

    @asynccontextmanager
    async def session_lock(self, key: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._waiters[key] = self._waiters.get(key, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._waiters[key] -= 1
            if not self._waiters[key]:
                del self._waiters[key], self._locks[key]

    async def still_holds(self) -> bool:
        return True  # in-process locks do not expire

    async def claim(self, key: str, ttl_seconds: float) -> bool:
        now = time.monotonic()
        expires = self._claims.get(key)
        if expires is not None and expires > now:
            return False
        self._claims[key] = now + ttl_seconds
        self._claims.move_to_end(key)
        while len(self._claims) > self._max_claims:
            self._claims.popitem(last=False)
        return True

    async def allow(self, key: str, limit: int, window_seconds: float) -> bool:
        now = time.monotonic()
        events = self._events.setdefault(key, deque())
        self._events.move_to_end(key)
        while len(self._events) > self._max_rate_keys:  # the least recently seen go first
            self._events.popitem(last=False)
        while events and events[0] <= now - window_seconds:
            events.popleft()
        if len(events) >= limit:
            return False
        events.append(now)
        return True
