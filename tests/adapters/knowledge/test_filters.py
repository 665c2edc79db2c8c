"""Values that look like Milvus filter syntax stay values, on both back-ends: a document may be
named `a" or path != "b.md`, and paths and document ids reach Milvus filters (filters.py).
Each back-end with BM25 alone and hybrid (the fake model's embeddings over HTTP), so that every
filter Milvus reads is crossed: deletes, BM25 and dense searches."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from threadsage.adapters.knowledge import KnowledgeBase, open_knowledge_base
from threadsage.adapters.knowledge.embeddings import OpenAIEmbedder
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings

# File names, and values given to filters, that would widen a filter were they quoted in as they are.
NAMES = ('a"] or path not in ["b.md', 'c\\" or path != \\"d.md', "plain.md")
FORGED = (
    'nothing"] or {field} not in ["',
    'nothing" or {field} != "',
    'nothing\\" or {field} != \\"',
    "nothing' or {field} != '",
)
QUERY = "VPN gateway called"


def configured(settings: Settings, llm: FakeOpenAI, dense: bool, **update: object) -> tuple[Settings, bool]:
    embeddings = {"embeddings": "openai", "openai_base_url": llm.base_url, "openai_api_key": "sk-test"}
    return settings.model_copy(update=(embeddings if dense else {}) | update), dense


def opened(setup: tuple[Settings, bool]) -> KnowledgeBase:
    settings, dense = setup
    return open_knowledge_base(settings, OpenAIEmbedder(settings, settings.embedding_model) if dense else None)


def values_stay_values(kb: KnowledgeBase, folder: Path) -> int:
    """Ingest the named documents, search and delete with forged values: the chunks left."""
    ingest_named_documents(kb, folder)
    assert_paths_narrow_and_forged_paths_match_nothing(kb)
    left = forge_deletes(kb)
    assert kb.count() == left
    return left


def ingest_named_documents(kb: KnowledgeBase, folder: Path) -> None:
    folder.mkdir()
    for n, name in enumerate(NAMES):
        (folder / name).write_text(f"# Gateway {n}\n\nThe VPN gateway number {n} is called Kestrel {n}.\n")
    assert Ingestor(kb, 1200, 200).ingest_paths([folder]).new == len(NAMES)


def assert_paths_narrow_and_forged_paths_match_nothing(kb: KnowledgeBase) -> None:
    assert sorted(h.path for h in kb.search_blocking(QUERY, k=10)) == sorted(NAMES)
    for name in NAMES:
        assert {h.path for h in kb.search_blocking(QUERY, k=10, paths=[name])} == {name}
    for forged in FORGED:
        assert kb.search_blocking(QUERY, k=10, paths=[forged.format(field="path")]) == []


def forge_deletes(kb: KnowledgeBase) -> int:
    """Deletes with forged ids and hashes; what is left: the chunks of all but the one document
    whose other versions were deleted (all of its chunks: its hash is not the forged one)."""
    stored = kb.stored_documents()
    kb.delete_documents([forged.format(field="doc_id") for forged in FORGED])
    for forged in FORGED:
        kb.delete_stale(forged.format(field="doc_id"), next(iter(stored.values())).content_hash)
    victim = stored[min(stored)]
    kb.delete_stale(victim.doc_id, FORGED[0].format(field="content_hash"))
    kb.flush()
    return sum(d.chunks for d in stored.values()) - victim.chunks


@pytest.mark.parametrize("dense", [False, True], ids=["bm25", "hybrid"])
def test_values_with_quotes_stay_values_on_the_embedded_back_end(
    settings: Settings, llm: FakeOpenAI, tmp_path: Path, dense: bool
) -> None:
    setup = configured(settings, llm, dense)
    kb = opened(setup)
    try:
        left = values_stay_values(kb, tmp_path / "docs")
    finally:
        kb.close()
    # Milvus Lite's rows, not only the in-process index's: an index built anew from them.
    shutil.rmtree(settings.milvus_lite_path.parent / "lexical")
    kb = opened(setup)
    try:
        assert kb.count() == left
    finally:
        kb.close()


@pytest.mark.slow  # a Milvus Lite server process
@pytest.mark.parametrize("dense", [False, True], ids=["bm25", "hybrid"])
def test_values_with_quotes_stay_values_on_a_milvus_server(
    settings: Settings, llm: FakeOpenAI, tmp_path: Path, milvus_uri: str, dense: bool
) -> None:
    kb = opened(configured(settings, llm, dense, milvus_uri=milvus_uri, collection=f"t{uuid.uuid4().hex[:12]}"))
    try:
        values_stay_values(kb, tmp_path / "docs")
    finally:
        kb.drop()
        kb.close()
