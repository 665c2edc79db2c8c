"""What each `threadsage` command does, put together from the parts: the command line (`cli.py`)
only parses, prints and calls these. A failure an operator can act on is a `CommandError` with the
one line to show; `say` is where a command's side notes go (the command line prints them to stderr).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from rich.console import Console

from threadsage.adapters.documents.links import base_url_error
from threadsage.adapters.knowledge import DenseUse, Hit, KnowledgeBase, KnowledgeBaseError, open_knowledge_base
from threadsage.adapters.knowledge.embeddings import EmbeddingsUnavailable, make_embedder
from threadsage.app import retention
from threadsage.app.processes import configured_platforms, serve, serve_front_end, work
from threadsage.app.runtime import open_chat_service, open_coordinator, set_reading_budget
from threadsage.bots.telegram.access import TelegramAccess
from threadsage.bots.terminal import TerminalChat
from threadsage.chat.knowledge_loop import LoopReport
from threadsage.delivery.outages import ServiceUnavailable
from threadsage.evaluation.retrieval import evaluate, evaluation_corpus, load_questions
from threadsage.ingestion.inbox import HandOverFailed, IngestInbox, hand_over
from threadsage.ingestion.pipeline import DocumentChange, Ingestor, IngestReport
from threadsage.ingestion.service import knowledge_upkeep
from threadsage.memory.checkpoints import open_checkpointer
from threadsage.memory.pruning.base import PruneReport
from threadsage.observability.redaction import redact
from threadsage.observability.telemetry import configure_console_logging, configure_logging
from threadsage.records.ingestions import record_run
from threadsage.settings.environment import EmbeddingsKind, Settings

Say = Callable[[str], None]
Progress = Callable[[str, int], None]  # a file read, of how many (0: not known yet)
ProgressShown = Callable[[], AbstractContextManager[Progress]]  # a bar while the files are read


def console_logging() -> None:
    """Log lines for a person at a terminal (until a command configures the process's logging)."""
    configure_console_logging()


def scrubbed(message: str) -> str:
    """A message as the logs would show it: secrets and tokens taken out."""
    return redact(message)


class CommandError(Exception):
    """A failure an operator can act on: the message is the one line to show."""


@contextmanager
def knowledge_base(settings: Settings) -> Iterator[KnowledgeBase]:
    """The configured knowledge base; its operator-facing failures become a `CommandError`."""
    try:
        kb = open_knowledge_base(settings, make_embedder(settings, settings), DenseUse.of(settings))
    except (KnowledgeBaseError, EmbeddingsUnavailable) as exc:
        raise CommandError(str(exc)) from None
    try:
        yield kb
    except (KnowledgeBaseError, EmbeddingsUnavailable) as exc:
        raise CommandError(str(exc)) from None
    finally:
        kb.close()


def ingest_into(
    kb: KnowledgeBase,
    settings: Settings,
    paths: list[Path],
    category: str = "",
    prune: bool = False,
    base_url: str = "",
    progress: Progress | None = None,
) -> IngestReport:
    set_reading_budget(settings)
    ingestor = Ingestor(kb, settings.chunk_chars, settings.chunk_overlap, on_progress=progress)
    return ingestor.ingest_paths(paths, category=category, prune=prune, base_url=base_url)


def ingest(
    settings: Settings,
    paths: list[Path],
    say: Say,
    progress: Progress | None = None,
    category: str = "",
    prune: bool = False,
    rebuild: bool = False,
    base_url: str = "",
) -> IngestReport:
    """`threadsage ingest`: into the knowledge base here, or handed to the bot that holds it (Milvus
    Lite: one process at a time); what it changed then goes through the knowledge loop."""
    missing = [str(p) for p in paths if not p.exists()]
    if bad_url := base_url_error(base_url):
        raise CommandError(bad_url)
    if missing:
        raise CommandError(f"no such file or folder: {', '.join(missing)}")
    if not settings.milvus_uri and (pid := IngestInbox(settings.data_dir).running_bot()):
        say(f"a threadsage bot (pid {pid}) runs on {settings.data_dir}: the ingest is handed to it")
        try:
            report = hand_over(settings.data_dir, paths, category, prune, rebuild, base_url)
        except HandOverFailed as exc:
            raise CommandError(str(exc)) from None
    else:
        with knowledge_base(settings) as kb:
            if rebuild:
                kb.drop()
            report = ingest_into(kb, settings, paths, category, prune, base_url, progress)
            if report.changes and not rebuild:  # a rebuild re-ingests everything: nothing to learn from it
                _knowledge_loop(settings, kb, report.changes, say)
    record_run(settings, report)  # for the operator console
    return report


def _knowledge_loop(settings: Settings, kb: KnowledgeBase, changes: list[DocumentChange], say: Say) -> None:
    """What the ingest changed, put to use as after a sync (`threadsage.chat.knowledge_loop`): answers
    marked stale, open gaps asked again. No bot runs here: a gap closed now gets its follow-up
    from the next bot of its platform that starts (docs/console.md, "The knowledge loop")."""

    async def run() -> LoopReport | None:
        async with (
            open_coordinator(settings, check=False) as coordinator,
            open_chat_service(settings, kb, coordinator) as service,
        ):
            return await service.loop.changed(changes) if service.loop is not None else None

    try:
        report = asyncio.run(run())
    except Exception as exc:  # noqa: BLE001 - the ingest stands; the loop runs again at the next one
        say(f"knowledge loop skipped: {redact(str(exc))}")
        return
    if report is not None:
        say(f"knowledge loop: {report.summary()}")


def search(settings: Settings, query: str, k: int, category: str | None) -> list[Hit]:
    with knowledge_base(settings) as kb:
        if not kb.exists:
            raise CommandError("the knowledge base is empty: run `threadsage ingest PATH...` first")
        return kb.search_blocking(query, k, [category] if category else None)


def _with_demo(kb: KnowledgeBase, settings: Settings, demo: Path | None, say: Say, shown: ProgressShown | None) -> None:
    """The demo folder ingested into a knowledge base that is empty."""
    if demo is not None and kb.count() == 0:
        with (shown or _unseen)() as progress:
            report = ingest_into(kb, settings, [demo], progress=progress)
        say(f"knowledge base was empty; ingested {demo}: {report.summary()}")


def _unseen() -> AbstractContextManager[Progress]:
    return nullcontext(lambda _name, _total: None)


def chat(
    settings: Settings,
    session: str,
    console: Console,
    say: Say,
    demo: Path | None = None,
    shown: ProgressShown | None = None,
) -> None:
    """`threadsage chat`: the terminal chat, the knowledge kept current meanwhile."""
    with knowledge_base(settings) as kb:
        _with_demo(kb, settings, demo, say, shown)
        asyncio.run(_chat(settings, kb, session, console, say))


async def _chat(settings: Settings, kb: KnowledgeBase, name: str, console: Console, say: Say) -> None:
    async with (
        open_chat_service(settings, kb=kb) as service,
        knowledge_upkeep(settings, kb, service.knowledge.changed, read_ahead=service.context.meaning),
    ):
        say(f"threadsage — {service.description}; session {name} (resume with --session {name}). /help for commands.")
        await TerminalChat(service, name, console).run()


def run_platforms(
    settings: Settings, chosen: list[str], say: Say, demo: Path | None = None, shown: ProgressShown | None = None
) -> None:
    """`threadsage run`, `slack`, `telegram`: the bots of `chosen` in this process."""
    configure_logging(settings)
    if "telegram" in chosen:
        try:
            say(f"Telegram: answers {TelegramAccess.from_settings(settings).describe()}")  # unset: no one
        except ValueError as exc:
            raise CommandError(str(exc)) from None
    with knowledge_base(settings) as kb:
        _with_demo(kb, settings, demo, say, shown)
        try:
            asyncio.run(serve(settings, chosen, kb=kb))
        except (ValueError, ServiceUnavailable) as exc:  # a platform's configuration is incomplete, Redis away
            raise CommandError(str(exc)) from None


def front_end(settings: Settings) -> None:
    """`threadsage serve`: the platforms' receiving ends, into the turn queue."""
    settings = _queue_settings(settings)
    configure_logging(settings)
    try:
        asyncio.run(serve_front_end(settings, configured_platforms(settings)))
    except (ValueError, ServiceUnavailable) as exc:
        raise CommandError(str(exc)) from None


def worker(settings: Settings) -> None:
    """`threadsage worker`: the turns of the queue, answered and posted."""
    settings = _queue_settings(settings)
    configure_logging(settings)
    # the front-end's acks go first (docs/performance.md, "Acks beside busy workers")
    os.nice(settings.worker_niceness)
    with knowledge_base(settings) as kb:
        try:
            asyncio.run(work(settings, configured_platforms(settings), kb=kb))
        except ValueError as exc:
            raise CommandError(str(exc)) from None


def _queue_settings(settings: Settings) -> Settings:
    if not settings.redis_url:
        raise CommandError("REDIS_URL is not set: serve and worker share their turns through Redis")
    if not configured_platforms(settings):
        raise CommandError("neither SLACK_BOT_TOKEN nor TELEGRAM_BOT_TOKEN is set")
    if settings.secret is None:  # a secret generated per host would fail the buttons of the others
        raise CommandError(
            "THREADSAGE_SECRET is not set: every serve and worker must sign buttons with the same secret "
            "(make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )
    return settings


def prune(settings: Settings, older_than: str, dry_run: bool) -> PruneReport:
    """`threadsage prune`: abandoned sessions deleted, live ones cut to their latest checkpoint."""
    try:
        age = retention.parse_age(older_than)
    except ValueError as exc:
        raise CommandError(f"--older-than: {exc}") from None

    async def pruned() -> PruneReport:
        async with open_checkpointer(settings) as checkpointer:
            return await retention.prune(checkpointer, age, dry_run=dry_run)

    return asyncio.run(pruned())


def eval_retrieval(
    settings: Settings,
    corpus: Path,
    questions: Path,
    k: int,
    say: Say,
    data_dir: Path | None = None,
    sample: int | None = None,
    seed: int = 0,
    embeddings: str | None = None,
) -> dict[str, Any]:
    """`threadsage eval retrieval`: recall@1, recall@k and MRR on graded questions."""
    if not corpus.exists() or not questions.is_file():
        raise CommandError(f"no such corpus or questions file: {corpus}, {questions}")
    try:
        graded = load_questions(questions, sample=sample, seed=seed)
    except (ValueError, KeyError) as exc:
        raise CommandError(f"cannot read questions from {questions}: {exc}") from None
    if embeddings:
        settings = settings.model_copy(update={"embeddings": _embeddings_kind(embeddings)})
    try:
        with evaluation_corpus(settings, corpus, data_dir) as evaluated:
            say(f"corpus: {evaluated.report.summary()}")
            return evaluate(graded, evaluated.kb.search_blocking, k, evaluated.text_of)
    except (KnowledgeBaseError, EmbeddingsUnavailable) as exc:
        raise CommandError(str(exc)) from None


def _embeddings_kind(value: str) -> EmbeddingsKind:
    if value not in ("none", "local", "openai"):
        raise CommandError(f"--embeddings must be none, local or openai, not {value!r}")
    return value  # type: ignore[return-value]
