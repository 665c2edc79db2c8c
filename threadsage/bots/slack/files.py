"""Files shared with a question in Slack: fetched with the bot token (`files:read`) for the chat
service, which reads them as context for that conversation only.

A `file_share` message lists its files; a file whose details are left out (`file_access:
check_file_info`) is looked up with `files.info`. Each is checked against the size limit by its
`size` before anything is downloaded, then downloaded from `url_private_download` with the token
as a bearer token, through the bot's one HTTP session. The token goes to Slack's file host only.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from threadsage.adapters.documents.attachments import (
    MAX_IMAGES,
    Attachment,
    not_fetched,
    readable_as,
    too_big,
    unsupported,
)
from threadsage.adapters.documents.images import is_image

log = logging.getLogger(__name__)

FILE_HOST = "files.slack.com"
MAX_FILES = 10  # Slack's own limit per message
DOWNLOAD_TIMEOUT = aiohttp.ClientTimeout(total=60)


class SlackFiles:
    def __init__(
        self, client: AsyncWebClient, session: aiohttp.ClientSession, token: str, max_bytes: int, api_url: str | None
    ) -> None:
        self.client = client
        self.session = session
        self.max_bytes = max_bytes
        self._token = token
        # The origins the token may go to: Slack's file host, and the Web API's when SLACK_API_URL
        # names another (a proxy, or a test's fake Slack serving files beside its API).
        self._origins = {("https", FILE_HOST)} | ({urlsplit(api_url)[:2]} if api_url else set())

    async def fetch(self, event: dict[str, Any]) -> tuple[Attachment, ...]:
        """The files of a message, each downloaded or carrying why it was not (images too: their
        text is read by OCR). Images past `MAX_IMAGES` are not downloaded: they are refused unread
        (`AttachmentReader`), so their bytes would only cost the download."""
        files = [f for f in event.get("files") or [] if isinstance(f, dict)][:MAX_FILES]
        fetched: list[Attachment] = []
        images = 0
        for file in files:
            name, media_type = _name(file), str(file.get("mimetype") or "")
            images += (parse_as := readable_as(name, media_type)) is not None and is_image(parse_as)
            past_cap = images > MAX_IMAGES and parse_as is not None and is_image(parse_as)
            fetched.append(Attachment(name, b"", media_type) if past_cap else await self._fetch(file))
        return tuple(fetched)

    async def _fetch(self, file: dict[str, Any]) -> Attachment:
        if file.get("file_access") == "check_file_info" or not file.get("url_private_download"):
            file = await self._info(file)
        name = _name(file)
        media_type = str(file.get("mimetype") or "")
        size = int(file.get("size") or 0)
        if readable_as(name, media_type) is None:
            return Attachment(name, b"", media_type, problem=unsupported(name))
        if size > self.max_bytes:
            return Attachment(name, b"", media_type, problem=too_big(name, size, self.max_bytes))
        url = str(file.get("url_private_download") or "")
        content = await self._download(url, media_type) if self._trusted(url) else None
        if content is None:
            return Attachment(name, b"", media_type, problem=not_fetched(name))
        if len(content) > self.max_bytes:
            return Attachment(name, b"", media_type, problem=too_big(name, len(content), self.max_bytes))
        return Attachment(name, content, media_type)

    async def _info(self, file: dict[str, Any]) -> dict[str, Any]:
        """The file's full details, or what the event said if Slack will not give them."""
        try:
            response = await self.client.files_info(file=str(file.get("id", "")))
        except SlackApiError as exc:
            log.warning("files.info failed for a shared file: %s", exc.response.get("error"))
            return file
        return {**file, **response.get("file", {})}

    async def _download(self, url: str, media_type: str) -> bytes | None:
        """The file's bytes (at most one more than the limit, which the caller refuses), or None.
        Slack answers a download without a valid token with its sign-in page: HTML, status 200."""
        headers = {"Authorization": f"Bearer {self._token}"}
        try:
            async with self.session.get(url, headers=headers, timeout=DOWNLOAD_TIMEOUT) as response:
                served = response.headers.get("Content-Type", "").split(";")[0].strip()
                if response.status != 200 or (served == "text/html" and not media_type.startswith("text/html")):
                    log.warning("downloading a shared file failed: HTTP %s, %s", response.status, served or "no type")
                    return None
                content = bytearray()
                async for piece in response.content.iter_chunked(64 * 1024):
                    content += piece
                    if len(content) > self.max_bytes:
                        break
                return bytes(content)
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning("downloading a shared file failed: %s", exc.__class__.__name__)
            return None

    def _trusted(self, url: str) -> bool:
        return urlsplit(url)[:2] in self._origins


def _name(file: dict[str, Any]) -> str:
    return str(file.get("name") or file.get("title") or file.get("id") or "file")
