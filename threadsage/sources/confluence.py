"""A Confluence Cloud space, through its REST API (`/wiki/rest/api/content`).

A listing of the space's current pages with their `version.number` (paged by `_links.next`) says
what changed; only changed pages are fetched, with their storage format (XHTML, turned into text
like any HTML) and labels. A page is cited by its web URL: a page moved elsewhere in the space
comes back under its new URL (the old one is pruned), a deleted page leaves the listing and is
pruned. Basic auth with `CONFLUENCE_EMAIL` and `CONFLUENCE_API_TOKEN`; 429 waits for Retry-After.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from threadsage.adapters.knowledge import KnowledgeBaseError, validate_category
from threadsage.adapters.loaders import Document, UnreadableDocument, clean_text, content_hash, parse_bytes
from threadsage.config import Settings
from threadsage.sources import http
from threadsage.sources.connector import Known, Scan
from threadsage.sources.spec import SourceSpec

PAGE_SIZE = 100
MAX_LISTING_BYTES = 20 * 1024 * 1024


class ConfluenceConnector:
    def __init__(self, spec: SourceSpec, settings: Settings) -> None:
        self.spec = spec
        self.site = (spec.url or "").rstrip("/")
        token = settings.confluence_api_token.get_secret_value() if settings.confluence_api_token else ""
        self.auth = httpx.BasicAuth(settings.confluence_email or "", token) if token else None

    async def scan(self, known: Known) -> Scan:
        if self.auth is None:
            raise PermissionError("set CONFLUENCE_EMAIL and CONFLUENCE_API_TOKEN for Confluence sources")
        scan = Scan()
        async with http.client(self.auth) as client:
            for page in await self._listing(client):
                url = self._web_url(page)
                version = str(page.get("version", {}).get("number", ""))
                entry = {"version": version, "id": str(page["id"])}
                if known.entries.get(url, {}).get("version") == version:
                    scan.unchanged[url] = entry
                    continue
                await self._fetch_page(client, url, entry, scan)
        return scan

    async def _listing(self, client: httpx.AsyncClient) -> list[dict[str, Any]]:
        """Every current page of the space (id, title, version, links); a failure fails the
        whole scan, which then prunes nothing."""
        query = {"spaceKey": self.spec.space, "type": "page", "status": "current", "limit": PAGE_SIZE}
        url: str | None = f"{self.site}/rest/api/content?{urlencode({**query, 'expand': 'version'})}"
        pages: list[dict[str, Any]] = []
        while url:
            data = await self._json(client, url, MAX_LISTING_BYTES)
            pages += data.get("results", [])
            url = self._next(data.get("_links", {}))
        return pages

    async def _fetch_page(self, client: httpx.AsyncClient, url: str, entry: dict[str, str], scan: Scan) -> None:
        api = f"{self.site}/rest/api/content/{entry['id']}?expand=body.storage,version,metadata.labels"
        try:
            page = await self._json(client, api, self.spec.max_page_kb * 1024)
        except _Gone:
            scan.gone.add(url)  # deleted between the listing and now
            return
        except http.FetchFailed as exc:
            scan.failed.append((url, str(exc)))
            return
        storage = page.get("body", {}).get("storage", {}).get("value", "")
        title = page.get("title", "")
        html = f"<html><head><title>{escape(title)}</title></head><body>{storage}</body></html>".encode()
        try:
            _, sections = parse_bytes(html, "page.html")
        except UnreadableDocument as exc:
            scan.failed.append((url, str(exc)))
            return
        labels = [label.get("name", "") for label in page.get("metadata", {}).get("labels", {}).get("results", [])]
        document = Document(
            source=url,
            path=clean_text(f"{self.spec.space}/{title}"),
            title=clean_text(title),
            sections=sections,
            content_hash=content_hash(html),
            category=self._category(labels),
        )
        scan.documents.append((document, {**entry, "version": str(page.get("version", {}).get("number", ""))}))

    def _category(self, labels: list[str]) -> str:
        """The page's first label that is a valid category name, when labels are categories;
        otherwise (or with no label) the source's category."""
        if self.spec.labels_as_categories:
            for label in sorted(labels):
                try:
                    return validate_category(label)
                except KnowledgeBaseError:
                    continue
        return self.spec.category

    async def _json(self, client: httpx.AsyncClient, url: str, max_bytes: int) -> dict[str, Any]:
        fetched = await http.fetch(client, url, max_bytes, {"Accept": "application/json"})
        if fetched.status == 404:
            raise _Gone(url)
        if fetched.status in (401, 403):
            raise PermissionError(f"Confluence refused CONFLUENCE_EMAIL/CONFLUENCE_API_TOKEN (HTTP {fetched.status})")
        if fetched.status != 200:
            raise http.FetchFailed(f"HTTP {fetched.status} from {urlsplit(url).path}")
        try:
            data = json.loads(fetched.body)
        except ValueError:
            raise http.FetchFailed(f"not JSON from {urlsplit(url).path}") from None
        if not isinstance(data, dict):
            raise http.FetchFailed(f"unexpected answer from {urlsplit(url).path}")
        return data

    def _next(self, links: dict[str, str]) -> str | None:
        """`_links.next` is relative to the site (`/rest/api/...`) or to the host (`/wiki/rest/...`)."""
        following = links.get("next")
        if not following:
            return None
        parts = urlsplit(self.site)
        context = links.get("context", parts.path)
        if context and following.startswith(context + "/"):
            return f"{parts.scheme}://{parts.netloc}{following}"
        return self.site + following

    def _web_url(self, page: dict[str, Any]) -> str:
        webui = page.get("_links", {}).get("webui", f"/pages/viewpage.action?pageId={page['id']}")
        return self.site + str(webui)


class _Gone(http.FetchFailed):
    """404: the page (or space) is not there."""
