"""HTTP for the connectors: bounded bodies, redirects followed by hand (loops caught), and 429/503
answered by waiting the `Retry-After` the server asks for (within reason).

Every URL a source fetches — the first, each redirect, whatever a sitemap or a listing names — is
held to the configured `Site`: its scheme and host (and port), and an address the host resolves
to that is not internal (loopback, private, link-local — cloud metadata lives there — shared or
reserved) unless the configured site itself is on one (an intranet wiki). A refusal is one short
line that names neither the URL nor what the server said: a hostile sitemap must not be able to
make the bot fetch, nor write into its log and console, what it likes."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass, field
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


@dataclass
class Site:
    """Where a source may fetch: the configured URL's scheme and host."""

    url: str
    internal: bool | None = None  # whether the site itself is on an internal address (None: resolve it)
    scheme: str = field(init=False)
    netloc: str = field(init=False)

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        self.scheme, self.netloc = parts.scheme.lower(), parts.netloc.lower()

    def holds(self, url: str) -> bool:
        parts = urlsplit(url)
        return parts.scheme.lower() == self.scheme and parts.netloc.lower() == self.netloc

    async def check(self, url: str) -> None:
        """`FetchFailed` unless `url` is on the site and resolves where the site may reach."""
        if not self.holds(url):
            raise FetchFailed("refused: a URL outside the configured site")
        if self.internal is None:
            self.internal = any(_internal(a) for a in await _addresses(self.url))
        if not self.internal and any(_internal(a) for a in await _addresses(url)):
            raise FetchFailed("refused: the site's host resolves to an internal address")


async def _addresses(url: str) -> list[str]:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(parts.hostname or "", port, type=socket.SOCK_STREAM)
    except OSError:
        raise FetchFailed("the site's host name does not resolve") from None
    return [str(info[4][0]) for info in infos]


def _internal(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not ip.is_global


def client(auth: httpx.Auth | None = None, timeout: float = 20.0) -> httpx.AsyncClient:
    return httpx.AsyncClient(auth=auth, timeout=timeout, follow_redirects=False, headers={"User-Agent": USER_AGENT})


async def fetch(
    http: httpx.AsyncClient, site: Site, url: str, max_bytes: int, headers: dict[str, str] | None = None
) -> Fetched:
    """GET `url`, on `site` (see the module); a body over `max_bytes` is refused once that much
    has arrived (the rest is not read). Redirects off the site, or round in a loop, fail."""
    seen = {url}
    for _ in range(MAX_REDIRECTS + 1):
        await site.check(url)
        status, response_headers, body = await _get_retrying(http, url, max_bytes, headers or {})
        if status not in (301, 302, 303, 307, 308):
            return Fetched(url, status, response_headers, body)
        target = urljoin(url, response_headers.get("location", ""))
        if not site.holds(target):
            raise FetchFailed("refused: redirected off the configured site")
        if target in seen:
            raise FetchFailed("redirect loop")
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
