"""Follow-ups of gaps closed while no bot of their platform ran (`threadsage ingest` on its own,
docs/console.md "The knowledge loop"): a process with bots sends them soon after its bots start,
then looks again every few minutes (an ingest beside a bot on a Milvus server). Each is claimed
in the records before it is sent, so several processes send it once."""

from __future__ import annotations

import asyncio
import logging
from contextlib import suppress

from threadsage.chat import ChatService

log = logging.getLogger(__name__)

FIRST_AFTER = 5.0  # seconds: the bots have registered their notifiers
EVERY = 300.0  # seconds


async def send_waiting_follow_ups(chat: ChatService, stop: asyncio.Event, first: float = FIRST_AFTER) -> None:
    """Until `stop`: the waiting follow-ups, once shortly after the start, then every `EVERY`."""
    wait = first
    while not stop.is_set():
        with suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), wait)
        if stop.is_set():
            return
        try:
            await chat.knowledge.send_waiting()
        except Exception:
            log.exception("could not send the follow-ups waiting for a bot")
        wait = EVERY
