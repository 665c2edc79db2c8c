"""A fake web site and a fake Confluence Cloud REST API, over real HTTP (tests/fakes/http.py).

The site serves robots.txt, a sitemap, pages with ETags (304 to a matching If-None-Match), a
redirect loop and a page of several MB. The wiki serves the Confluence Cloud REST API v2 as
Atlassian documents it (developer.atlassian.com/cloud/confluence/rest/v2): `/spaces?keys=`,
`/spaces/{id}/pages` in cursor pages (`_links.next` from the host, as in the `Link` header, and
`_links.base`), `version.number`, `_links.webui` relative to `_links.base`,
`/pages/{id}?body-format=storage` (`body.storage.value`), `/pages/{id}/labels`, errors as
`{"errors": [...]}`, Basic auth (401), a space the account may not read (403), and 429 with
Retry-After when told to."""

from __future__ import annotations

import base64
import hashlib
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes.http import JsonServer

HUGE_BYTES = 3 * 1024 * 1024


class FakeSite:
    def __init__(self, dated: bool = False, latency: float = 0.0) -> None:
        self.pages: dict[str, str] = {}  # path -> HTML
        self.modified: dict[str, str] = {}  # path -> W3C datetime of its last change
        self.edits = 0
        self.dated = dated  # the sitemap gives each page's <lastmod>
        self.latency = latency  # seconds each page takes to answer
        self.gets: Counter[str] = Counter()
        self.not_modified: Counter[str] = Counter()
        self.started: list[float] = []  # when each page request arrived
        self.in_flight = self.most_in_flight = 0
        self._lock = threading.Lock()
        self.robots = "User-agent: *\nDisallow: /private/\n"
        self.robots_status = 200
        self.sitemap_xml: str | None = None  # served as /sitemap.xml instead of the pages' sitemap
        self.server = JsonServer(self._respond)
        self.url = self.server.url

    def page(self, path: str, title: str, body: str, links: tuple[str, ...] = ()) -> None:
        anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
        self.pages[path] = (
            f"<html><head><title>{title}</title></head><body><nav>Menu: Home About Careers</nav>"
            f"<main><h1>{title}</h1><p>{body}</p>{anchors}</main><footer>© Example</footer></body></html>"
        )
        self.edits += 1  # each edit a second after the last, so that no two share a <lastmod>
        self.modified[path] = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(1_735_689_600 + self.edits))

    def sitemap(self, *paths: str) -> str:
        def dated(path: str) -> str:
            return f"<lastmod>{self.modified[path]}</lastmod>" if self.dated and path in self.modified else ""

        urls = "".join(f"<url><loc>{self.url}{p}</loc>{dated(p)}</url>" for p in paths)
        return f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'

    def _respond(self, raw_path: str, headers: dict[str, str], _body: bytes) -> tuple[int, dict[str, str], Any]:
        path = urlsplit(raw_path).path
        self.gets[path] += 1
        html = {"Content-Type": "text/html; charset=utf-8"}
        if path == "/robots.txt":
            return self.robots_status, {"Content-Type": "text/plain"}, self.robots
        if path == "/sitemap.xml":
            xml = self.sitemap_xml or self.sitemap(*sorted(self.pages), "/loop", "/huge")
            return 200, {"Content-Type": "application/xml"}, xml
        if path == "/loop":
            return 302, {"Location": "/loop-again"}, ""
        if path == "/loop-again":
            return 301, {"Location": f"{self.url}/loop"}, ""
        if path == "/huge":
            return 200, html, b"<html><body><p>" + b"x" * HUGE_BYTES + b"</p></body></html>"
        if path not in self.pages:
            return 404, html, "<html><body>not found</body></html>"
        with self._lock:
            self.started.append(time.monotonic())
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        time.sleep(self.latency)
        with self._lock:
            self.in_flight -= 1
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


