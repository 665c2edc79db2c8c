"""A file attached to a conversation, asked about as people ask: by a word only the file has
("What is the Heron budget?" — the handbook has a learning budget too), by pointing at it ("what
does the attached file say about…", "这个文件说了什么"), in Markdown, Word and PDF; through the
chat service on the offline back-end, and on Slack and Telegram through their harnesses."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

import pytest

from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers.conversation import service
from tests.helpers.made_files import docx_bytes, pdf_bytes
from tests.helpers.slack_harness import Harness, as_text, file_share
from tests.helpers.telegram_harness import ANN, new_messages, private
from threadsage.adapters.documents.attachments import Attachment
from threadsage.bots.telegram import TelegramBot
from threadsage.chat import ReplyKind, Turn
from threadsage.i18n import say

NOTE = "The Heron budget is 48,000 euros."
FILES = {
    "note.md": ("text/markdown", lambda: f"# Note\n\n{NOTE}\n".encode()),
    "note.docx": (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        lambda: docx_bytes("Note", {"Money": NOTE}),
    ),
    "note.pdf": ("application/pdf", lambda: pdf_bytes("Note", NOTE)),
}
QUESTIONS = [
    "What is the Heron budget?",  # only "budget" is in the handbook, in another sense
    "What does the attached file say about the budget?",
    "这个文件说了什么？",
]
HEDGES = (say("closest_passage", "en", label="").split("*")[0], say("closest_passage", "zh", label="").split("*")[0])


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize("name", list(FILES))
async def test_the_attached_file_answers_the_question_about_it(
    tmp_path: Path, handbook_kb, name: str, question: str
) -> None:
    media_type, make = FILES[name]
    async with service(tmp_path, "", handbook_kb) as chat:
        [answer] = await chat.handle(
            Turn("test", "test:ws:D1", "U1", "m1", text=question, attachments=(Attachment(name, make(), media_type),))
        )
    assert answer.kind is ReplyKind.ANSWER and "48,000 euros" in answer.text, answer.text
    assert not answer.text.startswith(HEDGES), answer.text  # answered, not "may not answer"
    assert answer.citations[0]["path"] == name


async def test_the_handbook_still_answers_when_the_file_is_about_something_else(tmp_path: Path, handbook_kb) -> None:
    _, make = FILES["note.md"]
    question = "What is the yearly learning budget?"
    async with service(tmp_path, "", handbook_kb) as chat:
        [answer] = await chat.handle(
            Turn("test", "test:ws:D1", "U1", "m1", text=question, attachments=(Attachment("note.md", make()),))
        )
    assert "€1,000" in answer.text and answer.citations[0]["path"] == "people/benefits.md", answer.text


@pytest.mark.parametrize("name", list(FILES))
async def test_slack_a_file_in_a_dm_asked_about_naturally(slack: Harness, name: str) -> None:
    media_type, make = FILES[name]
    file = slack.fake.upload(name, make(), media_type)
    first = file_share("What does the attached file say about the budget?", [file])
    assert await slack.event(first) == 200
    await slack.settle()
    assert await slack.event(file_share("What is the Heron budget?", [], thread_ts=first["ts"])) == 200
    await slack.settle()
    pointed, plain = slack.fake.posted()
    for answer in (pointed, plain):
        assert name in as_text(answer) and not as_text(answer).startswith(HEDGES), as_text(answer)
    assert "48,000 euros" in as_text(pointed) and "48,000 euros" in as_text(plain)


@pytest.mark.parametrize("name", list(FILES))
async def test_telegram_a_document_asked_about_naturally(bot, fake: FakeBotAPI, name: str) -> None:
    media_type, make = FILES[name]
    chat = private(ANN)
    fake.send_file(chat, ANN, "这个文件说了什么？", fake.upload(name, make(), media_type))
    [summary] = await new_messages(fake, chat, 0)
    fake.say(chat, ANN, "What is the Heron budget?")
    [plain] = await new_messages(fake, chat, 1)
    assert "48,000 euros" in summary["text"] and "48,000 euros" in plain["text"], (summary["text"], plain["text"])
    assert name in summary["text"] and name in plain["text"] and not plain["text"].startswith(HEDGES)


async def test_slack_a_question_right_after_a_file_waits_for_it(slack: Harness) -> None:
    """A file sent alone, then at once a question about it: the question is answered from the file
    (its turn waits for the file's, downloaded and read, as for any earlier message of the DM)."""
    media_type, make = FILES["note.md"]
    file = slack.fake.upload("note.md", make(), media_type)
    assert await slack.event(file_share("", [file])) == 200
    assert await slack.event(file_share("What is the Heron budget?", [])) == 200
    await slack.settle()
    texts = [as_text(m) for m in slack.fake.posted()]
    assert any("48,000 euros" in text for text in texts), texts


async def test_telegram_a_question_right_after_a_file_waits_for_it(
    bot: TelegramBot, fake: FakeBotAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document sent alone, then at once a question about it: the question is answered from the
    document, even when the document's update is the slower to reach its turn (here its first read
    of the conversation, as two reads from a pool of database connections may end in either order)."""
    read, slowed = bot.chat.last_activity, []

    async def first_read_slow(session_key: str) -> datetime | None:
        if not slowed:
            slowed.append(session_key)
            await asyncio.sleep(0.5)
        return await read(session_key)

    monkeypatch.setattr(bot.chat, "last_activity", first_read_slow)
    media_type, make = FILES["note.md"]
    chat = private(ANN)
    fake.send_file(chat, ANN, "", fake.upload("note.md", make(), media_type))
    fake.say(chat, ANN, "What is the Heron budget?")
    kept, answer = await new_messages(fake, chat, 0, count=2)
    assert "note.md" in kept["text"] and "48,000 euros" in answer["text"], (kept["text"], answer["text"])
