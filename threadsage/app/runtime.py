"""The composition root: settings in, a ready `ChatService` out (`open_chat_service`), or with
the parts a process tends beside it (`open_runtime`).

Opens the knowledge base, the coordinator, the reasoning back-end and the checkpointer, and
compiles the graph once for the process.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from threadsage.adapters.documents.attachments import MB, AttachmentReader
from threadsage.adapters.documents.reading import Budget, use_budget
from threadsage.adapters.knowledge import DenseUse, KnowledgeBase, open_knowledge_base
from threadsage.adapters.knowledge.embeddings import make_embedder
from threadsage.adapters.meaning import minilm
from threadsage.adapters.meaning.recall import MeaningIndex
from threadsage.adapters.questions.translation import make_translator
from threadsage.adapters.reasoner import Reasoner
from threadsage.adapters.reasoning.llm.back_end import LLMReasoner
from threadsage.adapters.reasoning.llm.research import LLMResearcher
from threadsage.adapters.reasoning.offline.back_end import OfflineReasoner
from threadsage.adapters.reasoning.offline.research import OfflineResearcher
from threadsage.adapters.reasoning.rerank import make_reranker
from threadsage.adapters.reasoning.research import Researcher
from threadsage.chat import ChatService
from threadsage.chat.digest import Digest
from threadsage.chat.knowledge_loop import KnowledgeLoop
from threadsage.chat.recording import Recording
from threadsage.delivery.coordination import Coordinator, LocalCoordinator
from threadsage.delivery.redis_coordination import RedisCoordinator, connect
from threadsage.graph.build import build_graph
from threadsage.graph.context import BrainContext, Policy
from threadsage.memory.checkpoints import open_checkpointer
from threadsage.records.digest import DigestRecords
from threadsage.records.knowledge import KnowledgeRecords
from threadsage.records.turns import Closest, QuestionStore
from threadsage.records.votes import FeedbackStore
from threadsage.settings.environment import Settings
from threadsage.support import text
from threadsage.support.handoff import parse_handoff
from threadsage.tools.toolbox import Toolbox


@dataclass(frozen=True)
class Runtime:
    """A chat service and the parts a process tends beside it: the bots share its coordinator,
    retention prunes its checkpointer and recorded turns, the console reads them."""

    chat: ChatService
    coordinator: Coordinator
    kb: KnowledgeBase
    checkpointer: BaseCheckpointSaver[Any]
    questions: QuestionStore
    digest: Digest | None = None  # THREADSAGE_DIGEST: the process runs its schedule once the bots registered


@asynccontextmanager
async def open_chat_service(
    settings: Settings,
    kb: KnowledgeBase | None = None,
    coordinator: Coordinator | None = None,
    check_redis: bool = True,
) -> AsyncIterator[ChatService]:
    """The service on `settings` (see `open_runtime`)."""
    async with open_runtime(settings, kb, coordinator, check_redis) as runtime:
        yield runtime.chat


@asynccontextmanager
async def open_runtime(
    settings: Settings,
    kb: KnowledgeBase | None = None,
    coordinator: Coordinator | None = None,
    check_redis: bool = True,
) -> AsyncIterator[Runtime]:
    """The service on `settings`, with the knowledge base and coordinator given (shared with the
    front-ends) or its own. `check_redis`: fail at once when `REDIS_URL` does not answer. A worker
    passes False: its queue loop waits for Redis, and the coordinator connects when first used."""
    set_reading_budget(settings)  # for the sync of sources in this process too
    own_kb = kb is None
    kb = kb or open_knowledge_base(settings, make_embedder(settings, settings), DenseUse.of(settings))
    await asyncio.to_thread(warm_up, kb)
    try:
        async with AsyncExitStack() as stack:
            if coordinator is None:
                coordinator = await stack.enter_async_context(open_coordinator(settings, check_redis))
            checkpointer = await stack.enter_async_context(open_checkpointer(settings))
            reasoner = await stack.enter_async_context(open_reasoner(settings, coordinator, kb))
            reads_meaning = isinstance(reasoner, OfflineReasoner)
            if reads_meaning:  # its passages' meaning, kept on disk (`adapters.meaning`)
                minilm.keep_in(settings.data_dir / "meaning")
            feedback = FeedbackStore(checkpointer)
            await feedback.setup()
            knowledge = KnowledgeRecords(checkpointer)
            questions = QuestionStore(checkpointer, settings.record_questions, closest_in(kb), knowledge)
            await questions.setup()
            chat = ChatService(
                build_graph(checkpointer),
                BrainContext(
                    kb=kb,
                    reasoner=reasoner,
                    researcher=researcher_of(reasoner),
                    policy=Policy.from_settings(settings),
                    tools=Toolbox.from_settings(settings),
                    reranker=make_reranker(settings, reasoner),
                    translator=make_translator(settings, reasoner),
                    web_writer=reasoner.web_answer if isinstance(reasoner, LLMReasoner) else None,
                    meaning=MeaningIndex() if reads_meaning else None,
                ),
                coordinator,
                feedback=feedback,
                anyone_may_answer=settings.anyone_may_answer,
                rate_limit_per_minute=settings.rate_limit_per_minute,
                description=await describe(settings, kb, reasoner),
                attachments=AttachmentReader(
                    int(settings.max_attachment_mb * MB),
                    settings.chunk_chars,
                    settings.chunk_overlap,
                    Budget.of(settings),
                ),
                progress=settings.uses_language_model,  # the offline back-end answers in milliseconds
                handoff=parse_handoff(settings.handoff),
                recording=Recording(questions),
                loop=KnowledgeLoop.from_settings(settings, knowledge, kb, reasoner, coordinator),
            )
            digest = None
            if settings.digest:
                digests = DigestRecords(checkpointer)
                await digests.setup()
                digest = Digest.from_settings(settings, settings.timezone, digests, coordinator)
            yield Runtime(chat, coordinator, kb, checkpointer, questions, digest)
    finally:
        if own_kb:
            kb.close()


def set_reading_budget(settings: Settings) -> None:
    """The process's budget of file reading (time, memory, readers) from the settings: set here and
    nowhere else (tests/test_architecture.py keeps it so). The chat service names its own for
    attached files; ingestion and the sync of sources read with this one."""
    use_budget(Budget.of(settings))


async def describe(settings: Settings, kb: KnowledgeBase, reasoner: Reasoner) -> str:
    """What a service runs on, in one line for banners and logs."""
    chunks = await asyncio.to_thread(kb.count)
    search = f"{kb.embedder.name} + BM25 hybrid" if kb.embedder else "BM25"
    checkpoints = "Postgres" if settings.database_url else f"SQLite under {settings.data_dir}"
    return f"reasoning: {reasoner.name}; search: {search} over {chunks} chunks; memory: {checkpoints}"


def closest_in(kb: KnowledgeBase) -> Closest:
    """For a question nothing answered: the passage the knowledge base ranks first, where the
    handbook's keepers would start looking."""

    async def closest(query: str, categories: Sequence[str] | None) -> dict[str, Any] | None:
        hits = await kb.search(query, 1, categories)
        return {"title": hits[0].title, "path": hits[0].path, "score": round(hits[0].score, 3)} if hits else None

    return closest


