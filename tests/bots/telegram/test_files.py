"""Documents and photos sent to the Telegram bot, and /start, through the real python-telegram-bot
against the fake Bot API over HTTP (getFile, then the file URL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers import screenshots
from tests.helpers.locations import HANDBOOK
from tests.helpers.made_files import docx_bytes, pdf_bytes
from tests.helpers.telegram_harness import (
    ANN,
    BOB,
    GROUP,
    TRAVEL,
    bot_settings,
    exchange,
    new_messages,
    private,
    running,
)
from threadsage.adapters.knowledge import open_knowledge_base
from threadsage.i18n import say
from threadsage.ingestion.pipeline import Ingestor

HERON = "The Heron pilot budget is 48,000 euros, approved by the steering board in March."
QUESTION = "What is the Heron pilot budget?"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


async def test_a_document_with_a_caption_is_answered_from_it(bot, fake: FakeBotAPI) -> None:
    chat = private(ANN)
    document = fake.upload("heron.pdf", pdf_bytes("Project Heron", HERON), "application/pdf")
    fake.send_file(chat, ANN, QUESTION, document)
    [answer] = await new_messages(fake, chat, 0)
    assert "48,000 euros" in answer["text"] and "heron.pdf" in answer["text"]
    assert [c["file_id"] for c in fake.calls_of("getFile")] == [document["file_id"]]
    assert fake.calls_of("download") == [{"path": "documents/file_1.pdf"}]
    hits = await bot.chat.context.kb.search("Heron pilot budget steering board", 20)
    assert not any("Heron" in hit.text for hit in hits)  # the shared knowledge base never gets it


async def test_in_a_group_a_question_replying_to_a_document_is_answered_from_it(bot, fake: FakeBotAPI) -> None:
    document = fake.upload("heron.docx", docx_bytes("Project Heron", {"Budget": HERON}), DOCX)
    shared = fake.send_file(GROUP, BOB, "", document)  # not addressed to the bot: ignored
    fake.say(GROUP, ANN, f"@ask_bot {QUESTION}", reply_to=shared)
    [answer] = await new_messages(fake, GROUP, 0)
    assert "48,000 euros" in answer["text"] and "heron.docx" in answer["text"]
    assert answer["reply_to_message"]["from"]["id"] == ANN["id"]


async def test_in_a_group_a_document_asks_only_when_addressed_to_the_bot(bot, fake: FakeBotAPI) -> None:
    """A busy group: a document without a caption is someone else's business (not even fetched);
    with a mention in its caption it asks; sent without a caption as a reply to the bot's message
    it is read into that conversation, whose next reply is answered from it."""
    heron = fake.upload("heron.pdf", pdf_bytes("Project Heron", HERON), "application/pdf")
    fake.send_file(GROUP, BOB, "", heron)  # addressed to nobody: ignored
    fake.send_file(GROUP, ANN, f"@ask_bot {QUESTION}", heron)
    [answer] = await new_messages(fake, GROUP, 0)
    assert "48,000 euros" in answer["text"] and "heron.pdf" in answer["text"]

    _, travel = await exchange(fake, GROUP, BOB, f"@ask_bot {TRAVEL}")
    budget = fake.upload("budget.docx", docx_bytes("Budget", {"Budget": HERON}), DOCX)
    fake.send_file(GROUP, BOB, "", budget, reply_to=travel)
    [read] = await new_messages(fake, GROUP, 2)
    assert read["text"] == say("files_read_one", names="“budget.docx”")
    _, answer = await exchange(fake, GROUP, BOB, QUESTION, reply_to=read)
    assert "48,000 euros" in answer["text"] and "budget.docx" in answer["text"]
    assert len(fake.calls_of("getFile")) == 2 and len(fake.sent(GROUP["id"])) == 4  # the uncaptioned one: never


@pytest.mark.slow  # real OCR: seconds on a busy machine
async def test_a_photo_with_a_caption_is_read_and_answered_from_its_text(bot, fake: FakeBotAPI) -> None:
    """The largest size Telegram keeps is fetched; its text (OCR) answers "what does this mean?",
    quoted and cited as the photo."""
    chat = private(ANN)
    sizes = fake.upload_photo(screenshots.error_dialog())
    fake.send_file(chat, ANN, "What does this mean?", photo=sizes)
    [answer] = await new_messages(fake, chat, 0, timeout=120)
    name = f"photo-{sizes[-1]['file_unique_id']}.jpg"
    assert "Could not reach the license server" in answer["text"] and name in answer["text"]
    assert [c["file_id"] for c in fake.calls_of("getFile")] == [sizes[-1]["file_id"]]


async def test_a_photo_whose_sizes_are_all_too_big_is_not_fetched(bot, fake: FakeBotAPI) -> None:
    """None of a photo's sizes within the limit: the caption is answered, the photo named."""
    sizes = [{**size, "file_size": 25 * 1024 * 1024} for size in fake.upload_photo(screenshots.error_dialog())]
    chat = private(ANN)
    fake.send_file(chat, ANN, TRAVEL, photo=sizes)
    answer, problem = await new_messages(fake, chat, 0, count=2)
    assert "premium economy" in answer["text"].lower() and not fake.calls_of("getFile", ok_only=False)
    name = f"photo-{sizes[0]['file_unique_id']}.jpg"  # the smallest
    assert problem["text"] == f"I couldn't use “{name}”: it is 25.0 MB, and I read files of up to 10 MB."


