"""Telegram's flood limits, kept by the bot's one rate limiter (python-telegram-bot's
`BaseRateLimiter`: every request of the bot passes through it).

The Bot API FAQ: "not more than 30 messages per second" in all, and in a group "not more than 20
messages per minute". Every call that sends or changes a message (and a chat action) is admitted
through `pacing.Windows` first: one a turn needs waits for room; one made `optional()` (a draft,
"typing…") takes it only beyond what the group's turns in flight keep for their replies, else
raises `NotNow` and is shown later or not at all. So 50 answers at once in groups wait for no flood
control; should Telegram still answer 429 (another process of the same bot), its `retry_after` is
waited out, a few times, as PTB's own limiter does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Hashable
from contextlib import AbstractContextManager
from typing import Any

from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter

from threadsage.bots.pacing import Limit, Rule, Windows

log = logging.getLogger(__name__)

# Each window a little longer than Telegram's: a call is counted when it leaves, Telegram counts it
# when it arrives, and the two clocks' difference (a slow connection) must not make 31 of 30.
OVERALL = Limit(30, 1.25)
IN_A_GROUP = Limit(20, 62.0)
MAX_RETRIES = 3
COUNTED_PREFIXES = ("send", "edit", "copy", "forward")  # sendMessage, editMessageText, sendChatAction, …

JSON = bool | dict[str, Any] | list[dict[str, Any]]


def group_of(chat_id: object) -> Hashable | None:
    """A group's (or channel's) key: a negative id or an @name; None for a private chat."""
    if isinstance(chat_id, str) and not chat_id.lstrip("-").isdigit():
        return ("group", chat_id)
    try:
        number = int(str(chat_id))
    except ValueError:
        return None
    return ("group", number) if number < 0 else None


def rules_of(endpoint: str, data: dict[str, Any]) -> list[Rule]:
    if not endpoint.startswith(COUNTED_PREFIXES):
        return []
    rules: list[Rule] = [("overall", OVERALL)]
    if (group := group_of(data.get("chat_id"))) is not None:
        rules.append((group, IN_A_GROUP))
    return rules


class FloodLimits(BaseRateLimiter[None]):
    def __init__(self) -> None:
        self.windows = Windows()

    async def initialize(self) -> None:
        """Nothing to open: the windows live in memory."""

    async def shutdown(self) -> None:
        """Nothing to close."""

    def answering(self, chat_id: int) -> AbstractContextManager[None]:
        """A turn in flight in the chat: a group keeps room for its reply."""
        group = group_of(chat_id)
        return self.windows.answering([group] if group is not None else [])

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, JSON]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: None,
    ) -> JSON:
        await self.windows.admit(rules_of(endpoint, data))
        for attempt in range(MAX_RETRIES + 1):
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as exc:
                if attempt == MAX_RETRIES:
                    raise
                # PTB's own limiter reads it so: the public attribute warns of its int form's end
                wait = exc._retry_after.total_seconds()
                log.warning("Telegram's flood control on %s: waiting %.1f s", endpoint, wait)
                await asyncio.sleep(wait + 0.1)
        raise AssertionError("unreachable")  # the loop returns or raises