@asynccontextmanager
async def open_reasoner(settings: Settings, coordinator: Coordinator, kb: KnowledgeBase) -> AsyncIterator[Reasoner]:
    """The language model when one is configured (`OPENAI_API_KEY`, or a chat model of another
    provider), within the process-wide budget of model calls per minute when one is set; otherwise
    the offline back-end. The model's connections close on the way out."""
    if not settings.uses_language_model:
        yield OfflineReasoner(kb.document_frequencies, glosses=kb.embedder is None)
        return
    limit = settings.max_model_calls_per_minute

    async def budget() -> bool:
        return await coordinator.allow("model-calls", limit, 60.0)

    reasoner = LLMReasoner(settings, settings.timezone, budget if limit else None)
    try:
        yield reasoner
    finally:
        await reasoner.aclose()


def researcher_of(reasoner: Reasoner) -> Researcher:
    """The deep-search side of the reasoning back-end."""
    if isinstance(reasoner, LLMReasoner):
        return LLMResearcher(reasoner)
    if isinstance(reasoner, OfflineReasoner):
        return OfflineResearcher(reasoner)
    raise TypeError(f"no deep search for the back-end {reasoner.name}")


def warm_up(kb: KnowledgeBase) -> None:
    """Pay the one-time costs before the first turn instead of during it: jieba's dictionary and
    pymilvus' lazy scipy import (on the first search) each hold the interpreter for about a
    second, stalling every Slack acknowledgement in flight.

    Then what was loaded so far (modules, jieba's dictionary, the clients: about 330,000 objects)
    is frozen out of the garbage collector's reach: it lives as long as the process, yet every full
    collection walked it, holding the interpreter meanwhile: with hundreds of turns in flight, the
    collections stalled every thread, the HTTP one included (docs/performance.md, "A burst of 200
    events in `threadsage run` (issue 16)", "The stalls were the garbage collector"). Only once per
    process: a process that opens chat services again and again (the test suite) would otherwise
    freeze each one's leftovers for good."""
    text.warm_up()
    kb.search_blocking("warm up", 1)
    _freeze_what_lives_on()


@cache
def _freeze_what_lives_on() -> None:
    """Once a process (`functools.cache`): asking `gc.get_freeze_count()` instead walks every
    frozen object, 40-80 ms of CPU for each chat service opened (docs/performance.md, "The fast
    tier")."""
    gc.collect()
    gc.freeze()


@asynccontextmanager
async def open_coordinator(settings: Settings, check: bool = True) -> AsyncIterator[Coordinator]:
    """Redis when `REDIS_URL` is set (several processes), otherwise in-process."""
    if not settings.redis_url:
        yield LocalCoordinator()
        return
    redis = connect(settings.redis_url)
    try:
        if check:
            await redis.ping()
        yield RedisCoordinator(redis, prefix=settings.redis_prefix)
    finally:
        await redis.aclose()
