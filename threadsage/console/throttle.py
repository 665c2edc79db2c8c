"""Wrong console passwords counted per client address: past `limit` within a window the address
may not try again until the window ends (429 with Retry-After), so the token cannot be guessed at
speed and the log gets two lines a window per address, not one per guess. Kept in the process:
each process that serves the console counts its own. Bounded: past `capacity` addresses the
one that failed least recently is forgotten."""

from __future__ import annotations

import math
import time
from collections.abc import Callable


class SignInThrottle:
    def __init__(
        self,
        limit: int = 5,
        window: float = 60.0,
        capacity: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit, self.window, self.capacity = limit, window, capacity
        self._clock = clock
        self._failures: dict[str, tuple[float, int]] = {}  # address → (window's start, failures in it)

    def __len__(self) -> int:
        return len(self._failures)

    def retry_after(self, address: str) -> int:
        """Seconds until `address` may try again; 0 when it may now."""
        start, count = self._failures.get(address, (0.0, 0))
        left = start + self.window - self._clock()
        return math.ceil(left) if count >= self.limit and left > 0 else 0

    def failed(self, address: str) -> int:
        """Count a wrong password from `address`: its failures in the current window."""
        now = self._clock()
        start, count = self._failures.pop(address, (now, 0))
        if now - start >= self.window:
            start, count = now, 0
        self._failures[address] = (start, count + 1)
        if len(self._failures) > self.capacity:  # the address that failed least recently
            del self._failures[next(iter(self._failures))]
        return count + 1

    def succeeded(self, address: str) -> None:
        self._failures.pop(address, None)
