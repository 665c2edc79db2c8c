"""The chunks another ranking found, read back by id (`KnowledgeBase.hits_of`): narrowed as a
search is — a place reads only the categories and paths it may — and in the order asked."""

from __future__ import annotations

import uuid

import pytest

from tests.helpers.locations import HANDBOOK
from threadsage.adapters.knowledge import KnowledgeBase, open_knowledge_base
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings


@pytest.mark.parametrize("back_end", ["embedded", pytest.param("server", marks=pytest.mark.slow)])
def test_hits_of_reads_the_admitted_chunks_in_the_order_asked(
    settings: Settings, back_end: str, request: pytest.FixtureRequest
) -> None:
    server = back_end == "server"
    if server:
        where = {"milvus_uri": request.getfixturevalue("milvus_uri"), "collection": f"t{uuid.uuid4().hex[:12]}"}
        settings = settings.model_copy(update=where)
    kb = open_knowledge_base(settings)
    try:
        check_hits_of(kb)
    finally:
        if server:
            kb.drop()
        kb.close()


def check_hits_of(kb: KnowledgeBase) -> None:
    assert kb.hits_of(["anything"]) == []  # nothing ingested yet
    Ingestor(kb, 1200, 200).ingest_paths([HANDBOOK / "it"], category="it")
    Ingestor(kb, 1200, 200).ingest_paths([HANDBOOK / "finance"], category="finance")
    every = {hit.id: hit for hit in kb.passages()}
    it = [i for i, hit in every.items() if hit.category == "it"][:2]
    finance = [i for i, hit in every.items() if hit.category == "finance"][:2]
    asked = [finance[1], it[0], "deleted-or-never-there", finance[0], it[1]]

    assert [h.id for h in kb.hits_of(asked)] == [finance[1], it[0], finance[0], it[1]]
    assert [h.id for h in kb.hits_of(asked, categories=["it"])] == [it[0], it[1]]
    assert kb.hits_of(asked, categories=[]) == []  # no categories: no documents, as in `search`
    path = every[finance[0]].path
    assert {h.path for h in kb.hits_of(asked, paths=[path])} == {path}
    hit = kb.hits_of([it[0]])[0]
    assert (hit.text, hit.title, hit.score) == (every[it[0]].text, every[it[0]].title, 0.0)