async def test_a_document_too_big_is_not_fetched_and_the_caption_is_still_answered(bot, fake: FakeBotAPI) -> None:
    chat = private(ANN)
    document = fake.upload("manual.pdf", pdf_bytes("Manual"), "application/pdf", size=25 * 1024 * 1024)
    fake.send_file(chat, ANN, TRAVEL, document)
    answer, problem = await new_messages(fake, chat, 0, count=2)
    assert "premium economy" in answer["text"].lower()
    assert problem["text"] == "I couldn't use “manual.pdf”: it is 25.0 MB, and I read files of up to 10 MB."
    assert not fake.calls_of("getFile", ok_only=False)


async def test_a_download_is_cut_at_the_cap_whatever_size_was_declared(bot, fake: FakeBotAPI) -> None:
    """A self-hosted Bot API server lets bots download files of any size, and a message may
    declare any size: the bytes are counted as they arrive, and reading stops past the cap."""
    chat = private(ANN)
    content = b"# Manual\n\n" + b"word " * (12 * 1024 * 1024)  # 60 MB, declared as 1 KB
    fake.send_file(chat, ANN, TRAVEL, fake.upload("manual.md", content, "text/markdown", size=1024))
    answer, problem = await new_messages(fake, chat, 0, count=2)
    assert "premium economy" in answer["text"].lower()
    assert problem["text"].startswith("I couldn't use “manual.md”: it is 10.") and "up to 10 MB" in problem["text"]
    assert fake.downloaded < 25 * 1024 * 1024, f"{fake.downloaded / 1024 / 1024:.0f} MB sent"


async def test_start_lists_the_categories_this_chat_may_read_with_their_counts(
    tmp_path: Path, fake: FakeBotAPI
) -> None:
    settings = bot_settings(tmp_path, fake, THREADSAGE_DEFAULT_CATEGORIES=["it", "people"])
    kb = open_knowledge_base(settings)
    ingest = Ingestor(kb, settings.chunk_chars, settings.chunk_overlap)
    for category in ("it", "people", "finance"):
        assert ingest.ingest_paths([HANDBOOK / category], category=category).ok
    try:
        async with running(settings, kb):
            chat = private(ANN)
            fake.say(chat, ANN, "/start")
            [reply] = await new_messages(fake, chat, 0)
    finally:
        kb.close()
    assert reply["text"] == f"{say('tg_start')}\n\nWhat I can answer here:\n• people — 7 documents\n• it — 6 documents"


async def test_a_document_of_a_type_not_read_is_not_downloaded(bot, fake: FakeBotAPI) -> None:
    chat = private(ANN)
    fake.send_file(chat, ANN, TRAVEL, fake.upload("budget.xlsx", b"PK\x03\x04", "application/vnd.ms-excel"))
    answer, problem = await new_messages(fake, chat, 0, count=2)
    assert "premium economy" in answer["text"].lower() and problem["text"].startswith("I can't read “budget.xlsx”")
    assert not fake.calls_of("getFile", ok_only=False)


async def test_a_question_replying_to_a_document_still_being_read_waits_for_it(bot, fake: FakeBotAPI) -> None:
    """The document and the reply that asks about it arrive together: the question waits for the
    document's turn (one turn at a time per conversation) and is answered from it — never "I'm still
    reading the file you sent before", never an answer without it."""
    chat = private(ANN)
    filler = "".join(f"Row {n} of the appendix: a plain filler line.\n\n" for n in range(4_000))
    document = fake.upload(
        "heron.md", f"# Project Heron\n\n{HERON}\n\n## Appendix\n\n{filler}".encode(), "text/markdown"
    )
    sent = fake.send_file(chat, ANN, "", document)
    fake.say(chat, ANN, QUESTION, reply_to=sent)
    replies = await new_messages(fake, chat, 0, count=2)
    texts = [m["text"] for m in replies]
    still_reading = say("file_reading_yours", "en", name="heron.md")
    assert not any(still_reading in text for text in texts), texts
    assert any("48,000 euros" in text for text in texts), texts
