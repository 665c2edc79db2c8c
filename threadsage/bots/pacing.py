"""Showing the newest of many updates, at most every so many seconds.

A model writes a few tokens a second and every draft carries the whole text so far, while a
platform takes an edit every fraction of a second (or every few seconds in a Telegram group). So
a front-end keeps only the newest draft and shows it when its time comes: what arrives sooner
waits, and what is overtaken while it waits is never sent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class Pacer:
    """Calls `show` at most every `every` seconds; `show` reads the newest value itself."""

    def __init__(self, every: float, show: Callable[[], Awaitable[None]]) -> None:
        self.every = every
        self._show = show
        self._shown_at = 0.0
        self._later: asyncio.Task[None] | None = None

    async def offer(self) -> None:
        """Shows now if the last showing is `every` seconds old; else once it is (one waits)."""
        if self._later is not None:
            return  # the newest is shown when its time comes
        wait = self._shown_at + self.every - time.monotonic()
        if wait > 0:
            self._later = asyncio.create_task(self._show_after(wait))
            return
        await self.show_now()

    async def show_now(self) -> None:
        self._shown_at = time.monotonic()
        await self._show()

    async def cancel(self) -> None:
        """Nothing more is shown: what waits is dropped."""
        later, self._later = self._later, None
        if later is not None:
            later.cancel()
            await asyncio.gather(later, return_exceptions=True)

    def cancel_soon(self) -> None:
        """`cancel` where no await is possible."""
        if self._later is not None:
            self._later.cancel()

    async def _show_after(self, wait: float) -> None:
        try:
            await asyncio.sleep(wait)
            await self.show_now()
        finally:
            if self._later is asyncio.current_task():
                self._later = None
