"""What travels through the turn queue, and what a worker does with it."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import ValidationError

log = logging.getLogger(__name__)

P = TypeVar("P")


@dataclass(frozen=True)
class Job:
    """One platform delivery as received, for a worker to handle.

    `order_key` names the conversation: jobs with the same key run one after another, in the
    order they were queued (jobs queued at the same instant by two front-ends have no order)."""

    platform: str
    kind: str
    payload: dict[str, Any]
    order_key: str


class Performer(Protocol):
    """What a worker does with jobs: the platforms' bots."""

    async def perform(self, job: Job) -> None:
        """Handle the delivery: answer the turn, record the vote…"""

    async def give_up(self, job: Job) -> None:
        """Tell the person their turn cannot be answered: it stopped every worker that tried."""


@dataclass(frozen=True)
class Handler(Generic[P]):
    """What a bot does with one kind of job: `parse` reads its payload into the kind's type
    (raising on one it cannot take), `perform` does the work, `give_up` apologises (None: there
    is nobody to tell)."""

    kind: str
    parse: Callable[[Any], P]
    perform: Callable[[P], Awaitable[None]]
    give_up: Callable[[P], Awaitable[None]] | None = None


class Handlers:
    """A bot as a `Performer`: each job to the handler of its kind. A job of a kind this version
    does not know, or whose payload it cannot read, is logged and finished: tried again it would
    fail again, and the turns queued behind it in its conversation would wait."""

    def __init__(self, platform: str, handlers: Iterable[Handler[Any]]) -> None:
        self.platform = platform
        self._handlers = {handler.kind: handler for handler in handlers}

    async def perform(self, job: Job) -> None:
        if read := self._read(job):
            handler, payload = read
            await handler.perform(payload)

    async def give_up(self, job: Job) -> None:
        read = self._read(job)
        if read is None:
            return
        handler, payload = read
        if handler.give_up is not None:
            await handler.give_up(payload)

    def _read(self, job: Job) -> tuple[Handler[Any], Any] | None:
        handler = self._handlers.get(job.kind)
        if handler is None:
            known = ", ".join(sorted(self._handlers))
            log.error("%s job of unknown kind %r dropped (this version handles %s)", self.platform, job.kind, known)
            return None
        try:
            return handler, handler.parse(job.payload)
        except Exception as exc:  # noqa: BLE001 - whatever a payload not of its kind makes a parser raise
            log.error("%s %s job dropped: its payload cannot be read (%s)", self.platform, job.kind, unreadable(exc))
            return None


def unreadable(exc: Exception) -> str:
    """Why a payload could not be read, in one line: where and what, not the values (a
    validation error would quote people's messages)."""
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'payload'}: {e['msg']}" for e in exc.errors())
    return f"{type(exc).__name__}: {exc}"[:200]
