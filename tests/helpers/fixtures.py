"""The fixtures that several test folders use: settings on a temporary data directory, the bundled
handbook in a knowledge base, the offline reader's embeddings counted, the eval corpora, Postgres,
the fake model, the bots on the platforms' fakes, the CLI and the log set-up. A plugin that
tests/conftest.py loads where tests run (in each xdist worker, or in a run without workers), not in
xdist's controller, which only hands tests out: importing the product there cost about 5 s of CPU
a run."""

from __future__ import annotations

import fcntl
import io
import logging
import os
import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers import telegram_harness
from tests.helpers.locations import EVAL, HANDBOOK, HANDBOOK_SITE, POSTGRES_URL
from tests.helpers.slack_harness import Harness, on_fake_slack
from threadsage.adapters.knowledge import open_knowledge_base
from threadsage.adapters.meaning import minilm
from threadsage.bots.telegram import TelegramBot
from threadsage.cli import app
from threadsage.ingestion.pipeline import Ingestor
from threadsage.observability.telemetry import configure_logging
from threadsage.settings.environment import Settings, get_settings


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The texts the offline reader's model embeds (`adapters/meaning/minilm.py`), from an empty
    memory and a vector store in `tmp_path`."""
    made: list[str] = []
    embed = minilm._embed
    monkeypatch.setattr(minilm, "_kept", type(minilm._kept)())
    monkeypatch.setattr(minilm, "_store", None)
    monkeypatch.setattr(minilm, "_embed", lambda texts: made.extend(texts) or embed(texts))
    minilm.keep_in(tmp_path / "meaning")
    yield made
    assert minilm._store is not None
    minilm._store.close()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        THREADSAGE_DATA_DIR=tmp_path / "data",
        THREADSAGE_EMBEDDINGS="none",
        MILVUS_URI=None,
        _env_file=None,
    )


@pytest.fixture
def kb(settings: Settings):
    knowledge = open_knowledge_base(settings)
    yield knowledge
    knowledge.close()


@pytest.fixture(scope="session")
def eval_dir() -> Path:
    assert EVAL.is_dir(), f"the evaluation corpora are expected at {EVAL}"
    return EVAL


# --- conversation fixtures -----------------------------------------------------------------


def shared_knowledge(tmp_path_factory: pytest.TempPathFactory, name: str, fill: Callable[[Ingestor], None]):
    """A read-only BM25 knowledge base filled by `fill` once for all the workers of a run and copied
    to each (filling one costs a worker over a second of CPU); alone (no xdist), filled in place."""
    own = tmp_path_factory.mktemp(name) / "data"
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        fill_at(own, fill)
    else:
        run = tmp_path_factory.getbasetemp().parent  # this run's, above each worker's directory
        built = run / f"shared-{name}"
        with open(run / f"shared-{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # the other workers wait for the first to fill it
            if not built.exists():
                building = run / f"shared-{name}.{worker}"
                fill_at(building, fill)
                building.rename(built)
        shutil.copytree(built, own)
    return open_knowledge_base(Settings(THREADSAGE_DATA_DIR=own, THREADSAGE_EMBEDDINGS="none", _env_file=None))


def fill_at(data_dir: Path, fill: Callable[[Ingestor], None]) -> None:
    settings = Settings(THREADSAGE_DATA_DIR=data_dir, THREADSAGE_EMBEDDINGS="none", _env_file=None)
    knowledge = open_knowledge_base(settings)
    try:
        fill(Ingestor(knowledge, settings.chunk_chars, settings.chunk_overlap))
    finally:
        knowledge.close()


@pytest.fixture(scope="session")
def handbook_kb(tmp_path_factory: pytest.TempPathFactory):
    """The demo handbook in a BM25 knowledge base, shared read-only by the conversation tests."""

    def fill(ingestor: Ingestor) -> None:
        assert ingestor.ingest_paths([HANDBOOK]).ok

    knowledge = shared_knowledge(tmp_path_factory, "handbook-kb", fill)
    yield knowledge
    knowledge.close()


@pytest.fixture(scope="session")
def categorised_kb(tmp_path_factory: pytest.TempPathFactory):
    """The demo handbook with each folder its own category, the `it` folder published at
    HANDBOOK_SITE (its sources are links), shared read-only by the tests of hand-offs and links."""

    def fill(ingestor: Ingestor) -> None:
        for folder in ("engineering", "finance", "it", "people"):
            site = HANDBOOK_SITE if folder == "it" else ""
            assert ingestor.ingest_paths([HANDBOOK / folder], category=folder, base_url=site).ok

    knowledge = shared_knowledge(tmp_path_factory, "categorised-kb", fill)
    yield knowledge
    knowledge.close()


@pytest.fixture
async def pg_url():
    """A DATABASE_URL whose tables live in a schema of the test's own, dropped afterwards."""
    import uuid

    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    async with await psycopg.AsyncConnection.connect(POSTGRES_URL, autocommit=True) as conn:
        await conn.execute(f"CREATE SCHEMA {schema}")
    yield f"{POSTGRES_URL}?options=-csearch_path%3D{schema}"
    async with await psycopg.AsyncConnection.connect(POSTGRES_URL, autocommit=True) as conn:
        await conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Run `threadsage ARGS` in-process on a temporary data dir: cli("ingest", path, stdin=...)."""
    monkeypatch.chdir(tmp_path)  # no stray .env is read
    monkeypatch.setenv("THREADSAGE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("THREADSAGE_EMBEDDINGS", "none")
    for name in ("MILVUS_URI", "DATABASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    runner = CliRunner()

    def invoke(*args: str, stdin: str | None = None):
        get_settings.cache_clear()
        return runner.invoke(app, list(args), input=stdin)

    yield invoke
    get_settings.cache_clear()


@pytest.fixture(scope="session")
def gitlab_kb(eval_dir: Path):
    """The GitLab handbook corpus in a BM25 knowledge base (read-only, shared)."""
    from threadsage.evaluation.retrieval import evaluation_corpus

    with evaluation_corpus(
        Settings(THREADSAGE_EMBEDDINGS="none", _env_file=None), eval_dir / "gitlab-handbook" / "corpus"
    ) as corpus:
        yield corpus.kb


@pytest.fixture
def llm():
    """A fake OpenAI-compatible server over real HTTP, scripted per test (tests/fakes/openai_server.py)."""
    from tests.fakes.openai_server import FakeOpenAI

    server = FakeOpenAI().start()
    yield server
    server.stop()


# --- the bots on the platforms' fakes (tests/helpers/*_harness.py) ------------------------------


@pytest.fixture
async def slack(tmp_path: Path, handbook_kb) -> AsyncIterator[Harness]:
    """The Slack bot served over HTTP, on the offline back-end and the demo handbook, against a fake Slack."""
    async with on_fake_slack(tmp_path, handbook_kb) as harness:
        yield harness


@pytest.fixture
async def classic_slack(tmp_path: Path, handbook_kb) -> AsyncIterator[Harness]:
    """The same, for an app still on `assistant_view` (or neither): the DM's top level is one conversation."""
    async with on_fake_slack(tmp_path, handbook_kb, THREADSAGE_SLACK_AGENT_VIEW=False) as harness:
        yield harness


