"""Searching for evidence: the knowledge base, and the files attached in this conversation."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Sequence

from threadsage.adapters.documents.attachments import (
    best_attached,
    from_the_files,
    points_at_attachment,
    with_attached,
)
from threadsage.adapters.knowledge import KnowledgeBase, passage
from threadsage.adapters.meaning.ordering import POOL, by_meaning
from threadsage.adapters.meaning.recall import MeaningIndex
from threadsage.adapters.reasoner import Passage
from threadsage.graph.context import BrainContext
from threadsage.graph.state import ConversationState


async def search(
    state: ConversationState, ctx: BrainContext, query: str, k: int, paths: Sequence[str] | None = None
) -> list[Passage]:
    """The `k` best passages for `query` within the place's categories (and `paths`, if given).
    The session's attached passages are ranked in a thread (tokenising them takes a while) at
    the same time as the knowledge base is searched; a question that points at them ("what does
    the attached file say…") is answered from them alone. With the passages' `meaning`, the
    knowledge base's candidates are those closest in meaning too, and are read by it (`ordering`)."""
    attached = state.get("attached") or []
    pointed = attached and points_at_attachment(query)
    if pointed and (mine := await asyncio.to_thread(from_the_files, query, attached, k, paths)):
        return mine
    categories = state.get("categories")
    found, mine, close = await asyncio.gather(
        ctx.kb.search(query, max(k, POOL) if ctx.meaning is not None else k, categories, paths),
        asyncio.to_thread(best_attached, query, attached, k, paths) if attached else _nothing(),
        asyncio.to_thread(closest_in_meaning, ctx.kb, ctx.meaning, query, categories, paths)
        if ctx.meaning is not None
        else _nothing(),
    )
    hits = with_closest([passage(h) for h in found], close)
    if ctx.meaning is not None:
        hits = await asyncio.to_thread(by_meaning, query, hits, k)
    return with_attached(hits, mine, k) if mine else hits


def closest_in_meaning(
    kb: KnowledgeBase,
    meaning: MeaningIndex,
    query: str,
    categories: Sequence[str] | None,
    paths: Sequence[str] | None,
) -> list[Passage]:
    """The passages closest in meaning to `query` among all those this place may read."""
    return [passage(h) for h in kb.hits_of(meaning.closest(query, POOL), categories, paths)]


def with_closest(found: list[Passage], close: list[Passage]) -> list[Passage]:
    """The words' candidates, then those closest in meaning that they do not hold. A place found by
    the words holds the pieces the words ranked (`search.by_place`), which are often not the piece
    that reads closest: a long section's first piece shares the question's words, a later one answers it."""
    held: defaultdict[tuple[str, str], str] = defaultdict(str)
    for p in found:
        held[p["path"], p["heading"]] += p["text"]
    return found + [p for p in close if p["text"].strip()[:200] not in held[p["path"], p["heading"]]]


async def _nothing() -> list[Passage]:
    return []