class FakeConfluence:
    EMAIL, TOKEN = "bot@example.com", "api-token-1"
    SPACE_ID = "98765"
    MAX_LIMIT = 250  # v2 listings refuse more

    def __init__(self, page_size: int = 2) -> None:
        self.pages: dict[str, WikiPage] = {}
        self.page_size = page_size  # this fake pages smaller than asked, as a real site may
        self.throttle = 0  # this many next requests get 429 with Retry-After
        self.retry_after = "1"
        self.forbidden = False  # the account may not read the space: 403
        self.requests: list[str] = []
        self.server = JsonServer(self._respond)
        self.site = f"{self.server.url}/wiki"
        self.base = self.site  # the listings' `_links.base`

    def add(self, page: WikiPage) -> None:
        self.pages[page.id] = page

    def _respond(self, raw_path: str, headers: dict[str, str], _body: bytes) -> tuple[int, dict[str, str], Any]:
        self.requests.append(raw_path)
        expected = "Basic " + base64.b64encode(f"{self.EMAIL}:{self.TOKEN}".encode()).decode()
        if headers.get("Authorization") != expected:
            return _error(401, "Unauthorized")
        if self.throttle:
            self.throttle -= 1
            return 429, {"Retry-After": self.retry_after}, {"errors": [{"status": 429, "code": "TOO_MANY_REQUESTS"}]}
        path, query = urlsplit(raw_path).path, {k: v[-1] for k, v in parse_qs(urlsplit(raw_path).query).items()}
        if "limit" in query and not 1 <= int(query["limit"]) <= self.MAX_LIMIT:
            return _error(400, f"limit must be between 1 and {self.MAX_LIMIT}")
        if path == "/wiki/api/v2/spaces":
            keys = query.get("keys", "").split(",")
            found = [{"id": self.SPACE_ID, "key": "ENG", "name": "Engineering", "type": "global",
                      "status": "current", "_links": {"webui": "/spaces/ENG"}}] if "ENG" in keys else []  # fmt: skip
            return 200, {}, {"results": found, "_links": {"base": self.site}}
        if path == f"/wiki/api/v2/spaces/{self.SPACE_ID}/pages":
            return self._listing(path, query)
        if self.forbidden and path.startswith("/wiki/api/v2/"):
            return _error(403, "Forbidden")
        page = self.pages.get(path.split("/")[5] if path.startswith("/wiki/api/v2/pages/") else "")
        if page is None:
            return _error(404, "Not Found")
        if path.endswith("/labels"):
            labels = [{"id": str(1000 + i), "name": n, "prefix": "global"} for i, n in enumerate(page.labels)]
            return 200, {}, {"results": labels, "_links": {"base": self.site}}
        single = self._bulk(page)
        single["_links"]["base"] = self.site
        if query.get("body-format") == "storage":
            single["body"] = {"storage": {"representation": "storage", "value": page.body}}
        return 200, {}, single

    def _listing(self, path: str, query: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        """Cursor paging: the cursor is opaque to the client (here the last id sent, encoded)."""
        if self.forbidden:
            return _error(403, "Forbidden")
        if query.get("status", "current") != "current":
            return _error(400, "this fake lists current pages only")
        after = base64.urlsafe_b64decode(query["cursor"]).decode() if "cursor" in query else ""
        limit = min(int(query.get("limit", "25")), self.page_size)
        ordered = sorted((p for p in self.pages.values() if p.id > after), key=lambda p: p.id)
        window = ordered[:limit]
        links = {"base": self.base}
        extra: dict[str, str] = {}
        if len(ordered) > limit:
            cursor = base64.urlsafe_b64encode(window[-1].id.encode()).decode()
            links["next"] = f"{path}?status=current&limit={query.get('limit', '25')}&cursor={cursor}"
            extra["Link"] = f'<{links["next"]}>; rel="next", <{self.site}>; rel="base"'
        return 200, extra, {"results": [self._bulk(p) for p in window], "_links": links}

    def _bulk(self, page: WikiPage) -> dict[str, Any]:
        slug = page.title.replace(" ", "+")
        return {
            "id": page.id,
            "status": "current",
            "title": page.title,
            "spaceId": self.SPACE_ID,
            "parentType": "page",
            "version": {"number": page.version, "createdAt": "2025-01-01T00:00:00.000Z", "minorEdit": False},
            "_links": {
                "webui": f"/spaces/ENG/pages/{page.id}/{slug}",
                "editui": f"/pages/resumedraft.action?draftId={page.id}",
                "tinyui": f"/x/{page.id}",
            },
        }


def _error(status: int, title: str) -> tuple[int, dict[str, str], Any]:
    return status, {}, {"errors": [{"status": status, "code": title.upper().replace(" ", "_"), "title": title}]}