@pytest.fixture
async def fake() -> AsyncIterator[FakeBotAPI]:
    """The fake Telegram Bot API."""
    api = await FakeBotAPI(telegram_harness.TOKEN).start()
    yield api
    await api.stop()


@pytest.fixture
async def bot(tmp_path: Path, fake: FakeBotAPI, handbook_kb) -> AsyncIterator[TelegramBot]:
    """The Telegram bot on the offline back-end and the demo handbook."""
    async with telegram_harness.running(telegram_harness.bot_settings(tmp_path, fake), handbook_kb) as telegram:
        yield telegram


# --- logs ------------------------------------------------------------------------------------


@pytest.fixture
def configure() -> Iterator[Callable[..., io.StringIO]]:
    """configure_logging(...) as the servers call it, its handler writing to a buffer instead of
    stderr (a buffer stays open for library threads that log late); logging is restored after."""
    root = logging.getLogger()
    saved = (
        root.handlers[:],
        root.level,
        {name: logging.getLogger(name).level for name in ("httpx", "httpcore", "slack_bolt")},
    )

    def apply(**env: str) -> io.StringIO:
        configure_logging(Settings(_env_file=None, **env))
        buffer = io.StringIO()
        [handler] = root.handlers
        assert isinstance(handler, logging.StreamHandler)
        handler.setStream(buffer)
        return buffer

    yield apply
    handlers, level, levels = saved
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, value in levels.items():
        logging.getLogger(name).setLevel(value)
