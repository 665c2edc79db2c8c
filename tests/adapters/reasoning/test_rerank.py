"""Rerankers against fake `/rerank` servers over real HTTP, in the two documented shapes:
Cohere / Jina (`{model, query, documents, top_n}` → `{results: [{index, relevance_score}]}`) and
text-embeddings-inference (`{query, texts}` → `[{index, score}]`). A failing endpoint keeps the
fused order."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from tests.fakes.http import JsonServer
from threadsage.adapters.reasoner import Passage
from threadsage.adapters.reasoning.rerank import (
    EndpointReranker,
    LexicalReranker,
    RerankUnavailable,
    complete_order,
    make_reranker,
    rerank,
)
from threadsage.settings.environment import Settings

QUERY = "how many days of leave do contractors get"


def passage(n: int, text: str, title: str = "", heading: str = "") -> Passage:
    return Passage(id=f"p{n}", path=f"doc{n}.md", source="", title=title, heading=heading, text=text, score=0.0)


FUSED = [
    passage(0, "Employees get 25 days of annual leave."),
    passage(1, "The office opens at 9."),
    passage(2, "Contractors get 10 days of leave a year.", title="Leave for contractors"),
]


class FakeRerankServer:
    """Scores a document by how many query words it contains; records every request."""

    def __init__(self, shape: str, delay: float = 0.0, status: int = 200, raw: str | None = None) -> None:
        self.requests: list[tuple[dict[str, str], dict]] = []
        self.shape, self._delay, self._status, self._raw = shape, delay, status, raw
        self._server = JsonServer(self._respond)
        self.url = f"{self._server.url}/rerank"

    def _respond(self, path: str, headers: dict[str, str], raw: bytes):
        body = json.loads(raw)
        self.requests.append((headers, body))
        time.sleep(self._delay)
        if self._raw is not None:
            return self._status, {}, self._raw
        words = set(body["query"].lower().split())
        texts = body["texts"] if self.shape == "tei" else body["documents"]
        scores = [len(words & set(t.lower().split())) for t in texts]
        if self.shape == "tei":  # a bare list, best first
            ranked = sorted(range(len(texts)), key=lambda i: -scores[i])
            return self._status, {}, [{"index": i, "score": float(scores[i])} for i in ranked]
        rows = [{"index": i, "relevance_score": scores[i] / 10} for i in range(len(texts))]  # in input order
        return self._status, {}, {"id": "r1", "results": rows, "meta": {"billed_units": {"search_units": 1}}}

    def stop(self) -> None:
        self._server.stop()


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[FakeRerankServer]:
    fake = FakeRerankServer(*request.param)
    yield fake
    fake.stop()


@pytest.mark.parametrize("server", [("cohere",)], indirect=True)
async def test_a_cohere_shaped_endpoint_reorders_and_gets_model_key_and_top_n(server: FakeRerankServer) -> None:
    reranker = EndpointReranker(server.url, "cohere", model="rerank-v3.5", api_key="k-123")
    ordered, note = await rerank(reranker, QUERY, FUSED)
    assert [p["id"] for p in ordered] == ["p2", "p0", "p1"]
    headers, body = server.requests[0]
    assert headers["Authorization"] == "Bearer k-123"
    assert (body["model"], body["query"], body["top_n"]) == ("rerank-v3.5", QUERY, 3)
    assert body["documents"][2].startswith("Leave for contractors\nContractors get 10 days")
    assert "moved" in note


@pytest.mark.parametrize("server", [("tei",)], indirect=True)
async def test_a_tei_shaped_endpoint_gets_query_and_texts(server: FakeRerankServer) -> None:
    ordered, _ = await rerank(EndpointReranker(server.url, "tei"), QUERY, FUSED)
    assert [p["id"] for p in ordered] == ["p2", "p0", "p1"]
    headers, body = server.requests[0]
    assert set(body) == {"query", "texts", "truncate"} and "Authorization" not in headers


@pytest.mark.parametrize(
    "server",
    [
        ("cohere", 0.0, 500, '{"message": "internal error"}'),
        ("cohere", 0.0, 200, "<html>not json</html>"),
        ("cohere", 0.0, 200, '{"results": [{"index": 0}]}'),  # no score
        ("tei", 0.0, 429, '{"error": "Model is overloaded", "error_type": "overloaded"}'),
        ("tei", 2.0, 200, "[]"),  # slower than the timeout
    ],
    indirect=True,
)
async def test_a_failing_endpoint_keeps_the_fused_order(server: FakeRerankServer) -> None:
    reranker = EndpointReranker(server.url, server.shape, timeout=0.5)
    ordered, note = await rerank(reranker, QUERY, FUSED)
    assert ordered == FUSED
    assert "fused order kept" in note


async def test_an_unreachable_endpoint_keeps_the_fused_order() -> None:
    fake = FakeRerankServer("tei")
    fake.stop()  # nothing listens there any more
    ordered, note = await rerank(EndpointReranker(fake.url, "tei", timeout=1), QUERY, FUSED)
    assert ordered == FUSED and "ConnectError" in note


def test_complete_order_drops_unknown_and_repeated_indices_and_appends_the_rest() -> None:
    assert complete_order([2, 2, 7, -1, "1", True, 0], 4) == [2, 0, 1, 3]
    assert complete_order([], 3) == [0, 1, 2]


async def test_lexical_rerank_lifts_the_passage_that_covers_the_query_and_names_it_in_its_heading() -> None:
    ordered, _ = await rerank(LexicalReranker(), QUERY, FUSED)
    assert ordered[0]["id"] == "p2"
    # a question with no content terms leaves the order alone
    assert await LexicalReranker().order("what is it", FUSED) == [0, 1, 2]


def test_auto_is_the_endpoint_when_a_url_is_set_and_otherwise_nothing() -> None:
    base = Settings(_env_file=None)
    assert make_reranker(base, reasoner=object()) is None
    with_url = base.model_copy(update={"rerank_url": "http://127.0.0.1:1/rerank"})
    assert isinstance(make_reranker(with_url, object()), EndpointReranker)
    with pytest.raises(RerankUnavailable, match="THREADSAGE_RERANK_URL"):
        make_reranker(base.model_copy(update={"rerank": "endpoint"}), object())
    with pytest.raises(RerankUnavailable, match="OPENAI_API_KEY"):
        make_reranker(base.model_copy(update={"rerank": "model"}), object())
