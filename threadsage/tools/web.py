"""Web search, for questions the organisation's documents don't cover: Tavily or SearXNG.

Both are spoken to over their documented JSON APIs with httpx (no SDK): Tavily's
`POST /search` with a bearer key, SearXNG's `GET /search?format=json` (the instance must allow the
JSON format). What the web says is kept apart from the documents: a `WebResult` is never a
`Passage`, so it can never become a document citation.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

log = logging.getLogger(__name__)

SNIPPET_CHARS = 500


@dataclass(frozen=True)
class WebResult:
    title: str
    url: str
    content: str


class WebSearch(Protocol):
    @property
    def name(self) -> str:
        """The service, as the trace names it."""

    async def search(self, query: str) -> list[WebResult]:
        """The best results for `query`; [] when there are none or the service failed."""


@dataclass(frozen=True)
class Tavily:
    api_key: str
    url: str = "https://api.tavily.com"
    max_results: int = 5
    timeout: float = 10.0
    name: str = "Tavily"

    async def search(self, query: str) -> list[WebResult]:
        body = {"query": query, "max_results": self.max_results, "search_depth": "basic"}
        headers = {"Authorization": f"Bearer {self.api_key}"}
        payload = await _fetch("POST", f"{self.url.rstrip('/')}/search", self.timeout, json=body, headers=headers)
        return _results(payload, self.max_results)


@dataclass(frozen=True)
class SearXNG:
    url: str
    max_results: int = 5
    timeout: float = 10.0
    name: str = "SearXNG"

    async def search(self, query: str) -> list[WebResult]:
        params = {"q": query, "format": "json"}
        payload = await _fetch("GET", f"{self.url.rstrip('/')}/search", self.timeout, params=params)
        return _results(payload, self.max_results)


async def _fetch(method: str, url: str, timeout: float, **request: Any) -> Any:
    """The JSON body of a successful response; None (logged) for any failure: a web search that
    fails leaves the answer to the documents, it never ends the turn."""
    try:
        async with httpx.AsyncClient(timeout=timeout) as client:
            response = await client.request(method, url, **request)
        response.raise_for_status()
        return response.json()
    except (httpx.HTTPError, ValueError) as exc:
        log.warning("web search failed: %s", exc.__class__.__name__)
        return None


def _results(payload: Any, limit: int) -> list[WebResult]:
    """Both services answer {"results": [{"title", "url", "content", …}]}; malformed entries are skipped."""
    items = payload.get("results") if isinstance(payload, dict) else None
    out: list[WebResult] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        url, title = str(item.get("url") or ""), " ".join(str(item.get("title") or "").split())
        content = " ".join(str(item.get("content") or "").split())[:SNIPPET_CHARS]
        if url.startswith(("http://", "https://")) and (title or content):
            out.append(WebResult(title=title or url, url=url, content=content))
    return out[:limit]
