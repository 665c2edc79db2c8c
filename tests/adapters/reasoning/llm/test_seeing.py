"""The question's images in the answer call of a chat model that sees (THREADSAGE_CHAT_MODEL_VISION),
against the fake OpenAI server over real HTTP: what goes on the wire, how large, and what a
server that refuses images (HTTP 400) and a model without the setting get."""

from __future__ import annotations

import base64
import io
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_ollama import ChatOllama
from PIL import Image

from tests.fakes.openai_server import Failure, FakeOpenAI, image_urls, kind_of, user_text
from tests.helpers import screenshots
from threadsage.adapters.reasoner import Passage, TurnImage
from threadsage.adapters.reasoning.llm.back_end import LLMReasoner, asked
from threadsage.adapters.reasoning.llm.calls import ModelFailure
from threadsage.adapters.reasoning.llm.seeing import with_images
from threadsage.settings.environment import Settings

OCR_TEXT = "Sync failed\nCould not reach the license server at 10.0.4.12:27000 (ECONNREFUSED).\nError code: LIC-4012"
SCREENSHOT = Passage(
    id="attached-1", path="screenshot.png", source="attachment:screenshot.png", title="screenshot.png",
    heading="", text=OCR_TEXT, score=1.0,
)  # fmt: skip
QUESTION = "What does this mean?"


def reasoner_for(tmp_path: Path, llm: FakeOpenAI, vision: bool) -> LLMReasoner:
    settings = Settings(
        THREADSAGE_DATA_DIR=tmp_path,
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=llm.base_url,
        THREADSAGE_CHAT_MODEL_VISION=vision,
        THREADSAGE_LLM_TIMEOUT=2,
        THREADSAGE_LLM_RETRIES=1,
        _env_file=None,
    )
    reasoner = LLMReasoner(settings, "UTC")
    reasoner.calls._backoff = 0.01
    return reasoner


@pytest.fixture
async def seeing(tmp_path: Path, llm: FakeOpenAI) -> AsyncIterator[LLMReasoner]:
    reasoner = reasoner_for(tmp_path, llm, vision=True)
    yield reasoner
    await reasoner.aclose()


def answer_requests(llm: FakeOpenAI) -> list[dict]:
    return [body for path, body in llm.requests if path.endswith("/chat/completions") and kind_of(body) == "answer"]


def sent_image(url: str) -> Image.Image:
    media, _, data = url.removeprefix("data:").partition(";base64,")
    image = Image.open(io.BytesIO(base64.b64decode(data)))
    assert Image.MIME[image.format or ""] == media
    return image


