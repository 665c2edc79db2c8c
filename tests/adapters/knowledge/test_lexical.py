"""The embedded default's in-process BM25 (threadsage/adapters/knowledge/lexical.py) through the knowledge
base, on real Milvus Lite and real corpora: global statistics, atomic visibility, persistence."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest
from milvus_lite.analyzer.jieba_analyzer import JiebaAnalyzer

from tests.helpers.locations import HANDBOOK
from threadsage.adapters.documents.chunking import chunk_document
from threadsage.adapters.documents.loaders import load_file
from threadsage.adapters.knowledge import KnowledgeBase, open_knowledge_base
from threadsage.adapters.knowledge.lexical import LexicalIndex
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings
from threadsage.support.text import COMMONEST_WORDS, index_form, index_terms

FACT = "The quarterly budget for team offsites is approved by the People Operations manager in Lisbon."


def ingestor(kb: KnowledgeBase) -> Ingestor:
    return Ingestor(kb, chunk_chars=1200, chunk_overlap=200)


def two_hundred_files(eval_dir: Path, into: Path) -> Path:
    """200 handbook pages (GitLab and Basecamp, each copied under five folders)."""
    pages = [p for p in sorted((eval_dir / "gitlab-handbook" / "corpus").rglob("*.md")) if p.name != "_index.md"]
    pages += sorted((eval_dir / "basecamp-handbook").glob("*.md"))
    copies = ((n, page) for n in range(5) for page in pages)
    for n, page in itertools.islice(copies, 200):
        target = into / f"copy{n}" / page.parent.name / page.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page, target)
    assert len(list(into.rglob("*.md"))) == 200
    return into


@pytest.mark.slow
def test_a_file_added_alone_after_a_big_ingest_is_found_by_its_own_sentence(
    kb: KnowledgeBase, eval_dir: Path, tmp_path: Path
) -> None:
    """Milvus Lite's own BM25 kept statistics per storage segment: this file, alone in its
    segment, scored below pages that merely shared its common words."""
    corpus = two_hundred_files(eval_dir, tmp_path / "corpus")
    assert ingestor(kb).ingest_paths([corpus]).new == 200
    lone = tmp_path / "later" / "offsites.md"
    lone.parent.mkdir()
    lone.write_text(f"# Team offsites\n\n{FACT}\n\nBook venues at least six weeks ahead.\n")
    assert ingestor(kb).ingest_paths([lone.parent]).new == 1

    hits = kb.search_blocking(FACT, k=5)
    assert hits[0].path == "offsites.md", [h.path for h in hits]


def test_a_replaced_document_is_seen_old_or_new_never_half(kb: KnowledgeBase, tmp_path: Path) -> None:
    page = tmp_path / "docs" / "vpn.md"
    page.parent.mkdir()
    page.write_text("# VPN\n\nThe VPN gateway is called Kestrel.\n")
    ingestor(kb).ingest_paths([page.parent])
    old = kb.search_blocking("VPN gateway Kestrel Osprey", k=5)
    assert [h.text for h in old] == ["The VPN gateway is called Kestrel."]

    page.write_text("# VPN\n\nThe VPN gateway is now called Osprey.\n")
    new_chunks = chunk_document(load_file(page, page.parent), 1200, 200)
    kb.delete_documents([new_chunks[0].document.doc_id])
    kb.write_chunks(new_chunks)
    assert kb.search_blocking("VPN gateway Kestrel Osprey", k=5) == old, "nothing shows before the flush"
    kb.flush()
    hits = kb.search_blocking("VPN gateway Kestrel Osprey", k=5)
    assert [h.text for h in hits] == ["The VPN gateway is now called Osprey."]


def test_another_reader_sees_each_commit_whole(settings: Settings, kb: KnowledgeBase) -> None:
    """A second reader of the index directory, as another process would open it."""
    ingestor(kb).ingest_paths([HANDBOOK / "it"])
    reader = LexicalIndex(settings.milvus_lite_path.parent / "lexical" / settings.collection)
    assert reader.count() == kb.count() > 0
    ingestor(kb).ingest_paths([HANDBOOK / "finance"])
    reader.refresh()
    assert reader.count() == kb.count()
    terms = index_terms(index_form("hotel limits Lisbon"))
    assert reader.search(terms, 1)[0][1]["path"] == "expenses-lisbon.md"


def test_the_index_persists_and_is_rebuilt_from_milvus_when_missing(settings: Settings) -> None:
    kb = open_knowledge_base(settings)
    ingestor(kb).ingest_paths([HANDBOOK])
    chunks, top = kb.count(), kb.search_blocking("reset my VPN password", k=3)
    kb.close()

    reopened = open_knowledge_base(settings)
    assert (reopened.count(), reopened.search_blocking("reset my VPN password", k=3)) == (chunks, top)
    assert ingestor(reopened).ingest_paths([HANDBOOK]).unchanged > 0
    reopened.close()

    shutil.rmtree(settings.milvus_lite_path.parent / "lexical")
    rebuilt = open_knowledge_base(settings)
    try:
        assert rebuilt.count() == chunks
        assert [h.id for h in rebuilt.search_blocking("reset my VPN password", k=3)] == [h.id for h in top]
        assert rebuilt.category_counts() == {"": len(rebuilt.stored_documents())}
    finally:
        rebuilt.close()


@pytest.mark.slow
def test_index_terms_are_milvus_analyzer_tokens(eval_dir: Path) -> None:
    """The same tokens Milvus Lite's jieba analyzer (ANALYZER_PARAMS) makes of the index form."""
    milvus = JiebaAnalyzer(stop_words=set(COMMONEST_WORDS))
    texts = [p.read_text(encoding="utf-8") for p in sorted((eval_dir / "basecamp-handbook").glob("*.md"))]
    with (eval_dir / "cmrc2018" / "dev_corpus.jsonl").open(encoding="utf-8") as lines:
        texts += [json.loads(line)["text"] for line in itertools.islice(lines, 100)]
    for text in texts:
        form = index_form(text)
        assert index_terms(form) == milvus.tokenize(form)
