"""A screenshot sent with a question, to a chat model that sees (THREADSAGE_CHAT_MODEL_VISION): through
the chat service, its text read by real OCR, the graph on Postgres, the model the fake OpenAI server
over HTTP. The answer call carries the image beside its text; no checkpoint holds the image; a
server that refuses images still answers, from the text; without the setting no image is sent."""

from __future__ import annotations

import base64
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from tests.fakes.openai_server import FakeOpenAI, image_urls, kind_of, user_text
from tests.helpers import screenshots
from tests.helpers.conversation import llm_chat, only
from threadsage.adapters.documents.attachments import Attachment
from threadsage.chat import ChatService, ReplyKind, Turn

pytestmark = pytest.mark.slow  # real OCR, in a reader process

SESSION = "test:ws:D1"
ANSWER = {"answer": "The license server at 10.0.4.12 refused the connection [1].", "used": [1]}


def answer_requests(llm: FakeOpenAI) -> list[dict]:
    return [body for path, body in llm.requests if path.endswith("/chat/completions") and kind_of(body) == "answer"]


async def ask_with_screenshot(chat: ChatService, png: bytes) -> str:
    attachment = Attachment("screenshot.png", png, "image/png")
    reply = only(
        await chat.handle(Turn("test", SESSION, "U1", "m1", text="What does this mean?", attachments=(attachment,)))
    )
    assert reply.kind is ReplyKind.ANSWER and reply.citations[0]["path"] == "screenshot.png", reply
    return reply.text


async def everything_saved(database_url: str) -> bytes:
    """Every value of every table in the test's schema (checkpoints, their blobs and writes, the
    turn records), as bytes: what the database holds after the turns."""
    found = bytearray()
    async with await psycopg.AsyncConnection.connect(database_url) as conn:
        tables = await conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        )
        for (table,) in await tables.fetchall():
            rows = await conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(table)))
            for row in await rows.fetchall():
                found += b"".join(v if isinstance(v, bytes) else str(v).encode() for v in row)
    return bytes(found)


async def test_the_model_sees_the_screenshot_beside_its_text_and_no_checkpoint_holds_it(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb, pg_url: str
) -> None:
    png = screenshots.error_dialog()
    llm.script["answer"] = ANSWER
    async with llm_chat(tmp_path, llm, handbook_kb, DATABASE_URL=pg_url, THREADSAGE_CHAT_MODEL_VISION=True) as chat:
        assert await ask_with_screenshot(chat, png) == ANSWER["answer"]
        follow_up = Turn("test", SESSION, "U1", "m2", text="What does the error code LIC-4012 in the screenshot mean?")
        assert only(await chat.handle(follow_up)).kind is ReplyKind.ANSWER
    first, second = answer_requests(llm)
    encoded = base64.b64encode(png).decode()
    assert image_urls(first) == [f"data:image/png;base64,{encoded}"]
    assert "LIC-4012" in user_text(first)  # the OCR text, among the excerpts
    assert image_urls(second) == [] and "LIC-4012" in user_text(second)  # a later turn: the text alone
    saved = await everything_saved(pg_url)
    assert b"LIC-4012" in saved  # the OCR text is kept, for the questions that follow
    assert encoded[1000:1100].encode() not in saved and png[1000:1100] not in saved  # the image is not


async def test_a_server_that_refuses_images_answers_from_their_text(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    llm.habits.add("rejects_images")
    llm.script["answer"] = ANSWER
    async with llm_chat(tmp_path, llm, handbook_kb, THREADSAGE_CHAT_MODEL_VISION=True) as chat:
        assert await ask_with_screenshot(chat, screenshots.error_dialog()) == ANSWER["answer"]
    with_image, text_only = answer_requests(llm)
    assert image_urls(with_image) and not image_urls(text_only) and "LIC-4012" in user_text(text_only)


async def test_without_the_setting_the_model_gets_the_text_alone(tmp_path: Path, llm: FakeOpenAI, handbook_kb) -> None:
    llm.script["answer"] = ANSWER
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        assert await ask_with_screenshot(chat, screenshots.error_dialog()) == ANSWER["answer"]
    [request] = answer_requests(llm)
    assert image_urls(request) == [] and "LIC-4012" in user_text(request)