def picture(size: tuple[int, int], kind: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(out, kind)
    return out.getvalue()


async def test_the_answer_call_carries_the_image_beside_its_ocr_text(llm: FakeOpenAI, seeing: LLMReasoner) -> None:
    png = screenshots.error_dialog()
    llm.script["answer"] = {"answer": "The license server refused the connection [1].", "used": [1]}
    result = await seeing.answer(QUESTION, [SCREENSHOT], [TurnImage("screenshot.png", "image/png", png)])
    assert result.answer == "The license server refused the connection [1]."
    [request] = answer_requests(llm)
    assert image_urls(request) == ["data:image/png;base64," + base64.b64encode(png).decode()]
    [question] = [m for m in request["messages"] if m["role"] == "user"]
    assert [part["type"] for part in question["content"]] == ["text", "text", "image_url"]
    assert "LIC-4012" in user_text(request) and "Image sent with the question: screenshot.png" in user_text(request)


async def test_only_the_answer_call_sees_the_images(llm: FakeOpenAI, seeing: LLMReasoner) -> None:
    """The judge reads the excerpts alone: the images are the answer's, and cost tokens."""
    images = [TurnImage("screenshot.png", "image/png", screenshots.error_dialog())]
    answer = await seeing.answer(QUESTION, [SCREENSHOT], images)
    await seeing.judge(QUESTION, [SCREENSHOT], answer.answer)
    assert [bool(image_urls(body)) for _, body in llm.requests] == [True, False]


@pytest.mark.parametrize(
    ("size", "kind", "media_type", "sent_size", "sent_format"),
    [
        ((4096, 1024), "PNG", "image/png", (2048, 512), "PNG"),  # a wide screenshot: scaled down, still PNG
        ((3000, 4000), "JPEG", "image/jpeg", (1536, 2048), "JPEG"),  # a phone photo, scaled down as JPEG
        ((1280, 800), "GIF", "image/gif", (1280, 800), "PNG"),  # a GIF: its first frame, as PNG
    ],
)
async def test_images_are_sent_at_most_2048_pixels_a_side_in_a_type_every_provider_takes(
    llm: FakeOpenAI, seeing: LLMReasoner, size, kind, media_type, sent_size, sent_format
) -> None:
    await seeing.answer(QUESTION, [SCREENSHOT], [TurnImage(f"image.{kind.lower()}", media_type, picture(size, kind))])
    [url] = image_urls(answer_requests(llm)[0])
    sent = sent_image(url)
    assert (sent.size, sent.format) == (sent_size, sent_format)


async def test_a_server_that_refuses_images_gets_the_text_alone_and_the_answer_comes(
    llm: FakeOpenAI, seeing: LLMReasoner, caplog: pytest.LogCaptureFixture
) -> None:
    """HTTP 400 for the image (a model without vision): the same answer asked again without it,
    from the OCR text; said once at WARNING, not at every question."""
    llm.habits.add("rejects_images")
    llm.script["answer"] = {"answer": "The license server refused the connection [1].", "used": [1]}
    images = [TurnImage("screenshot.png", "image/png", screenshots.error_dialog())]
    with caplog.at_level(logging.INFO, logger="threadsage.adapters.reasoning.llm.seeing"):
        first = await seeing.answer(QUESTION, [SCREENSHOT], images)
        second = await seeing.answer("And what is LIC-4012?", [SCREENSHOT], images)
    assert first.answer == second.answer == "The license server refused the connection [1]."
    assert [bool(image_urls(body)) for body in answer_requests(llm)] == [True, False, True, False]
    assert "LIC-4012" in user_text(answer_requests(llm)[1])
    refusals = [r for r in caplog.records if "refused the question's images" in r.getMessage()]
    assert [r.levelno for r in refusals] == [logging.WARNING, logging.INFO]


async def test_a_server_error_is_no_refusal_of_the_images(llm: FakeOpenAI, seeing: LLMReasoner) -> None:
    """A 503 is retried as ever and then fails (the node falls back): every try carried the image."""
    llm.script["answer"] = Failure(status=503)
    with pytest.raises(ModelFailure, match="503"):
        await seeing.answer(QUESTION, [SCREENSHOT], [TurnImage("s.png", "image/png", screenshots.error_dialog())])
    assert [bool(image_urls(body)) for body in answer_requests(llm)] == [True, True]


async def test_without_the_setting_no_image_is_sent(tmp_path: Path, llm: FakeOpenAI) -> None:
    reasoner = reasoner_for(tmp_path, llm, vision=False)
    try:
        await reasoner.answer(QUESTION, [SCREENSHOT], [TurnImage("s.png", "image/png", screenshots.error_dialog())])
    finally:
        await reasoner.aclose()
    [request] = answer_requests(llm)
    assert image_urls(request) == [] and all(isinstance(m["content"], str) for m in request["messages"])
    assert "LIC-4012" in user_text(request)


async def test_anthropic_and_ollama_get_the_image_in_their_own_form() -> None:
    """The standard image block as LangChain converts it for the other providers the settings name
    (their request built, not sent: there is no fake of their APIs)."""
    png = screenshots.error_dialog()
    messages = await with_images(
        asked("system", "Question: what does this mean?"), [TurnImage("s.png", "image/png", png)]
    )
    encoded = base64.b64encode(png).decode()
    anthropic = ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-ant-test")._get_request_payload(messages)
    [question] = anthropic["messages"]
    assert {"type": "base64", "media_type": "image/png", "data": encoded} in [
        b.get("source") for b in question["content"]
    ]
    ollama = ChatOllama(model="llava")._convert_messages_to_ollama_messages(messages)
    assert ollama[-1]["images"] == [encoded] and "what does this mean?" in ollama[-1]["content"]
