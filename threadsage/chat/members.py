"""Knowledge only some people may read: a private Slack channel's resolved threads, kept in the
category `slack-members-<channel id>` (`ingestion.connectors.slack`).

Fail-closed: a turn reads such a category only when its front-end vouched that the person is a
member of that channel and asks in a DM or in that channel (`Turn.members_of`); every other turn —
another channel, Telegram, the terminal, the MCP server, a person of another organisation — has it
taken out of what it may read, whatever the place's own categories say. Should the categories not
be readable, the turn fails as it would with the knowledge base away. The chat service narrows a
turn under its session's lock: an await before the lock would let a later message overtake it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.adapters.knowledge.collection import MEMBERS_PREFIX, members_only

# Seconds the knowledge base's categories are remembered: listing them reads every chunk's id, and
# a new members-only category (a private channel's first resolved thread) may wait that long.
READ_EVERY = 300.0


class MembersOnly:
    """The knowledge base's categories, and which of them are for a channel's members only."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self._read: tuple[float, list[str]] | None = None

    async def channels(self) -> list[str]:
        """The private channels whose threads the knowledge base holds."""
        return [c.removeprefix(MEMBERS_PREFIX) for c in await self._categories() if members_only(c)]

    async def readable(self, categories: Sequence[str] | None, members_of: frozenset[str]) -> tuple[str, ...] | None:
        """What a turn may read: `categories` (None: every one) without the members-only categories
        of channels not in `members_of`."""
        every = await self._categories()
        hidden = {c for c in every if members_only(c) and c.removeprefix(MEMBERS_PREFIX) not in members_of}
        if not hidden:
            return None if categories is None else tuple(categories)
        return tuple(c for c in (every if categories is None else categories) if c not in hidden)

    async def counts(self, categories: Sequence[str] | None) -> dict[str, int]:
        """Documents per category of `categories` (None: every one) — never the members-only ones,
        whose very names would tell who talks about what."""
        counts = await asyncio.to_thread(self.kb.category_counts)
        listed = {c: n for c, n in sorted(counts.items()) if not members_only(c)}
        return {c: n for c, n in listed.items() if categories is None or c in categories}

    async def _categories(self) -> list[str]:
        if self._read is None or time.monotonic() - self._read[0] > READ_EVERY:
            counts = await asyncio.to_thread(self.kb.category_counts)
            self._read = (time.monotonic(), list(counts))
        return self._read[1]
