"""Fake web search services over real HTTP, as their documentation describes them.

- Tavily: `POST /search`, `Authorization: Bearer tvly-…`, a JSON body with `query` and
  `max_results`; answers `{"query", "results": [{"title", "url", "content", "score"}], …}`, and 401
  without a valid key.
- SearXNG: `GET /search?q=…&format=json`; answers `{"query", "number_of_results", "results": [{"url",
  "title", "content", "engine", …}], …}`, and 403 when the format is not `json` (an instance whose
  settings do not enable it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes.http import ServedFake

PAGES = [
    {"title": "World Cup 1998 final", "url": "https://example.org/wc1998", "content": "France won the 1998 World Cup."},
    {"title": "Football history", "url": "https://example.org/history", "content": "The 1998 final was in Paris."},
]


@dataclass
class FakeWebSearch(ServedFake):
    key: str = "tvly-test"
    pages: list[dict[str, Any]] = field(default_factory=lambda: list(PAGES))
    status: int = 200
    requests: list[dict[str, Any]] = field(default_factory=list)

    def _respond(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, str], Any]:
        parts = urlsplit(path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        body = json.loads(raw) if raw else None
        self.requests.append({"path": parts.path, "query": query, "body": body, "headers": headers})
        if self.status != 200:
            return self.status, {}, {"detail": {"error": "unavailable"}}
        if parts.path != "/search":
            return 404, {}, {"detail": "not found"}
        if body is not None:  # Tavily
            if headers.get("Authorization") != f"Bearer {self.key}":
                return 401, {}, {"detail": {"error": "Unauthorized: missing or invalid API key."}}
            results = [{**p, "score": 0.9} for p in self.pages][: body.get("max_results", 5)]
            return 200, {}, {"query": body["query"], "answer": None, "results": results, "response_time": 0.1}
        if query.get("format") != "json":  # SearXNG
            return 403, {}, "Forbidden"
        results = [{**p, "engine": "fake", "engines": ["fake"], "score": 1.0} for p in self.pages]
        return 200, {}, {"query": query.get("q", ""), "number_of_results": len(results), "results": results}
