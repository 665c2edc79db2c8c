"""Images for a chat model that sees (`THREADSAGE_CHAT_MODEL_VISION`): the answer call carries the
images sent with the question, as LangChain's standard image content blocks, beside their OCR text.

LangChain turns a standard block into each provider's form (for OpenAI's Chat Completions an
`image_url` part with a data URL; Anthropic's base64 `source`; Ollama's `images`). An image longer
than `MAX_SIDE` pixels on a side is scaled down first, in a thread: providers scale larger ones down
themselves (OpenAI to 2048, Anthropic further), so the pixels past it would only cost the upload. A
server that refuses images (a text-only model: HTTP 400) gets the same call again with the text
alone, which holds the images' OCR text: the person never hears of it.
"""

from __future__ import annotations

import asyncio
import base64
import io
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.messages.content import ContentBlock, ImageContentBlock, TextContentBlock
from PIL import Image

from threadsage.adapters.reasoner import TurnImage
from threadsage.adapters.reasoning.llm.calls import ModelFailure

log = logging.getLogger(__name__)
T = TypeVar("T")
Call = Callable[[list[BaseMessage]], Awaitable[T]]
MAX_SIDE = 2048
SENT_AS_THEY_ARE = frozenset({"image/png", "image/jpeg", "image/webp"})  # GIF: its first frame, as PNG
# A request refused for what it holds, not retried: a model without vision (OpenAI, vLLM, llama.cpp
# without its projector answer 400), an image too large for the server (413), a type it cannot read.
REFUSALS = frozenset({400, 413, 415, 422})


@dataclass
class Vision:
    """Whether the chat model is shown the question's images (`seeing`), and whether a server
    refused them yet: the first refusal is a WARNING (the setting is probably wrong), later ones INFO."""

    seeing: bool
    refused: bool = False

    async def answered(self, call: Call[T], messages: list[BaseMessage], images: Sequence[TurnImage]) -> T:
        """`call(messages)`, its last message with the images when the model sees them; again
        without them when the server refuses them."""
        if not (self.seeing and images):
            return await call(messages)
        try:
            return await call(await with_images(messages, images))
        except ModelFailure as exc:
            if exc.status not in REFUSALS:
                raise
            level = logging.INFO if self.refused else logging.WARNING
            self.refused = True
            log.log(level, "the chat model refused the question's images (%s): answered from their text", exc)
            return await call(messages)


async def with_images(messages: list[BaseMessage], images: Sequence[TurnImage]) -> list[BaseMessage]:
    """`messages`, the last one (the question) followed by the images, each named: the model finds
    its text among the excerpts by that name."""
    *earlier, question = messages
    blocks = await asyncio.to_thread(lambda: [image_block(image) for image in images])
    content: list[ContentBlock] = [TextContentBlock(type="text", text=str(question.content))]
    for image, block in zip(images, blocks, strict=True):
        content += [TextContentBlock(type="text", text=f"Image sent with the question: {image.name}"), block]
    return [*earlier, HumanMessage(content_blocks=content)]


def image_block(image: TurnImage) -> ImageContentBlock:
    """The image as a standard content block, at most `MAX_SIDE` pixels on a side (blocking)."""
    data, media_type = _within_bounds(image.data, image.media_type)
    return ImageContentBlock(type="image", base64=base64.b64encode(data).decode(), mime_type=media_type)


def _within_bounds(data: bytes, media_type: str) -> tuple[bytes, str]:
    """The image as it came when it is small enough and of a type every provider takes; else scaled
    down (a JPEG decoded at a reduced scale to begin with) as a JPEG for a photo, a PNG otherwise."""
    with Image.open(io.BytesIO(data)) as opened:
        if max(opened.size) <= MAX_SIDE and media_type in SENT_AS_THEY_ARE:
            return data, media_type
        opened.thumbnail((MAX_SIDE, MAX_SIDE))
        photo = media_type == "image/jpeg"
        kept = not photo and opened.mode in ("RGB", "RGBA", "L", "LA")  # a PNG's transparency too
        out = io.BytesIO()
        (opened if kept else opened.convert("RGB")).save(out, "JPEG" if photo else "PNG")
    return out.getvalue(), "image/jpeg" if photo else "image/png"
