"""Work that runs after the platform has been acknowledged.

Tasks are kept referenced until done (asyncio only keeps weak references), failures are logged
rather than lost, and shutdown waits for what is in flight. Tasks of one key (`spawn_in_order`: a
conversation's) run one after another, in the order they were spawned — as the turn queue runs the
jobs of one order key — so that a message's work never overtakes the one before it (a question sent
right after a file: the file is read first).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Coroutine
from typing import Any

log = logging.getLogger(__name__)


class BackgroundTasks:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._last: dict[str, asyncio.Task[Any]] = {}  # per key, the task spawned last

    def spawn(self, work: Coroutine[Any, Any, Any], name: str = "") -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(work, name=name or None)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def spawn_in_order(self, key: str, work: Awaitable[Any], name: str = "") -> asyncio.Task[Any]:
        """`work` once the task spawned before it with the same `key` is done (whatever its outcome)."""
        previous = self._last.get(key)
        task = self.spawn(_after(previous, work), name)
        self._last[key] = task
        task.add_done_callback(lambda done: self._last.pop(key) if self._last.get(key) is done else None)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed", task.get_name(), exc_info=task.exception())

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def drain(self, timeout: float = 30.0) -> None:
        """Wait for the tasks in flight (and any they start), up to `timeout` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._tasks and loop.time() < deadline:
            await asyncio.wait(set(self._tasks), timeout=max(0.0, deadline - loop.time()))


async def _after(previous: asyncio.Task[Any] | None, work: Awaitable[Any]) -> Any:
    if previous is not None and not previous.done():
        await asyncio.wait([previous])
    return await work
