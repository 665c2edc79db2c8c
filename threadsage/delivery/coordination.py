"""Coordination the chat service needs: one turn at a time per session, each platform message
or click handled once, a per-person rate limit, and a few shared facts (which session a bot
message belongs to). In-process here; `RedisCoordinator` stands behind the same interface when
several processes share the work.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

from threadsage.delivery.current import claim_owner


class Coordinator(Protocol):
    """Everything the chat service and the bots ask of the coordination, in-process or on Redis."""

    def session_lock(self, key: str) -> AbstractAsyncContextManager[object]:
        """One turn at a time per session."""

    async def still_holds(self) -> bool:
        """Whether the current task still holds the session lock it took (a lock that can
        expire under a stalled holder can be lost)."""

    async def claim(self, key: str, ttl_seconds: float) -> bool:
        """True the first time a key is claimed within its TTL (and again for the same queue
        delivery, see `threadsage.delivery.current.Delivery`), False after that."""

    async def allow(
        self, key: str, limit: int, window_seconds: float, decision: str | None = None, decision_ttl: float = 0
    ) -> bool:
        """True while `key` has been allowed fewer than `limit` times in the window. With a
        `decision` key, decided once: the answer is kept under it for `decision_ttl` seconds and
        given again, without counting (a turn redelivered by the queue)."""

    async def remember(self, key: str, value: str, ttl_seconds: float) -> None:
        """Keep a small fact for `ttl_seconds`, for every process sharing the coordination."""

    async def recall(self, key: str) -> str | None:
        """A fact remembered and not yet expired, or None."""

    async def mark(self, key: str, item: str, ttl_seconds: float) -> None:
        """Add `item` to the marks under `key` (a set, kept `ttl_seconds` after its last mark):
        what one process noticed for another to take up (a Slack thread that changed)."""

    async def take_marks(self, key: str) -> set[str]:
        """The marks under `key`, removed as they are taken: each is taken once."""


class LocalCoordinator:
    """For one process: asyncio locks per session (dropped when nobody waits) and bounded TTL
    maps of claimed keys and remembered facts."""

    def __init__(self, max_claims: int = 100_000, max_rate_keys: int = 100_000) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._waiters: dict[str, int] = {}
        self._claims = _ExpiringMap(max_claims)
        self._facts = _ExpiringMap(max_claims)
        self._marks: dict[str, tuple[float, set[str]]] = {}
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
        owner = claim_owner()
        holder = self._claims.get(key)
        if holder is not None and holder != owner:
            return False
        self._claims.put(key, owner, ttl_seconds)
        return True

    async def remember(self, key: str, value: str, ttl_seconds: float) -> None:
        self._facts.put(key, value, ttl_seconds)

    async def recall(self, key: str) -> str | None:
        return self._facts.get(key)

    async def mark(self, key: str, item: str, ttl_seconds: float) -> None:
        now = time.monotonic()
        self._marks = {k: v for k, v in self._marks.items() if v[0] > now}  # the expired go
        _, items = self._marks.get(key, (0.0, set()))
        self._marks[key] = (now + ttl_seconds, items | {item})

    async def take_marks(self, key: str) -> set[str]:
        expires, items = self._marks.pop(key, (0.0, set()))
        return items if expires > time.monotonic() else set()

    async def allow(
        self, key: str, limit: int, window_seconds: float, decision: str | None = None, decision_ttl: float = 0
    ) -> bool:
        if decision is not None and (decided := self._facts.get(f"rate-decision:{decision}")) is not None:
            return decided == "1"
        allowed = self._count(key, limit, window_seconds)
        if decision is not None:
            self._facts.put(f"rate-decision:{decision}", "1" if allowed else "0", decision_ttl)
        return allowed

    def _count(self, key: str, limit: int, window_seconds: float) -> bool:
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


class _ExpiringMap:
    """A bounded map whose entries expire; the least recently written go first when full."""

    def __init__(self, max_entries: int) -> None:
        self._entries: OrderedDict[str, tuple[float, str]] = OrderedDict()
        self._max_entries = max_entries

    def get(self, key: str) -> str | None:
        entry = self._entries.get(key)
        return entry[1] if entry is not None and entry[0] > time.monotonic() else None

    def put(self, key: str, value: str, ttl_seconds: float) -> None:
        self._entries[key] = (time.monotonic() + ttl_seconds, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)
