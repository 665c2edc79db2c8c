"""Chinese questions about English documents, offline: glossed word by word into English with
CC-CEDICT (`glossing.py`) and searched beside the question, only where the documents are not in
the question's language."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.helpers.locations import HANDBOOK
from threadsage.adapters.knowledge import DenseUse, KnowledgeBase, open_knowledge_base
from threadsage.i18n.glossing import can_gloss, glossed
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings


def test_a_gloss_keeps_latin_words_and_translates_the_chinese_ones() -> None:
    gloss = glossed("丢失的笔记本电脑和 VPN 密码")
    assert "laptop" in gloss and "lose" in gloss and "VPN" in gloss
    assert not any("\u4e00" <= c <= "\u9fff" for c in gloss)
    assert glossed("多长时间").split()[-1] == "time"  # a word the dictionary lacks, by its headwords
    assert glossed("") == "" and glossed("VPN 2FA") == "VPN 2FA"
    assert can_gloss("zh", "en") and not can_gloss("en", "zh") and not can_gloss("zh", "zh")


def english_only(tmp_path: Path) -> Path:
    """The demo handbook's IT pages without their Chinese one."""
    folder = Path(shutil.copytree(HANDBOOK / "it", tmp_path / "it"))
    (folder / "security-rules-zh.md").unlink()
    return folder


def test_a_chinese_question_finds_the_english_page_that_answers_it(kb: KnowledgeBase, tmp_path: Path) -> None:
    assert Ingestor(kb, 1200, 200).ingest_paths([english_only(tmp_path)]).ok
    hits = kb.search_blocking("笔记本电脑丢失后必须在多长时间内报告？", k=5)
    assert "laptops.md" in [h.path for h in hits[:3]] or "security.md" in [h.path for h in hits[:3]]


def test_beside_some_chinese_pages_the_english_answer_keeps_a_place(kb: KnowledgeBase, tmp_path: Path) -> None:
    """The Chinese page shares the question's words; the English page that answers it still gets
    the second place (each ranking's places in turn: the question's words, then its gloss)."""
    folder = Path(shutil.copytree(HANDBOOK / "it", tmp_path / "it"))  # security-rules-zh.md included
    assert Ingestor(kb, 1200, 200).ingest_paths([folder]).ok
    hits = kb.search_blocking("办公室无线网络的密码是什么？", k=5)
    assert hits[0].path == "security-rules-zh.md" and hits[1].path == "office-wifi-and-printers.txt"
    assert len({(h.path, h.heading) for h in hits}) == len(hits) == 5


def test_documents_in_the_questions_language_are_searched_as_asked(settings: Settings, tmp_path: Path) -> None:
    """A corpus mostly in Chinese needs no gloss, whatever the documents' languages are said to be;
    nor does one said to be in the question's language: the hits are BM25's own, scores included."""
    chinese = tmp_path / "zh"
    chinese.mkdir()
    for n, topic in enumerate(["年假每年十五天", "病假需要医生证明", "报销在三十天内提交"]):
        (chinese / f"p{n}.md").write_text(f"# 规定{n}\n\n{topic}。员工请遵守。\n", encoding="utf-8")
    question = "年假有几天？"
    said_zh = open_knowledge_base(
        settings.model_copy(update={"data_dir": tmp_path / "a"}), dense=DenseUse(document_languages=("zh",))
    )
    said_en = open_knowledge_base(settings.model_copy(update={"data_dir": tmp_path / "b"}))
    try:
        for kb in (said_zh, said_en):
            assert Ingestor(kb, 1200, 200).ingest_paths([chinese]).ok
        plain, default = said_zh.search_blocking(question, k=3), said_en.search_blocking(question, k=3)
        assert [(h.path, h.score) for h in default] == [(h.path, h.score) for h in plain]
        assert plain[0].path == "p0.md"
    finally:
        said_zh.close()
        said_en.close()
