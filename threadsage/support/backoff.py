"""Growing pauses between tries, for every loop that waits for something to come back: the turn
queue's outage retries, a worker reconnecting to Redis, Telegram's long polling, the connectors'
HTTP. One rule — `first` × `factor`^n, at most `cap` — so that no loop hand-rolls its own.

Not tenacity: these loops are not one call retried. Their tries are counted in Redis (a job's
attempt), start over after a success (polling, reconnecting) or take the server's `Retry-After`
instead, and their pause ends early when the process stops (docs/decisions.md)."""

from __future__ import annotations

import asyncio
import math
from contextlib import suppress


class Backoff:
    """The pause before try n+1 is `delay(n)`; `next()` counts the tries itself, `reset()`
    starts over (after a success)."""

    def __init__(self, first: float, cap: float = math.inf, factor: float = 2.0) -> None:
        if first <= 0 or factor < 1 or cap < first:
            raise ValueError("a backoff needs first > 0, factor >= 1 and cap >= first")
        self.first, self.cap, self.factor = first, cap, factor
        self._tries = 0

    def delay(self, attempt: int) -> float:
        """The pause after the try numbered `attempt` (counted from 0, or from wherever the
        caller's count starts: a job's attempt in Redis starts at 1)."""
        if attempt < 0:
            raise ValueError("attempt must be >= 0")
        try:
            grown = self.first * self.factor**attempt
        except OverflowError:  # far beyond any cap
            return self.cap
        return min(self.cap, grown)

    def next(self) -> float:
        """The pause after one more failed try."""
        pause = self.delay(self._tries)
        self._tries += 1
        return pause

    def reset(self) -> None:
        self._tries = 0


async def wait_or_stop(seconds: float, stop: asyncio.Event | None = None) -> None:
    """Wait `seconds`, or less when `stop` is set meanwhile (a stopping process waits no more)."""
    if stop is None:
        await asyncio.sleep(seconds)
        return
    with suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
