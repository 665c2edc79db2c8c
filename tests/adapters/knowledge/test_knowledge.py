"""The knowledge base end to end on a real Milvus Lite in a temporary directory."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.locations import HANDBOOK
from threadsage.adapters.knowledge import DenseUse, Hit, KnowledgeBase, KnowledgeBaseError, open_knowledge_base
from threadsage.adapters.knowledge.embeddings import LocalEmbedder, OpenAIEmbedder
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings


def ingestor(kb: KnowledgeBase, chunk_chars: int = 1200) -> Ingestor:
    return Ingestor(kb, chunk_chars=chunk_chars, chunk_overlap=200)


@pytest.fixture
def handbook(tmp_path: Path) -> Path:
    """A copy of the bundled handbook that tests may edit."""
    return Path(shutil.copytree(HANDBOOK, tmp_path / "handbook"))


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    return LocalEmbedder()


def test_ingest_search_reingest_change_and_prune(kb: KnowledgeBase, handbook: Path) -> None:
    first = ingestor(kb).ingest_paths([handbook])
    files = len(list(handbook.rglob("*.*")))
    assert (first.new, first.changed, first.unchanged, first.skipped) == (files, 0, 0, [])
    assert first.chunks_added == kb.count() > files

    hits = kb.search_blocking("reset my VPN password Gatekeeper", k=3)
    assert hits[0].path == "it/vpn.md"  # found only once the ingest is flushed (committed, on Milvus Lite)
    assert hits[0].title == "VPN access with Larkspur Connect"
    assert hits[0].heading and hits[0].score > 0 and hits[0].source == str(handbook / "it/vpn.md")

    again = ingestor(kb).ingest_paths([handbook])
    assert (again.new, again.changed, again.unchanged) == (0, 0, files)
    assert again.chunks_added == again.chunks_updated == 0
    assert kb.count() == first.chunks_added

    vpn = handbook / "it" / "vpn.md"
    vpn.write_text(vpn.read_text() + "\n## Quokka clause\nThe VPN mascot is a quokka named Wendell.\n")
    changed = ingestor(kb).ingest_paths([handbook])
    assert (changed.new, changed.changed, changed.unchanged) == (0, 1, files - 1)
    assert kb.search_blocking("quokka mascot Wendell", k=1)[0].path == "it/vpn.md"
    stored_vpn = [d for d in kb.stored_documents().values() if d.source == str(vpn)]
    assert [d.chunks for d in stored_vpn] == [changed.chunks_updated], "old chunks are replaced"

    (handbook / "it" / "email.md").unlink()
    kept = ingestor(kb).ingest_paths([handbook])
    assert kept.chunks_removed == 0 and any(
        h.path == "it/email.md" for h in kb.search_blocking("e-mail password SMS code", k=5)
    )
    pruned = ingestor(kb).ingest_paths([handbook], prune=True)
    assert pruned.documents_removed == 1 and pruned.chunks_removed > 0
    assert all(h.path != "it/email.md" for h in kb.search_blocking("e-mail password SMS code", k=10))
    assert "1 files pruned" in pruned.summary()


async def test_search_runs_off_the_event_loop_and_filters_by_category(kb: KnowledgeBase, tmp_path: Path) -> None:
    ingestor(kb).ingest_paths([HANDBOOK / "it"], category="it")
    ingestor(kb).ingest_paths([HANDBOOK / "finance"], category="finance")
    query = "hotel limits in Lisbon and the laptop password"
    unfiltered = await kb.search(query, k=10)
    assert {h.category for h in unfiltered} == {"it", "finance"}
    for category in ("it", "finance"):
        hits = await kb.search(query, k=5, categories=[category])
        assert hits and all(h.category == category for h in hits)
    with pytest.raises(KnowledgeBaseError, match="Invalid category"):
        await kb.search("x", categories=['it" or category != "'])


def test_chinese_and_english_queries_find_their_pages(kb: KnowledgeBase) -> None:
    ingestor(kb).ingest_paths([HANDBOOK])
    assert kb.search_blocking("差旅报销的餐费标准是多少？", k=3)[0].path == "finance/travel-reimbursement-zh.md"
    assert kb.search_blocking("新员工入职第一天", k=3)[0].path == "people/onboarding-zh.md"
    assert (
        kb.search_blocking("How many days of annual leave do contractors get?", k=3)[0].path
        == "people/leave-contractors.md"
    )


@pytest.mark.parametrize(
    "query",
    ["", "   ", "password " * 20_000, "🙂🙂🙂", "пароль VPN", "ﷺ ✓ \x00 \u200b", "a"],
)
def test_queries_of_any_length_or_script_are_answered(kb: KnowledgeBase, query: str) -> None:
    ingestor(kb).ingest_paths([HANDBOOK / "it"])
    hits = kb.search_blocking(query, k=3)
    assert isinstance(hits, list) and len(hits) <= 3
    if "password " in query:
        assert hits, "a long query is truncated, not rejected"


def test_search_before_anything_was_ingested_finds_nothing(kb: KnowledgeBase) -> None:
    assert kb.search_blocking("anything", k=3) == []
    assert kb.count() == 0


@pytest.mark.slow
def test_hybrid_search_with_local_embeddings(settings: Settings, local_embedder: LocalEmbedder) -> None:
    kb = open_knowledge_base(settings, local_embedder)
    try:
        report = ingestor(kb).ingest_paths([HANDBOOK])
        assert report.ok
        # Few shared words with the page; the dense half of the fusion carries it.
        hits = kb.search_blocking("I forgot the secret for the remote network tunnel", k=3)
        assert "it/vpn.md" in [h.path for h in hits]
        assert all(0 < h.score <= 2 / 61 for h in hits)  # RRF scores with k = 60
    finally:
        kb.close()


@pytest.mark.slow
def test_embedding_dimension_mismatch_says_how_to_rebuild(settings: Settings, local_embedder: LocalEmbedder) -> None:
    plain = open_knowledge_base(settings)
    ingestor(plain).ingest_paths([HANDBOOK / "it"])
    plain.close()

    kb = open_knowledge_base(settings, local_embedder)
    try:
        with pytest.raises(KnowledgeBaseError, match=r"no embeddings.*384-dimensional.*--rebuild"):
            ingestor(kb).ingest_paths([HANDBOOK / "it"])
        kb.drop()
        assert ingestor(kb).ingest_paths([HANDBOOK / "it"]).ok
        assert kb.search_blocking("VPN", k=1)
    finally:
        kb.close()


def test_openai_compatible_embeddings_over_http(settings: Settings) -> None:
    fake = FakeOpenAI(embedding_dim=48).start()
    try:
        configured = settings.model_copy(
            update={"embeddings": "openai", "openai_base_url": fake.base_url, "openai_api_key": "sk-test"}
        )
        kb = open_knowledge_base(configured, OpenAIEmbedder(configured, configured.embedding_model))
        report = ingestor(kb).ingest_paths([HANDBOOK / "finance"])
        assert report.ok and kb.count() == report.chunks_added
        assert "expenses-toronto.md" in [h.path for h in kb.search_blocking("Toronto hotel limits", k=3)]
        batches = [len(body["input"]) for path, body in fake.requests if path.endswith("/embeddings")]
        assert max(batches) <= 64 and sum(batches) >= report.chunks_added
        kb.close()
    finally:
        fake.stop()


def test_unreachable_milvus_names_milvus_uri(settings: Settings) -> None:
    with pytest.raises(KnowledgeBaseError, match=r"MILVUS_URI=http://127.0.0.1:9"):
        open_knowledge_base(settings.model_copy(update={"milvus_uri": "http://127.0.0.1:9"}))


@pytest.mark.slow
def test_a_second_process_on_the_same_lite_file_is_told_why(settings: Settings, tmp_path: Path) -> None:
    import subprocess
    import sys

    settings.milvus_lite_path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys,time; from pymilvus import MilvusClient; "
         f"MilvusClient({str(settings.milvus_lite_path)!r}); print('ready', flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(KnowledgeBaseError, match="one process per data directory"):
            open_knowledge_base(settings)
    finally:
        holder.kill()
        holder.wait()


async def test_no_categories_means_no_documents_not_all(kb) -> None:
    from tests.helpers.locations import HANDBOOK
    from threadsage.ingestion.pipeline import Ingestor

    assert Ingestor(kb, 1200, 200).ingest_paths([HANDBOOK]).ok
    assert await kb.search("password reset", k=5, categories=None)
    assert await kb.search("password reset", k=5, categories=[]) == []


@contextmanager
def beside_bm25(
    settings: Settings, folder: Path, milvus_uri: str | None = None, languages: tuple[str, ...] = ("en",)
) -> Iterator[tuple[KnowledgeBase, KnowledgeBase]]:
    """`folder` ingested twice, embedded or on the Milvus server at `milvus_uri`: with dense search
    of the other languages (vectors from the fake OpenAI server; documents said to be in
    `languages`), and with BM25 alone."""
    fake = FakeOpenAI(embedding_dim=48).start()
    name = f"t{uuid.uuid4().hex[:12]}"
    where = {"milvus_uri": milvus_uri, "collection": name} if milvus_uri else {}
    configured = settings.model_copy(
        update={
            "embeddings": "openai",
            "openai_base_url": fake.base_url,
            "openai_api_key": "sk-test",
            "dense_search": "other_languages",
            "document_languages": list(languages),
            **where,
        }
    )
    kb = open_knowledge_base(
        configured, OpenAIEmbedder(configured, configured.embedding_model), DenseUse.of(configured)
    )
    bm25 = {**where, "collection": f"{name}_bm25"} if milvus_uri else {"data_dir": settings.data_dir / "bm25"}
    plain = open_knowledge_base(settings.model_copy(update=bm25))
    try:
        for knowledge in (kb, plain):
            assert ingestor(knowledge).ingest_paths([folder]).ok
        yield kb, plain
    finally:
        for knowledge in (kb, plain):
            if milvus_uri:
                knowledge.drop()
            knowledge.close()
        fake.stop()


def where(hits: list[Hit]) -> list[tuple[str, int]]:
    """Hits as page and chunk (a chunk's id differs between two ingests of one folder)."""
    return [(h.path, h.chunk_index) for h in hits]


@pytest.mark.parametrize("back_end", ["embedded", pytest.param("server", marks=pytest.mark.slow)])
def test_passages_in_another_language_are_ranked_apart(
    settings: Settings, back_end: str, request: pytest.FixtureRequest
) -> None:
    """THREADSAGE_DENSE_SEARCH=other_languages: for a question in none of the documents' languages,
    the dense ranking brings the passages in another language than the question's, first on ties,
    so those in its own language do not crowd them out; a question in one of the documents'
    languages is searched by BM25 alone. The same on a Milvus server (a Milvus Lite server
    process), which ranks each list and leaves the fusion to us."""
    uri = request.getfixturevalue("milvus_uri") if back_end == "server" else None
    with beside_bm25(settings, HANDBOOK / "it", uri) as (kb, plain):
        chinese = "设备丢失后必须在多长时间内报告？"
        assert plain.search_blocking(chinese, k=1)[0].path == "security-rules-zh.md"
        hits = kb.search_blocking(chinese, k=5)
        assert not hits[0].path.endswith("-zh.md")  # ties go to the documents' language
        assert "security-rules-zh.md" in [h.path for h in hits]  # BM25's best stays in the top 5

        english = "How soon must a lost laptop be reported?"
        assert where(kb.search_blocking(english, k=5)) == where(plain.search_blocking(english, k=5))


def test_documents_said_to_be_chinese_answer_an_english_question_from_a_chinese_page(settings: Settings) -> None:
    with beside_bm25(settings, HANDBOOK / "it", languages=("zh",)) as (kb, plain):
        english = "How soon must a lost laptop be reported?"
        assert not any(h.path.endswith("-zh.md") for h in plain.search_blocking(english, k=5))
        assert any(h.path.endswith("-zh.md") for h in kb.search_blocking(english, k=5))


def test_a_corpus_in_the_questions_language_alone_is_searched_as_by_bm25(settings: Settings) -> None:
    with beside_bm25(settings, HANDBOOK / "engineering") as (kb, plain):
        for question in ("Who reviews a pull request?", "When does the on-call week hand over?"):
            hits = kb.search_blocking(question, k=5)
            assert where(hits) == where(plain.search_blocking(question, k=5))
            assert [h.score for h in hits] == [h.score for h in plain.search_blocking(question, k=5)]
