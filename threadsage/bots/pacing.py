"""Showing the newest of many updates, within what a platform takes.

A model writes a few tokens a second and every draft carries the whole text so far, while a
platform takes an edit every fraction of a second (or every few seconds in a Telegram group). So
a front-end keeps only the newest draft and shows it when its time comes: what arrives sooner
waits, and what is overtaken while it waits is never sent (`Pacer`).

Many turns at once share a platform's limits as well: Telegram's 20 messages a minute in a group
and 30 a second in all, Slack's tiers per method and workspace (`chat.appendStream` Tier 4, 100+
calls a minute; `chat.update` Tier 3, 50+) and its one message a second in a channel. `Windows`
keeps every call within them, so that no call meets flood control: a call the turn needs (its
reply, the end of a stream) waits for room; a call that only shows progress (a draft, a step, an
append) is made `optional()` — it takes room only beyond what the turns in flight still need for
their replies, and otherwise raises `NotNow`, so the pacer offers the newest text again later.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class Limit:
    """At most `calls` calls in any `seconds` (a sliding window: stricter than a bucket that
    refills, so it keeps within either reading of a documented "N a minute")."""

    calls: int
    seconds: float


Rule = tuple[Hashable, Limit]  # a limit, and what it counts per (a chat, a method, …)


class NotNow(Exception):
    """An optional call found no spare room: `wait` seconds until some may free up."""

    def __init__(self, wait: float) -> None:
        super().__init__(f"no room for an optional call for {wait:.2f} s")
        self.wait = wait


_OPTIONAL: ContextVar[bool] = ContextVar("optional_call", default=False)


@contextmanager
def optional() -> Iterator[None]:
    """The platform calls made inside show progress only: `Windows.admit` may refuse them."""
    token = _OPTIONAL.set(True)
    try:
        yield
    finally:
        _OPTIONAL.reset(token)


class Windows:
    """The calls made lately, per rule's key, and the turns in flight that will need room."""

    def __init__(self) -> None:
        self._made: dict[Hashable, deque[float]] = {}
        self._answering: Counter[Hashable] = Counter()

    async def admit(self, rules: Sequence[Rule]) -> None:
        """Room for one call under every rule: waited for, or for an optional call taken only
        when spare (else `NotNow`)."""
        if not rules:
            return
        if _OPTIONAL.get():
            self._take_spare(rules)
            return
        while (wait := self._wait(rules, reserve=False)) > 0:  # noqa: ASYNC110 - room comes with time, not an event
            await asyncio.sleep(wait)
        self._record(rules)

    @contextmanager
    def answering(self, keys: Iterable[Hashable]) -> Iterator[None]:
        """A turn in flight: each of `keys` keeps one call's room for its reply."""
        held = list(keys)
        self._answering.update(held)
        try:
            yield
        finally:
            self._answering.subtract(held)
            for key in held:
                if self._answering[key] <= 0:
                    del self._answering[key]

    def _take_spare(self, rules: Sequence[Rule]) -> None:
        wait = self._wait(rules, reserve=True)
        if wait > 0:
            raise NotNow(wait)
        self._record(rules)

    def _wait(self, rules: Sequence[Rule], reserve: bool) -> float:
        """0 when every rule has room (beyond the turns' reserve, with `reserve`); else the
        seconds until the fullest may have."""
        now, wait = time.monotonic(), 0.0
        for key, limit in rules:
            made = self._made.get(key)
            while made and made[0] <= now - limit.seconds:
                made.popleft()
            if made is not None and not made:  # a quiet chat is forgotten
                del self._made[key]
                made = None
            used = (len(made) if made else 0) + (self._answering[key] if reserve else 0)
            if used >= limit.calls:
                oldest = made[0] if made else now
                wait = max(wait, oldest + limit.seconds - now, limit.seconds / limit.calls)
        return wait

    def _record(self, rules: Sequence[Rule]) -> None:
        now = time.monotonic()
        for key, _ in rules:
            self._made.setdefault(key, deque()).append(now)


class Pacer:
    """Calls `show` at most every `every` seconds; `show` reads the newest value itself (and keeps
    it, should it raise `NotNow`)."""

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
        """Shows the newest now; should the platform's limits have no room for it (`NotNow`),
        the newest by then is offered again once they may."""
        self._shown_at = time.monotonic()
        try:
            await self._show()
        except NotNow as full:
            self._later = asyncio.create_task(self._show_after(max(full.wait, self.every)))

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
