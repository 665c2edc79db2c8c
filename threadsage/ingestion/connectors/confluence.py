"""A Confluence Cloud space, through the REST API v2 (`/wiki/api/v2`).

v2 is the API Atlassian documents as current; the v1 content endpoints (`/wiki/rest/api/content`)
it replaces are deprecated. The space key is turned into the space's id (`/spaces?keys=`); the
space's current pages are listed with their `version.number` (`/spaces/{id}/pages`, cursor pages
followed through `_links.next`), and only pages whose version changed are fetched, in storage
format (XHTML, turned into text like any HTML), with their labels (`/pages/{id}/labels`).

A page is cited by its web URL, `_links.base` + `_links.webui`: a page renamed or moved comes back
under its new URL (the old one is pruned), a deleted page leaves the listing and is pruned.
Basic auth with `CONFLUENCE_EMAIL` and `CONFLUENCE_API_TOKEN`, sent to the configured site only
(a listing's `_links.base` on another host is not followed); a 429 waits for its Retry-After
(`http.fetch`); 401 and 403 fail the whole source with what to fix.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from threadsage.adapters.documents.loaders import Document, content_hash, parse_bytes
from threadsage.adapters.documents.sections import UnreadableDocument, clean_text
from threadsage.adapters.knowledge import KnowledgeBaseError, validate_category
from threadsage.ingestion.connectors import http
from threadsage.ingestion.connectors.base import Entry, Known, Scan
from threadsage.ingestion.spec import SourceSpec
from threadsage.settings.sections import DocumentSettings

PAGE_SIZE = 250  # the largest `limit` the v2 page and label listings accept
MAX_LISTING_BYTES = 20 * 1024 * 1024


class ConfluenceConnector:
    def __init__(self, spec: SourceSpec, settings: DocumentSettings) -> None:
        self.spec = spec
        self.site = (spec.url or "").rstrip("/")  # https://example.atlassian.net/wiki
        self.origin = http.Site(self.site)  # the credentials go nowhere else (see `http`)
        token = settings.confluence_api_token.get_secret_value() if settings.confluence_api_token else ""
        self.auth = httpx.BasicAuth(settings.confluence_email or "", token) if token else None

    async def scan(self, known: Known) -> Scan:
        if self.auth is None:
            raise PermissionError("set CONFLUENCE_EMAIL and CONFLUENCE_API_TOKEN for Confluence sources")
        scan = Scan()
        async with http.client(self.auth) as client:
            space_id = await self._space_id(client)
            listing = f"{self.site}/api/v2/spaces/{space_id}/pages?status=current&limit={PAGE_SIZE}"
            for page, base in await self._all(client, listing):
                url = base + str(page.get("_links", {}).get("webui", f"/pages/viewpage.action?pageId={page['id']}"))
                entry = {"version": str(page.get("version", {}).get("number", "")), "id": str(page["id"])}
                if known.entries.get(url, {}).get("version") == entry["version"]:
                    scan.unchanged[url] = entry
                else:
                    await self._fetch_page(client, url, entry, scan)
        return scan

    async def _space_id(self, client: httpx.AsyncClient) -> str:
        found = await self._json(client, f"{self.site}/api/v2/spaces?keys={quote(self.spec.space or '')}")
        for space in found.get("results", []):
            if space.get("key") == self.spec.space:
                return str(space["id"])
        raise http.FetchFailed(f"no space {self.spec.space!r} that CONFLUENCE_EMAIL can see at {self.site}")

    async def _all(self, client: httpx.AsyncClient, url: str) -> list[tuple[dict[str, Any], str]]:
        """Every result of a v2 listing, each with the `_links.base` its web link is relative to.
        A failure fails the whole scan, which then prunes nothing."""
        results: list[tuple[dict[str, Any], str]] = []
        following: str | None = url
        while following:
            data = await self._json(client, following, MAX_LISTING_BYTES)
            links = data.get("_links", {})
            base = str(links.get("base") or self.site).rstrip("/")
            base = base if self.origin.holds(base) else self.site  # a base on another host is not followed
            results += [(item, base) for item in data.get("results", [])]
            following = self._next(links.get("next"), base)
        return results

    async def _fetch_page(self, client: httpx.AsyncClient, url: str, entry: Entry, scan: Scan) -> None:
        api = f"{self.site}/api/v2/pages/{entry['id']}"
        try:
            page = await self._json(client, f"{api}?body-format=storage", self.spec.max_page_kb * 1024)
            labels = [str(label.get("name", "")) for label, _ in await self._all(client, f"{api}/labels")]
        except _Gone:
            scan.gone.add(url)  # deleted between the listing and now
            return
        except http.FetchFailed as exc:
            scan.failed.append((url, str(exc)))
            return
        title = str(page.get("title", ""))
        storage = page.get("body", {}).get("storage", {}).get("value", "")
        html = f"<html><head><title>{escape(title)}</title></head><body>{storage}</body></html>".encode()
        try:
            _, sections = parse_bytes(html, "page.html")
        except UnreadableDocument as exc:
            scan.failed.append((url, str(exc)))
            return
        document = Document(
            source=url,
            path=clean_text(f"{self.spec.space}/{title}"),
            title=clean_text(title),
            sections=sections,
            content_hash=content_hash(html),
            category=self._category(labels),
        )
        version = str(page.get("version", {}).get("number", entry["version"]))
        scan.documents.append((document, {**entry, "version": version}))

    def _category(self, labels: list[str]) -> str:
        """The page's first label (alphabetically) that is a valid category name, when labels
        are categories; otherwise (or with no label) the source's category."""
        if self.spec.labels_as_categories:
            for label in sorted(labels):
                try:
                    return validate_category(label)
                except KnowledgeBaseError:
                    continue
        return self.spec.category

    async def _json(self, client: httpx.AsyncClient, url: str, max_bytes: int = MAX_LISTING_BYTES) -> dict[str, Any]:
        fetched = await http.fetch(client, self.origin, url, max_bytes, {"Accept": "application/json"})
        where = urlsplit(url).path
        if fetched.status == 404:
            raise _Gone(url)
        if fetched.status == 401:
            raise PermissionError("Confluence refused CONFLUENCE_EMAIL/CONFLUENCE_API_TOKEN (HTTP 401)")
        if fetched.status == 403:
            raise PermissionError(f"CONFLUENCE_EMAIL may not read {where} (HTTP 403): ask for access to the space")
        if fetched.status != 200:
            raise http.FetchFailed(f"HTTP {fetched.status} from {where}")
        try:
            data = json.loads(fetched.body)
        except ValueError:
            raise http.FetchFailed(f"not JSON from {where}") from None
        if not isinstance(data, dict):
            raise http.FetchFailed(f"unexpected answer from {where}")
        return data

    def _next(self, following: object, base: str) -> str | None:
        """`_links.next` is relative: v2 gives it from the host (`/wiki/api/v2/...?cursor=`), as
        its `Link` header does; v1 gave it from `_links.base` (`/rest/api/...`). Both are taken."""
        if not isinstance(following, str) or not following:
            return None
        parts = urlsplit(base)
        if parts.path and following.startswith(parts.path.rstrip("/") + "/"):
            return f"{parts.scheme}://{parts.netloc}{following}"
        return base + following


class _Gone(http.FetchFailed):
    """404: the page is not there (any more)."""
