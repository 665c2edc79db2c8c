"""Coordination the chat service needs: one turn at a time per session, and each platform
message or click handled once. In-process here; a Redis version can stand behind the same
interface when several processes share the work.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Protocol


class Coordinator(Protocol):
    def session_lock(self, key: str) -> AsyncIterator[None]: ...

    async def claim(self, key: str, ttl_seconds: float) -> bool:
        """True the first time a key is claimed within its TTL, False after that."""


class LocalCoordinator:
    """For one process: asyncio locks per session (dropped when nobody waits) and a bounded
    TTL map of claimed keys."""

    def __init__(self, max_claims: int = 100_000) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._waiters: dict[str, int] = {}
        self._claims: OrderedDict[str, float] = OrderedDict()
        self._max_claims = max_claims

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
