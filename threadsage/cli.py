"""The `threadsage` command: run the bot, chat in the terminal, ingest, search, evaluate. It parses
the command line, calls `threadsage.app.commands`, and prints what comes back (an import contract
keeps it to that)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from threadsage.app import commands
from threadsage.app.commands import CommandError
from threadsage.app.hits import print_hits
from threadsage.app.processes import configured_platforms
from threadsage.settings.environment import get_settings

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
    commands.console_logging()


def fail(message: str, code: int = 2) -> typer.Exit:
    """One line on stderr, scrubbed like the log lines (messages quote URLs and library errors)."""
    errors.print(f"[bold red]error:[/] {escape(commands.scrubbed(message))}", highlight=False)
    return typer.Exit(code)


def say(line: str) -> None:
    """A command's side note, on stderr (what it prints as its result goes to stdout)."""
    errors.print(line, highlight=False, markup=False)


@contextmanager
def failing() -> Iterator[None]:
    """A command's failure an operator can act on, as one line (and exit code 2)."""
    try:
        yield
    except CommandError as exc:
        raise fail(str(exc)) from None


@contextmanager
def progress_bar() -> Iterator[Callable[[str, int], None]]:
    """The files an ingest reads, as a bar on stderr that goes when it is done."""
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

        yield advance


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders of documents.")],
    category: Annotated[str, typer.Option("--category", "-c", help="Category to file them under.")] = "",
    prune: Annotated[bool, typer.Option(help="Remove chunks of files that are gone.")] = False,
    rebuild: Annotated[bool, typer.Option(help="Drop the knowledge base and build it anew.")] = False,
    base_url: Annotated[str, typer.Option(help="Where the files are published: sources link to it + their path.")] = "",
) -> None:
    """Add documents to the knowledge base: unchanged files write nothing, changed ones are replaced."""
    with failing(), progress_bar() as advance:
        report = commands.ingest(get_settings(), paths, say, advance, category, prune, rebuild, base_url)
    for path, reason in report.skipped:
        errors.print(f"[yellow]skipped[/] {path}: {reason}", highlight=False)
    console.print(report.summary(), highlight=False)
    if not report.ok:
        raise typer.Exit(1)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    k: Annotated[int, typer.Option("-k", help="How many chunks.", min=1, max=100)] = 5,
    category: CategoryOption = None,
) -> None:
    """Show the chunks a question retrieves, with source, heading path and score."""
    with failing():
        hits = commands.search(get_settings(), query, k, category)
    print_hits(hits)


@app.command()
def chat(
    session: Annotated[str | None, typer.Option(help="Resume this session (a new one when not given).")] = None,
    demo: DemoOption = None,
) -> None:
    """Chat in the terminal: numbered clarification options, /new, /help; piped input works too."""
    with failing():
        commands.chat(get_settings(), session or uuid.uuid4().hex[:8], console, say, demo, progress_bar)


@app.command()
def run(
    demo: DemoOption = None,
    session: Annotated[str | None, typer.Option(help="Terminal session to resume.")] = None,
) -> None:
    """Run the bot: Slack and/or Telegram when their tokens are set (and the MCP server when its
    tokens are), else the terminal chat. With REDIS_URL every delivery goes through the durable turn
    queue: a crash loses no turn."""
    settings = get_settings()
    if (platforms := configured_platforms(settings)) or settings.mcp_readers():
        with failing():
            commands.run_platforms(settings, platforms, say, demo, progress_bar)
    else:
        chat(session=session, demo=demo)


@app.command()
def slack() -> None:
    """Run the Slack bot: Socket Mode with SLACK_APP_TOKEN, else the Events API over HTTP."""
    settings = get_settings()
    if settings.slack_bot_token is None:
        raise fail("SLACK_BOT_TOKEN is not set (see docs/slack.md)")
    with failing():
        commands.run_platforms(settings, ["slack"], say)


@app.command()
def telegram() -> None:
    """Run the Telegram bot: long polling, or a webhook with TELEGRAM_WEBHOOK_URL."""
    settings = get_settings()
    if settings.telegram_bot_token is None:
        raise fail("TELEGRAM_BOT_TOKEN is not set (see docs/telegram.md)")
    with failing():
        commands.run_platforms(settings, ["telegram"], say)


@app.command("serve")
def serve_command() -> None:
    """Front-end of a scaled deployment: Slack's Events API and Telegram's webhook, each delivery
    put in the Redis turn queue before it is acknowledged (needs REDIS_URL)."""
    with failing():
        commands.front_end(get_settings())


@app.command()
def worker() -> None:
    """Worker of a scaled deployment: answers the turns of the Redis queue and posts the replies
    (needs REDIS_URL; run as many as you need)."""
    with failing():
        commands.worker(get_settings())


@app.command("prune")
def prune_checkpoints(
    older_than: Annotated[
        str, typer.Option("--older-than", help="Sessions idle longer than this are deleted: Nd, Nh or Nm (e.g. 30d).")
    ],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report what would go; delete nothing.")] = False,
) -> None:
    """Delete abandoned sessions and all but the latest checkpoint of live ones (feedback is kept)."""
    with failing():
        report = commands.prune(get_settings(), older_than, dry_run)
    console.print(report.summary(), highlight=False)


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
    quiet: Callable[[str], None] = lambda _line: None  # noqa: E731 - only the JSON goes out
    with failing():
        scores: dict[str, Any] = commands.eval_retrieval(
            get_settings(), corpus, questions, k, quiet if as_json else say, data_dir, sample, seed, embeddings
        )
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


if __name__ == "__main__":
    app()
