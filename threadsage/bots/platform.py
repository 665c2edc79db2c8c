"""What a platform gives the process that runs it: the contract each platform package fulfils
(`PLATFORM` in `bots/slack`, `bots/telegram`), and all a new front-end (Discord, Teams…) has to
implement. `app` loops over the platforms; it knows none of them by name.

- whether it is configured (its token set);
- its bot, built the same way on every platform — `(settings, chat, coordinator, signer=None, *,
  dispatch=None, receive=True)` — and run the same way (`async with bot.running()`): it receives
  the platform's deliveries itself (`receive`: Socket Mode, polling, or a webhook whose route is
  in `routes`), hands each to the turn queue (`dispatch`) or works on it at once, performs the
  jobs a worker takes from the queue (`perform`, `give_up`), and says things unasked
  (`announcer`: the digest, follow-ups);
- its receiving end alone, for `threadsage serve`: the routes that put each delivery in the turn
  queue, with no chat service behind them (`front_end`).

A turn is shown through `chat.showing.Display` (see docs/architecture.md, "The seam for front-ends").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.routing import Route

from threadsage.bots.tokens import Signer
from threadsage.chat import ChatService
from threadsage.chat.digest import Announcer
from threadsage.delivery.coordination import Coordinator
from threadsage.delivery.jobs import Job
from threadsage.settings.environment import Settings
from threadsage.settings.sections import PlatformSettings

Dispatch = Callable[[Job], Awaitable[object]]


class Bot(Protocol):
    @property
    def routes(self) -> list[Route]:
        """What the process serves for it while it runs (a webhook, the Events API)."""

    def running(self) -> AbstractAsyncContextManager[Any]:
        """Started on entry (its deliveries received when it `receive`s), stopped on exit with the
        turns in flight finished."""

    async def perform(self, job: Job) -> None:
        """A job from the turn queue, worked on."""

    async def give_up(self, job: Job) -> None:
        """A job no worker could finish: the person waiting is told."""

    def announcer(self) -> Announcer:
        """How it posts what nobody asked for (the digest, a gap's follow-up)."""


class MakesBot(Protocol):
    """A bot is built from the whole `Settings`: it hands their sections to the parts it puts together."""

    def __call__(
        self,
        settings: Settings,
        chat: ChatService,
        coordinator: Coordinator,
        signer: Signer | None = None,
        *,
        dispatch: Dispatch | None = None,
        receive: bool = True,
    ) -> Bot: ...


@dataclass(frozen=True)
class Platform:
    name: str
    configured: Callable[[PlatformSettings], bool]
    bot: MakesBot
    # The receiving end alone (`threadsage serve`): its routes, each delivery put in the turn queue.
    # Called before the process opens anything, so that settings it cannot work with fail first.
    front_end: Callable[[Settings, Signer, Dispatch], AbstractAsyncContextManager[list[Route]]]
