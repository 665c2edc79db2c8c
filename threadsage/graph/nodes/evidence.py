"""Searching for evidence: the knowledge base, and the files attached in this conversation."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from threadsage.adapters.documents.attachments import best_attached, with_attached
from threadsage.adapters.reasoning.base import Passage, passage
from threadsage.graph.context import BrainContext
from threadsage.graph.state import ConversationState


async def search(
    state: ConversationState, ctx: BrainContext, query: str, k: int, paths: Sequence[str] | None = None
) -> list[Passage]:
    """The `k` best passages for `query` within the place's categories (and `paths`, if given).
    The session's attached passages are ranked in a thread (tokenising them takes a while) at
    the same time as the knowledge base is searched."""
    attached = state.get("attached") or []
    found, mine = await asyncio.gather(
        ctx.kb.search(query, k, state.get("categories"), paths),
        asyncio.to_thread(best_attached, query, attached, k, paths) if attached else _nothing(),
    )
    hits = [passage(h) for h in found]
    return with_attached(hits, mine, k) if mine else hits


async def _nothing() -> list[Passage]:
    return []
