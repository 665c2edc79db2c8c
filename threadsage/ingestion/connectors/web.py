"""A web site: its pages from a sitemap, or crawled from a start page (same host, depth and
count limits), as robots.txt allows. A page the sitemap dates (`<lastmod>`) as when it was last
read is not asked for at all; any other is asked for with a conditional GET (its last ETag /
Last-Modified), `concurrency` at a time — one at a time, `Crawl-delay` apart, when robots.txt
asks for a delay — and a 304 is not re-read. A page's main content (`html_pages`) is indexed and
cited by its URL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.robotparser import RobotFileParser
from xml.etree import ElementTree

import httpx
from bs4 import BeautifulSoup

from threadsage.adapters.documents.html_pages import parse_html_soup
from threadsage.adapters.documents.loaders import Document, content_hash
from threadsage.adapters.documents.sections import UnreadableDocument, clean_text
from threadsage.ingestion.connectors import http
from threadsage.ingestion.connectors.base import Entry, Known, Scan
from threadsage.ingestion.spec import SourceSpec

MAX_SITEMAPS = 50
MAX_CRAWL_DELAY = 30.0  # a robots.txt asking for more is answered with this
_HTML_TYPES = ("text/html", "application/xhtml+xml")


class WebConnector:
    def __init__(self, spec: SourceSpec) -> None:
        self.spec = spec
        self.start = spec.url or ""
        self.site = http.Site(self.start)  # nothing off it is fetched (see `http`)
        self.max_bytes = spec.max_page_kb * 1024

    async def scan(self, known: Known) -> Scan:
        scan = Scan()
        self.site = http.Site(self.start)  # resolved afresh each scan
        async with http.client() as client:
            robots = await self._robots(client)
            delay = min(MAX_CRAWL_DELAY, float(robots.crawl_delay(http.USER_AGENT) or 0))
            polite = _Polite(self.spec.concurrency, delay)  # this scan's pace, as robots.txt asks
            if self._is_sitemap(self.start):
                listed = [(u, m) for u, m in await self._sitemap(client, self.start) if self._allowed(robots, u)]
                lastmods = dict(listed[: self.spec.max_pages])
                for url, lastmod in lastmods.items():
                    entry = known.entries.get(url, {})
                    if self.spec.trust_lastmod and lastmod and entry.get("lastmod") == lastmod:
                        scan.unchanged[url] = entry  # dated by the sitemap as when last read
                stale = [url for url in lastmods if url not in scan.unchanged]
                await self._fetch_all(client, polite, stale, known, scan, lastmods)
            else:
                await self._crawl(client, polite, robots, known, scan)
        return scan

    # --- discovery -------------------------------------------------------------------------

    async def _crawl(
        self, client: httpx.AsyncClient, polite: _Polite, robots: RobotFileParser, known: Known, scan: Scan
    ) -> None:
        """Breadth first from the start page; an unchanged page's links are those it had."""
        seen: set[str] = set()
        level = [_normal(self.start)]
        for depth in range(self.spec.max_depth + 1):
            room = self.spec.max_pages - len(seen)
            level = [u for u in dict.fromkeys(level) if u not in seen and self._allowed(robots, u)][:room]
            if not level:
                return
            seen.update(level)
            links = await self._fetch_all(client, polite, level, known, scan, {})
            level = links if depth < self.spec.max_depth else []

    async def _sitemap(self, client: httpx.AsyncClient, url: str, depth: int = 0) -> list[tuple[str, str]]:
        """The page URLs of a sitemap with their `<lastmod>` ("" if none), following a sitemap
        index (a failed one fails the scan, which then prunes nothing)."""
        fetched = await http.fetch(client, self.site, url, 50 * 1024 * 1024)
        if fetched.status != 200:
            raise http.FetchFailed(f"a sitemap answered HTTP {fetched.status}")
        try:
            root = ElementTree.fromstring(fetched.body)
        except ElementTree.ParseError:
            raise http.FetchFailed("a sitemap is not XML") from None
        if root.tag.endswith("sitemapindex") and depth < 2:
            pages: list[tuple[str, str]] = []
            for nested, _ in [e for e in _entries(root) if self.site.holds(e[0])][:MAX_SITEMAPS]:
                pages += await self._sitemap(client, nested, depth + 1)
            return pages
        return [(_normal(u), lastmod) for u, lastmod in _entries(root) if self.site.holds(u)]

    async def _robots(self, client: httpx.AsyncClient) -> RobotFileParser:
        """The site's robots.txt as RFC 9309 reads it: 4xx (none there) allows everything; 5xx,
        429 or no answer at all disallows everything for now — the sync fails, nothing is pruned,
        and the next one asks again."""
        robots = RobotFileParser()
        try:
            fetched = await http.fetch(
                client, self.site, f"{self.site.scheme}://{self.site.netloc}/robots.txt", 512 * 1024
            )
        except http.FetchFailed as exc:
            raise http.FetchFailed(f"robots.txt unreachable ({exc}): trying again at the next sync") from None
        if fetched.status == 200:
            robots.parse(fetched.body.decode("utf-8", errors="replace").splitlines())
        elif 400 <= fetched.status < 500 and fetched.status != 429:
            robots.parse([])  # none: everything is allowed
        else:
            raise http.FetchFailed(f"robots.txt answered HTTP {fetched.status}: trying again at the next sync")
        return robots

    def _allowed(self, robots: RobotFileParser, url: str) -> bool:
        return self.site.holds(url) and robots.can_fetch(http.USER_AGENT, url)

    @staticmethod
    def _is_sitemap(url: str) -> bool:
        return urlsplit(url).path.endswith(".xml")

    # --- pages -----------------------------------------------------------------------------

    async def _fetch_all(
        self,
        client: httpx.AsyncClient,
        polite: _Polite,
        urls: list[str],
        known: Known,
        scan: Scan,
        lastmods: dict[str, str],
    ) -> list[str]:
        """Fetch `urls` (as politely as the site asks) into `scan`; the links found on them (or
        remembered)."""
        links: list[str] = []

        async def one(url: str) -> None:
            async with polite.turn():
                entry = known.entries.get(url, {})
                links.extend(await self._page(client, url, entry, lastmods.get(url, ""), scan))

        await asyncio.gather(*(one(u) for u in urls))
        return links

    async def _page(self, client: httpx.AsyncClient, url: str, entry: Entry, lastmod: str, scan: Scan) -> list[str]:
        conditions = {}
        if entry.get("etag"):
            conditions["If-None-Match"] = entry["etag"]
        if entry.get("modified"):
            conditions["If-Modified-Since"] = entry["modified"]
        try:
            fetched = await http.fetch(client, self.site, url, self.max_bytes, conditions)
        except http.FetchFailed as exc:
            scan.failed.append((url, str(exc)))
            return []
        if fetched.status == 304 and entry:
            scan.unchanged[url] = {**entry, "lastmod": lastmod}
            return list(entry.get("links", []))
        if fetched.status in (404, 410):
            scan.gone.add(url)
            return []
        if fetched.status != 200:
            scan.failed.append((url, f"HTTP {fetched.status}"))
            return []
        if not fetched.headers.get("content-type", "text/html").startswith(_HTML_TYPES):
            return []  # a PDF or an image linked from a page is not a page
        soup = BeautifulSoup(fetched.body, "html.parser")  # links read before navigation is dropped
        hrefs = [a["href"] for a in soup.find_all("a", href=True)]
        links = [_normal(urljoin(fetched.url, h)) for h in hrefs if isinstance(h, str)]
        links = [link for link in links if self.site.holds(link)]
        etag, modified = fetched.headers.get("etag", ""), fetched.headers.get("last-modified", "")
        new_entry = {
            "version": etag or modified or content_hash(fetched.body),
            "etag": etag,
            "modified": modified,
            "lastmod": lastmod,
            "links": links,
        }
        try:
            scan.documents.append((self._document(url, soup, fetched.body), new_entry))
        except UnreadableDocument as exc:
            scan.failed.append((url, str(exc)))
        return links

    def _document(self, url: str, soup: BeautifulSoup, body: bytes) -> Document:
        name = urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1] or urlsplit(url).netloc
        title, sections = parse_html_soup(soup, name)
        return Document(
            source=url,
            path=clean_text(urlsplit(url).path or "/"),
            title=title,
            sections=sections,
            content_hash=content_hash(body),
            category=self.spec.category,
        )


class _Polite:
    """At most `concurrency` requests to the site at once; one at a time, `delay` seconds apart,
    when robots.txt asks for a Crawl-delay."""

    def __init__(self, concurrency: int, delay: float) -> None:
        self.gate = asyncio.Semaphore(1 if delay else concurrency)
        self.delay = delay
        self.last = float("-inf")

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        async with self.gate:
            if self.delay:
                await asyncio.sleep(max(0.0, self.last + self.delay - asyncio.get_running_loop().time()))
            try:
                yield
            finally:
                self.last = asyncio.get_running_loop().time()


def _entries(root: ElementTree.Element) -> list[tuple[str, str]]:
    """(`<loc>`, `<lastmod>`) of each `<url>` or `<sitemap>` of a sitemap (namespaces ignored)."""
    found = []
    for item in root:
        values = {child.tag.rsplit("}", 1)[-1]: (child.text or "").strip() for child in item}
        if values.get("loc"):
            found.append((values["loc"], values.get("lastmod", "")))
    return found


def _normal(url: str) -> str:
    """A page's URL without its fragment (#section is the same page)."""
    return urldefrag(url.strip())[0]
