"""Searching for evidence: the knowledge base, and the files attached in this conversation."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from threadsage.adapters.documents.attachments import (
    best_attached,
    from_the_files,
    points_at_attachment,
    with_attached,
)
from threadsage.adapters.knowledge import passage
from threadsage.adapters.meaning.ordering import by_meaning
from threadsage.adapters.reasoner import Passage
from threadsage.graph.context import BrainContext
from threadsage.graph.state import ConversationState


async def search(
    state: ConversationState, ctx: BrainContext, query: str, k: int, paths: Sequence[str] | None = None
) -> list[Passage]:
    """The `k` best passages for `query` within the place's categories (and `paths`, if given).
    The session's attached passages are ranked in a thread (tokenising them takes a while) at
    the same time as the knowledge base is searched; a question that points at them ("what does
    the attached file say…") is answered from them alone. With `meaning_pool`, the knowledge base's
    candidates are read by meaning too (`ordering.by_meaning`)."""
    attached = state.get("attached") or []
    pointed = attached and points_at_attachment(query)
    if pointed and (mine := await asyncio.to_thread(from_the_files, query, attached, k, paths)):
        return mine
    found, mine = await asyncio.gather(
        ctx.kb.search(query, max(k, ctx.meaning_pool), state.get("categories"), paths),
        asyncio.to_thread(best_attached, query, attached, k, paths) if attached else _nothing(),
    )
    hits = [passage(h) for h in found]
    if ctx.meaning_pool:
        hits = await asyncio.to_thread(by_meaning, query, hits, k)
    return with_attached(hits, mine, k) if mine else hits


async def _nothing() -> list[Passage]:
    return []
