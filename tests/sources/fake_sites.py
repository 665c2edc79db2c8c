"""A fake web site and a fake Confluence Cloud REST API, over real HTTP (tests/fakes/http.py).

The site serves robots.txt, a sitemap, pages with ETags (304 to a matching If-None-Match), a
redirect loop and a page of several MB. The wiki serves `/wiki/rest/api/content` as Confluence
Cloud documents it: `results`, `_links.next` relative to the site, `version.number`,
`_links.webui`, `body.storage.value`, `metadata.labels.results[].name`, Basic auth, and 429 with
Retry-After when told to."""

from __future__ import annotations

import base64
import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes.http import JsonServer

HUGE_BYTES = 3 * 1024 * 1024


class FakeSite:
    def __init__(self) -> None:
        self.pages: dict[str, str] = {}  # path -> HTML
        self.gets: Counter[str] = Counter()
        self.not_modified: Counter[str] = Counter()
        self.robots = "User-agent: *\nDisallow: /private/\n"
        self.server = JsonServer(self._respond)
        self.url = self.server.url

    def page(self, path: str, title: str, body: str, links: tuple[str, ...] = ()) -> None:
        anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
        self.pages[path] = (
            f"<html><head><title>{title}</title></head><body><nav>Menu: Home About Careers</nav>"
            f"<main><h1>{title}</h1><p>{body}</p>{anchors}</main><footer>© Example</footer></body></html>"
        )

    def sitemap(self, *paths: str) -> str:
        urls = "".join(f"<url><loc>{self.url}{p}</loc></url>" for p in paths)
        return f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'

    def _respond(self, raw_path: str, headers: dict[str, str], _body: bytes) -> tuple[int, dict[str, str], Any]:
        path = urlsplit(raw_path).path
        self.gets[path] += 1
        html = {"Content-Type": "text/html; charset=utf-8"}
        if path == "/robots.txt":
            return 200, {"Content-Type": "text/plain"}, self.robots
        if path == "/sitemap.xml":
            return 200, {"Content-Type": "application/xml"}, self.sitemap(*sorted(self.pages), "/loop", "/huge")
        if path == "/loop":
            return 302, {"Location": "/loop-again"}, ""
        if path == "/loop-again":
            return 301, {"Location": f"{self.url}/loop"}, ""
        if path == "/huge":
            return 200, html, b"<html><body><p>" + b"x" * HUGE_BYTES + b"</p></body></html>"
        if path not in self.pages:
            return 404, html, "<html><body>not found</body></html>"
        etag = '"' + hashlib.sha1(self.pages[path].encode()).hexdigest()[:16] + '"'
        if headers.get("If-None-Match") == etag:
            self.not_modified[path] += 1
            return 304, {"ETag": etag}, b""
        return 200, {**html, "ETag": etag}, self.pages[path]


@dataclass
class WikiPage:
    id: str
    title: str
    body: str
    version: int = 1
    labels: list[str] = field(default_factory=list)
    parent: str = "Home"


class FakeConfluence:
    EMAIL, TOKEN = "bot@example.com", "api-token-1"

    def __init__(self, page_size: int = 2) -> None:
        self.pages: dict[str, WikiPage] = {}
        self.page_size = page_size
        self.throttle = 0  # this many next requests get 429 with Retry-After
        self.retry_after = "1"
        self.requests: list[str] = []
        self.server = JsonServer(self._respond)
        self.site = f"{self.server.url}/wiki"

    def add(self, page: WikiPage) -> None:
        self.pages[page.id] = page

    def _respond(self, raw_path: str, headers: dict[str, str], _body: bytes) -> tuple[int, dict[str, str], Any]:
        self.requests.append(raw_path)
        expected = "Basic " + base64.b64encode(f"{self.EMAIL}:{self.TOKEN}".encode()).decode()
        if headers.get("Authorization") != expected:
            return 401, {}, {"message": "Unauthorized"}
        if self.throttle:
            self.throttle -= 1
            return 429, {"Retry-After": self.retry_after}, {"message": "Rate limited"}
        parts, query = urlsplit(raw_path), parse_qs(urlsplit(raw_path).query)
        if parts.path == "/wiki/rest/api/content":
            start = int(query.get("start", ["0"])[0])
            limit = min(int(query.get("limit", ["25"])[0]), self.page_size)
            ordered = sorted(self.pages.values(), key=lambda p: p.id)
            window = ordered[start : start + limit]
            links: dict[str, str] = {"base": self.site, "context": "/wiki"}
            if start + limit < len(ordered):
                space = query["spaceKey"][0]
                links["next"] = f"/rest/api/content?spaceKey={space}&type=page&limit={limit}&start={start + limit}"
            return 200, {}, {"results": [self._listed(p) for p in window], "start": start, "limit": limit,
                             "size": len(window), "_links": links}  # fmt: skip
        page_id = parts.path.rsplit("/", 1)[-1]
        if parts.path.startswith("/wiki/rest/api/content/") and page_id in self.pages:
            page = self.pages[page_id]
            return (
                200,
                {},
                {
                    **self._listed(page),
                    "body": {"storage": {"value": page.body, "representation": "storage"}},
                    "metadata": {"labels": {"results": [{"prefix": "global", "name": n} for n in page.labels]}},
                },
            )
        return 404, {}, {"statusCode": 404, "message": "No content found"}

    def _listed(self, page: WikiPage) -> dict[str, Any]:
        slug = page.title.replace(" ", "+")
        return {
            "id": page.id,
            "type": "page",
            "status": "current",
            "title": page.title,
            "version": {"number": page.version},
            "_links": {
                "webui": f"/spaces/ENG/pages/{page.id}/{slug}",
                "self": f"{self.site}/rest/api/content/{page.id}",
            },
        }
