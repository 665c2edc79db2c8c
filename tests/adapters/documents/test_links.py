"""Links of documents through ingestion and search: front matter `url:` and a folder's base URL,
a link changed or dropped on re-ingest, and a knowledge base made before links existed."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from pymilvus import MilvusClient

from tests.helpers.locations import HANDBOOK
from threadsage.adapters.knowledge import KnowledgeBase, open_knowledge_base
from threadsage.adapters.knowledge.schema import URL_FIELD, collection_schema
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings

SITE = "https://handbook.example.com/"
WIKI = "https://wiki.example.com/it/vpn"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """Two IT pages, the VPN page declaring its own link in its front matter."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "vpn.md").write_text(f"---\ntitle: VPN\nurl: {WIKI}\n---\n" + (HANDBOOK / "it/vpn.md").read_text())
    shutil.copy(HANDBOOK / "it/office-wifi-and-printers.txt", folder / "office wifi.txt")
    return folder


async def links(kb: KnowledgeBase, query: str) -> dict[str, str]:
    return {hit.path: hit.url for hit in await kb.search(query, 10)}


async def test_hits_carry_the_front_matter_link_or_the_folders_base_url(kb: KnowledgeBase, docs: Path) -> None:
    ingestor = Ingestor(kb, 1200, 150)
    assert ingestor.ingest_paths([docs], base_url=SITE).new == 2
    assert await links(kb, "VPN printer wifi") == {"vpn.md": WIKI, "office wifi.txt": SITE + "office%20wifi.txt"}
    again = ingestor.ingest_paths([docs])  # no base URL now: the page that named its own link keeps it
    assert (again.unchanged, again.changed) == (1, 1)
    assert await links(kb, "VPN printer wifi") == {"vpn.md": WIKI, "office wifi.txt": ""}


async def test_a_knowledge_base_made_before_links_keeps_answering_until_rebuilt(
    settings: Settings, docs: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings.milvus_lite_path.parent.mkdir(parents=True)
    client = MilvusClient(uri=str(settings.milvus_lite_path))
    schema, index = collection_schema(client, None)
    schema.fields[:] = [f for f in schema.fields if f.name != URL_FIELD]  # the fields of a collection made before
    client.create_collection(settings.collection, schema=schema, index_params=index)
    client.close()
    kb = open_knowledge_base(settings)
    try:
        with caplog.at_level(logging.WARNING):
            assert Ingestor(kb, 1200, 150).ingest_paths([docs], base_url=SITE).ok
        assert "predates links" in caplog.text and "--rebuild" in caplog.text
        assert await links(kb, "VPN printer wifi") == {"vpn.md": "", "office wifi.txt": ""}  # paths, as before
        kb.drop()  # what `threadsage ingest --rebuild` does
        assert Ingestor(kb, 1200, 150).ingest_paths([docs], base_url=SITE).ok
        assert (await links(kb, "VPN printer wifi"))["vpn.md"] == WIKI
    finally:
        kb.close()
