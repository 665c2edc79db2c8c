"""The `threadsage` command: run the bot, chat in the terminal, ingest, search, evaluate."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from threadsage.adapters.documents.links import base_url_error
from threadsage.adapters.knowledge import KnowledgeBase, KnowledgeBaseError, open_knowledge_base
from threadsage.adapters.knowledge.embeddings import EmbeddingsUnavailable, make_embedder
from threadsage.app import retention
from threadsage.app.hits import print_hits
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
from threadsage.settings.environment import EmbeddingsKind, Settings, get_settings

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="threadsage: answers from your documents in Slack, Telegram and the terminal.",
)
eval_app = typer.Typer(no_args_is_help=True, help="Measure answer and retrieval quality.")
app.add_typer(eval_app, name="eval")

console = Console(soft_wrap=True)
errors = Console(stderr=True, soft_wrap=True)

CategoryOption = Annotated[str | None, typer.Option("--category", "-c", help="Only chunks of this category.")]
DemoOption = Annotated[Path | None, typer.Option(help="Ingest this folder first when the knowledge base is empty.")]


@app.callback()
def _console_logging() -> None:
    configure_console_logging()


def fail(message: str, code: int = 2) -> typer.Exit:
    """One line on stderr, scrubbed like the log lines (messages quote URLs and library errors)."""
    errors.print(f"[bold red]error:[/] {escape(redact(message))}", highlight=False)
    return typer.Exit(code)


@contextmanager
def knowledge_base(settings: Settings) -> Iterator[KnowledgeBase]:
    """Open the configured knowledge base; operator-facing failures become one clear line."""
    try:
        kb = open_knowledge_base(settings, make_embedder(settings))
    except (KnowledgeBaseError, EmbeddingsUnavailable) as exc:
        raise fail(str(exc)) from None
    try:
        yield kb
    except (KnowledgeBaseError, EmbeddingsUnavailable) as exc:
        raise fail(str(exc)) from None
    finally:
        kb.close()


def run_ingest(
    kb: KnowledgeBase, settings: Settings, paths: list[Path], category: str, prune: bool, base_url: str = ""
) -> IngestReport:
    with Progress(
        TextColumn("[bold]ingesting"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=errors,
        transient=True,
    ) as progress:
        task = progress.add_task("", total=None)

        def advance(name: str, total: int) -> None:
            progress.update(task, advance=1, total=total or None, description=name)

        set_reading_budget(settings)
        ingestor = Ingestor(kb, settings.chunk_chars, settings.chunk_overlap, on_progress=advance)
        return ingestor.ingest_paths(paths, category=category, prune=prune, base_url=base_url)


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders of documents.")],
    category: Annotated[str, typer.Option("--category", "-c", help="Category to file them under.")] = "",
    prune: Annotated[bool, typer.Option(help="Remove chunks of files that are gone.")] = False,
    rebuild: Annotated[bool, typer.Option(help="Drop the knowledge base and build it anew.")] = False,
    base_url: Annotated[str, typer.Option(help="Where the files are published: sources link to it + their path.")] = "",
) -> None:
    """Add documents to the knowledge base: unchanged files write nothing, changed ones are replaced."""
    missing = [str(p) for p in paths if not p.exists()]
    if bad_url := base_url_error(base_url):
        raise fail(bad_url)
    if missing:
        raise fail(f"no such file or folder: {', '.join(missing)}")
    settings = get_settings()
    if not settings.milvus_uri and (pid := IngestInbox(settings.data_dir).running_bot()):
        errors.print(f"a threadsage bot (pid {pid}) runs on {settings.data_dir}: the ingest is handed to it")
        try:
            report = hand_over(settings.data_dir, paths, category, prune, rebuild, base_url)
        except HandOverFailed as exc:
            raise fail(str(exc)) from None
    else:
        with knowledge_base(settings) as kb:
            if rebuild:
                kb.drop()
            report = run_ingest(kb, settings, paths, category, prune, base_url)
            if report.changes and not rebuild:  # a rebuild re-ingests everything: nothing to learn from it
                _knowledge_loop(settings, kb, report.changes)
    record_run(settings, report)  # for the operator console
    for path, reason in report.skipped:
        errors.print(f"[yellow]skipped[/] {path}: {reason}", highlight=False)
    console.print(report.summary(), highlight=False)
    if not report.ok:
        raise typer.Exit(1)


def _knowledge_loop(settings: Settings, kb: KnowledgeBase, changes: list[DocumentChange]) -> None:
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
        errors.print(f"[yellow]knowledge loop skipped:[/] {escape(redact(str(exc)))}", highlight=False)
        return
    if report is not None:
        errors.print(f"knowledge loop: {report.summary()}", highlight=False)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    k: Annotated[int, typer.Option("-k", help="How many chunks.", min=1, max=100)] = 5,
    category: CategoryOption = None,
) -> None:
    """Show the chunks a question retrieves, with source, heading path and score."""
    settings = get_settings()
    with knowledge_base(settings) as kb:
        if not kb.exists:
            raise fail("the knowledge base is empty: run `threadsage ingest PATH...` first")
        hits = kb.search_blocking(query, k, [category] if category else None)
    print_hits(hits)


@app.command()
def chat(
    session: Annotated[str | None, typer.Option(help="Resume this session (a new one when not given).")] = None,
    demo: DemoOption = None,
) -> None:
    """Chat in the terminal: numbered clarification options, /new, /help; piped input works too."""
    settings = get_settings()
    name = session or uuid.uuid4().hex[:8]
    with knowledge_base(settings) as kb:
        if demo is not None and kb.count() == 0:
            report = run_ingest(kb, settings, [demo], category="", prune=False)
            errors.print(f"knowledge base was empty; ingested {demo}: {report.summary()}", highlight=False)
        asyncio.run(_chat(settings, kb, name))


async def _chat(settings: Settings, kb: KnowledgeBase, name: str) -> None:
    async with open_chat_service(settings, kb=kb) as service, knowledge_upkeep(settings, kb, service.knowledge.changed):
        errors.print(
            f"threadsage — {service.description}; session {name} (resume with --session {name}). /help for commands.",
            highlight=False,
        )
        await TerminalChat(service, name, console).run()


@app.command()
def run(
    demo: DemoOption = None,
    session: Annotated[str | None, typer.Option(help="Terminal session to resume.")] = None,
) -> None:
    """Run the bot: Slack and/or Telegram when their tokens are set, else the terminal chat. With
    REDIS_URL every delivery goes through the durable turn queue: a crash loses no turn."""
    platforms = configured_platforms(get_settings())
    if platforms:
        _serve(platforms, demo)
    else:
        chat(session=session, demo=demo)


@app.command()
def slack() -> None:
    """Run the Slack bot: Socket Mode with SLACK_APP_TOKEN, else the Events API over HTTP."""
    if get_settings().slack_bot_token is None:
        raise fail("SLACK_BOT_TOKEN is not set (see docs/slack.md)")
    _serve(["slack"], None)


@app.command()
def telegram() -> None:
    """Run the Telegram bot: long polling, or a webhook with TELEGRAM_WEBHOOK_URL."""
    if get_settings().telegram_bot_token is None:
        raise fail("TELEGRAM_BOT_TOKEN is not set (see docs/telegram.md)")
    _serve(["telegram"], None)


@app.command("serve")
def serve_command() -> None:
    """Front-end of a scaled deployment: Slack's Events API and Telegram's webhook, each delivery
    put in the Redis turn queue before it is acknowledged (needs REDIS_URL)."""
    settings = _queue_settings()
    configure_logging(settings)
    try:
        asyncio.run(serve_front_end(settings, configured_platforms(settings)))
    except (ValueError, ServiceUnavailable) as exc:
        raise fail(str(exc)) from None


@app.command()
def worker() -> None:
    """Worker of a scaled deployment: answers the turns of the Redis queue and posts the replies
    (needs REDIS_URL; run as many as you need)."""
    settings = _queue_settings()
    configure_logging(settings)
    # the front-end's acks go first (docs/performance.md, "The worker pool after issue 16")
    os.nice(settings.worker_niceness)
    with knowledge_base(settings) as kb:
        try:
            asyncio.run(work(settings, configured_platforms(settings), kb=kb))
        except ValueError as exc:
            raise fail(str(exc)) from None


def _queue_settings() -> Settings:
    settings = get_settings()
    if not settings.redis_url:
        raise fail("REDIS_URL is not set: serve and worker share their turns through Redis")
    if not configured_platforms(settings):
        raise fail("neither SLACK_BOT_TOKEN nor TELEGRAM_BOT_TOKEN is set")
    if settings.secret is None:  # a secret generated per host would fail the buttons of the others
        raise fail(
            "THREADSAGE_SECRET is not set: every serve and worker must sign buttons with the same secret "
            "(make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )
    return settings


def _serve(platforms: list[str], demo: Path | None) -> None:
    settings = get_settings()
    configure_logging(settings)
    if "telegram" in platforms:
        _telegram_banner(settings)
    with knowledge_base(settings) as kb:
        if demo is not None and kb.count() == 0:
            report = run_ingest(kb, settings, [demo], category="", prune=False)
            errors.print(f"knowledge base was empty; ingested {demo}: {report.summary()}", highlight=False)
        try:
            asyncio.run(serve(settings, platforms, kb=kb))
        except (ValueError, ServiceUnavailable) as exc:  # a platform's configuration is incomplete, Redis away
            raise fail(str(exc)) from None


def _telegram_banner(settings: Settings) -> None:
    """Whom the Telegram bot answers, said before it starts: unset, that is no one."""
    try:
        access = TelegramAccess.from_settings(settings)
    except ValueError as exc:
        raise fail(str(exc)) from None
    errors.print(f"Telegram: answers {access.describe()}", highlight=False)


@app.command("prune")
def prune_checkpoints(
    older_than: Annotated[
        str, typer.Option("--older-than", help="Sessions idle longer than this are deleted: Nd, Nh or Nm (e.g. 30d).")
    ],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report what would go; delete nothing.")] = False,
) -> None:
    """Delete abandoned sessions and all but the latest checkpoint of live ones (feedback is kept)."""
    try:
        age = retention.parse_age(older_than)
    except ValueError as exc:
        raise fail(f"--older-than: {exc}") from None

    async def _prune() -> PruneReport:
        async with open_checkpointer(get_settings()) as checkpointer:
            return await retention.prune(checkpointer, age, dry_run=dry_run)

    console.print(asyncio.run(_prune()).summary(), highlight=False)


@eval_app.command("retrieval")
def eval_retrieval(
    corpus: Annotated[Path, typer.Option(help="Folder of documents, or a *corpus.jsonl file/folder.")],
    questions: Annotated[Path, typer.Option(help="Questions (JSON lines).")],
    k: Annotated[int, typer.Option("--k", help="Cut-off for recall.", min=1, max=100)] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    data_dir: Annotated[Path | None, typer.Option(help="Keep (and reuse) the evaluation knowledge base here.")] = None,
    sample: Annotated[int | None, typer.Option(help="Score a fixed random sample.", min=1)] = None,
    seed: Annotated[int, typer.Option(help="Seed of the sample.")] = 0,
    embeddings: Annotated[
        str | None, typer.Option(help="none | local | openai (default: THREADSAGE_EMBEDDINGS).")
    ] = None,
) -> None:
    """Recall@1, recall@k and MRR of retrieval on graded questions."""
    if not corpus.exists() or not questions.is_file():
        raise fail(f"no such corpus or questions file: {corpus}, {questions}")
    try:
        graded = load_questions(questions, sample=sample, seed=seed)
    except (ValueError, KeyError) as exc:
        raise fail(f"cannot read questions from {questions}: {exc}") from None
    settings = get_settings()
    if embeddings:
        settings = settings.model_copy(update={"embeddings": _embeddings_kind(embeddings)})
    try:
        with evaluation_corpus(settings, corpus, data_dir) as evaluated:
            if not as_json:
                errors.print(f"corpus: {evaluated.report.summary()}", highlight=False)
            scores = evaluate(graded, evaluated.kb.search_blocking, k, evaluated.text_of)
    except (KnowledgeBaseError, EmbeddingsUnavailable) as exc:
        raise fail(str(exc)) from None
    if as_json:
        print(json.dumps(scores))
        return
    table = Table(title=f"retrieval on {questions.name} (k={k})")
    columns = ["n", "recall@1", f"recall@{k}", "mrr", "chunk_n", f"chunk_recall@{k}"]
    table.add_column("type")
    for column in columns:
        table.add_column(column, justify="right")
    for kind, row in [*scores["by_type"].items(), ("all", scores)]:
        table.add_row(kind, *(str(row.get(c, "–")) for c in columns))
    console.print(table)


def _embeddings_kind(value: str) -> EmbeddingsKind:
    if value not in ("none", "local", "openai"):
        raise fail(f"--embeddings must be none, local or openai, not {value!r}")
    return value  # type: ignore[return-value]


if __name__ == "__main__":
    app()
