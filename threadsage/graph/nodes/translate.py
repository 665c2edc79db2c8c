"""The route's first search, across languages: the question as asked and, when it is not in the
documents' language, its translation, fused by reciprocal rank (threadsage/adapters/questions/translation.py
says when and why). Later hops search with both queries joined, so a rewrite or a rerank pool
does not fall back to words the documents do not use. The question as asked is searched while the
translation is being written, not after it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from threadsage.adapters.questions.translation import fused
from threadsage.adapters.reasoner import Passage
from threadsage.graph.context import BrainContext
from threadsage.graph.nodes.common import calls, traced
from threadsage.graph.nodes.evidence import search
from threadsage.graph.state import ConversationState

AFTER_TRANSLATION = 1  # the route call that must still fit in the turn's budget


async def search_across(
    state: ConversationState, ctx: BrainContext, query: str, k: int, paths: Sequence[str] | None
) -> tuple[list[Passage], str, ConversationState]:
    """The `k` best passages for `query`, the query later hops search with, and the state update
    of the translation (its call and its trace step; nothing when there was none)."""
    translator = ctx.translator
    target = translator.target(state["question"]) if translator else None
    if translator is None or target is None:
        return await search(state, ctx, query, k, paths), query, {}
    if calls(state, translator.model_calls + AFTER_TRANSLATION) > ctx.policy.llm_budget:
        update: ConversationState = {"trace": traced(state, "translate", "skipped: no model call to spare")}
        return await search(state, ctx, query, k, paths), query, update
    # The question as asked is searched while the translation call runs: it is needed either way.
    as_asked = asyncio.ensure_future(search(state, ctx, query, k, paths))
    try:
        translation, note = await translator.translated(query, target)
    except BaseException:
        as_asked.cancel()
        raise
    update = {"llm_calls": calls(state, translator.model_calls), "trace": traced(state, "translate", note)}
    if translation is None:
        return await as_asked, query, update
    asked, translated = await asyncio.gather(as_asked, search(state, ctx, translation, k, paths))
    return fused(asked, translated, lambda p: p["id"], k), f"{query} {translation}", update
