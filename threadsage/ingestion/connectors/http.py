"""HTTP for the connectors: bounded bodies, redirects followed by hand (same host, loops caught),
and 429/503 answered by waiting the `Retry-After` the server asks for (within reason)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx

from threadsage.support.backoff import Backoff
from threadsage.support.retry_after import server_wait

USER_AGENT = "threadsage-sync/1 (+https://github.com/threadsage)"
MAX_REDIRECTS = 5
MAX_RETRIES = 4
MAX_WAIT_SECONDS = 120.0
BACKOFF = Backoff(1.0, cap=MAX_WAIT_SECONDS)  # 1, 2, 4, 8 s when the server names no wait


class FetchFailed(Exception):
    """One URL could not be fetched; the message says why (reported per document)."""


@dataclass(frozen=True)
class Fetched:
    url: str  # after redirects
    status: int
    headers: httpx.Headers
    body: bytes


def client(auth: httpx.Auth | None = None, timeout: float = 20.0) -> httpx.AsyncClient:
    return httpx.AsyncClient(auth=auth, timeout=timeout, follow_redirects=False, headers={"User-Agent": USER_AGENT})


async def fetch(http: httpx.AsyncClient, url: str, max_bytes: int, headers: dict[str, str] | None = None) -> Fetched:
    """GET `url`; a body over `max_bytes` is refused once that much has arrived (the rest is not
    read). Redirects to another host, or round in a loop, fail."""
    seen = {url}
    for _ in range(MAX_REDIRECTS + 1):
        status, response_headers, body = await _get_retrying(http, url, max_bytes, headers or {})
        if status not in (301, 302, 303, 307, 308):
            return Fetched(url, status, response_headers, body)
        target = urljoin(url, response_headers.get("location", ""))
        if urlsplit(target).netloc != urlsplit(url).netloc:
            raise FetchFailed(f"redirected to another host: {target}")
        if target in seen:
            raise FetchFailed(f"redirect loop at {target}")
        seen.add(target)
        url = target
    raise FetchFailed(f"more than {MAX_REDIRECTS} redirects")


async def _get_retrying(
    http: httpx.AsyncClient, url: str, max_bytes: int, headers: dict[str, str]
) -> tuple[int, httpx.Headers, bytes]:
    for attempt in range(MAX_RETRIES + 1):
        try:
            async with http.stream("GET", url, headers=headers) as response:
                if response.status_code in (429, 503) and attempt < MAX_RETRIES:
                    wait = retry_after(response.headers.get("retry-after"), attempt)
                else:
                    return response.status_code, response.headers, await _read(response, max_bytes)
        except httpx.HTTPError as exc:
            raise FetchFailed(f"{type(exc).__name__}: {exc or 'no answer'}") from None
        await asyncio.sleep(wait)
    raise AssertionError("unreachable")  # the last attempt returns


def retry_after(value: str | None, attempt: int) -> float:
    """Seconds to wait: the server's Retry-After (seconds or a date), else a growing pause."""
    wait = server_wait(value, MAX_WAIT_SECONDS)
    return BACKOFF.delay(attempt) if wait is None else wait


async def _read(response: httpx.Response, max_bytes: int) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise FetchFailed(f"larger than {max_bytes // 1024} KB ({int(declared) // 1024} KB)")
    body = bytearray()
    async for piece in response.aiter_bytes():
        body += piece
        if len(body) > max_bytes:
            raise FetchFailed(f"larger than {max_bytes // 1024} KB")
    return bytes(body)
