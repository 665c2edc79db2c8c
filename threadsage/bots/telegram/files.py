"""Documents and photos sent to the Telegram bot with a question: a document or photo with a
caption, or a question sent as a reply to one. Fetched with `getFile` and the file URL for the
chat service, which reads them as context for that conversation only (a photo or an image
document by OCR). Of the sizes Telegram keeps of a photo, the largest within the size limit.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path

import httpx
from telegram import Document, File, Message, PhotoSize
from telegram.error import BadRequest, TelegramError

from threadsage.adapters.documents.attachments import MB, Attachment, not_fetched, readable_as, too_big, unsupported

log = logging.getLogger(__name__)

BOT_API_DOWNLOAD_LIMIT = 20 * MB  # getFile refuses bigger files ("file is too big")
DOWNLOAD_TIMEOUT = 60.0


@dataclass(frozen=True)
class Sent:
    """A document or photo sent with a message: what it is called and what it is."""

    name: str
    media_type: str
    size: int
    medium: Document | PhotoSize


class TelegramFiles:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = min(max_bytes, BOT_API_DOWNLOAD_LIMIT)

    def file_of(self, message: Message) -> Sent | None:
        """The document or photo of the message, or of the message it replies to."""
        for sent in (message, message.reply_to_message):
            if sent is not None and (document := sent.document) is not None:
                name = document.file_name or f"document-{document.file_unique_id}"
                return Sent(name, document.mime_type or "", document.file_size or 0, document)
            if sent is not None and sent.photo:  # Telegram keeps photos as JPEG, in several sizes
                fitting = [p for p in sent.photo if (p.file_size or 0) <= self.max_bytes] or [sent.photo[0]]
                photo = max(fitting, key=lambda p: p.width * p.height)
                return Sent(f"photo-{photo.file_unique_id}.jpg", "image/jpeg", photo.file_size or 0, photo)
        return None

    async def fetch(self, message: Message) -> tuple[Attachment, ...]:
        """The document or photo of the message, or of the message it replies to; none if neither
        has one."""
        sent = self.file_of(message)
        if sent is None:
            return ()
        name, media_type = sent.name, sent.media_type
        if readable_as(name, media_type) is None:
            return (Attachment(name, b"", media_type, problem=unsupported(name)),)
        if sent.size > self.max_bytes:
            return (Attachment(name, b"", media_type, problem=too_big(name, sent.size, self.max_bytes)),)
        try:
            file = await sent.medium.get_file()
            content = await self._download(file)
        except (httpx.HTTPError, OSError) as exc:
            log.warning("downloading a file failed: %s", type(exc).__name__)  # its URL holds the token
            return (Attachment(name, b"", media_type, problem=not_fetched(name)),)
        except TelegramError as exc:
            log.warning("downloading a file failed: %s", exc)
            refused = isinstance(exc, BadRequest) and "too big" in exc.message  # when no size was given
            problem = too_big(name, BOT_API_DOWNLOAD_LIMIT + 1, self.max_bytes) if refused else not_fetched(name)
            return (Attachment(name, b"", media_type, problem=problem),)
        if len(content) > self.max_bytes:
            return (Attachment(name, b"", media_type, problem=too_big(name, len(content), self.max_bytes)),)
        return (Attachment(name, content, media_type),)

    async def _download(self, file: File) -> bytes:
        """The file's bytes, at most one piece past the limit (which the caller refuses): counted
        while they arrive, whatever size the message declared — a self-hosted Bot API server
        lets bots download files of any size."""
        if not (file.file_path or "").startswith(("https://", "http://")):  # a local Bot API server's path
            return await asyncio.to_thread(_head, Path(file.file_path or ""), self.max_bytes + 1)
        content = bytearray()
        async with (
            httpx.AsyncClient(timeout=DOWNLOAD_TIMEOUT) as client,
            client.stream("GET", str(file.file_path)) as response,
        ):
            response.raise_for_status()
            async for piece in response.aiter_bytes():
                content += piece
                if len(content) > self.max_bytes:
                    break
        return bytes(content)


def _head(path: Path, size: int) -> bytes:
    with path.open("rb") as file:
        return file.read(size)
