"""Web search against fake Tavily and SearXNG servers, alone and through the conversation graph:
labelled as the web, never cited as a document, and a refusal (not an error) when it fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI, user_text
from tests.fakes.web_search import FakeWebSearch
from tests.helpers.conversation import Conversation, llm_chat, only, route_to
from threadsage.app.runtime import open_chat_service
from threadsage.chat import ReplyKind
from threadsage.graph.nodes.tools import WEB_LABEL
from threadsage.i18n import say
from threadsage.settings.environment import Settings
from threadsage.tools.web import SearXNG, Tavily

OUT_OF_SCOPE = "Who won the football world cup in 1998?"


@pytest.fixture
def web():
    server = FakeWebSearch().start()
    yield server
    server.stop()


async def test_tavily_is_asked_as_documented(web: FakeWebSearch) -> None:
    results = await Tavily("tvly-test", web.url, max_results=1).search("world cup 1998")
    assert [(r.title, r.url) for r in results] == [("World Cup 1998 final", "https://example.org/wc1998")]
    [request] = web.requests
    assert request["body"] == {"query": "world cup 1998", "max_results": 1, "search_depth": "basic"}
    assert await Tavily("tvly-wrong", web.url).search("world cup 1998") == []  # 401: no results, no crash


async def test_searxng_is_asked_as_documented(web: FakeWebSearch) -> None:
    results = await SearXNG(web.url, max_results=5).search("world cup 1998")
    assert len(results) == 2 and results[1].content == "The 1998 final was in Paris."
    assert web.requests[0]["query"] == {"q": "world cup 1998", "format": "json"}


@pytest.mark.parametrize("status", [500, 429])
async def test_a_failing_service_gives_no_results(web: FakeWebSearch, status: int) -> None:
    web.status = status
    assert await SearXNG(web.url).search("anything") == []


async def test_malformed_results_are_skipped(web: FakeWebSearch) -> None:
    web.pages = [
        {"title": "no url"},
        {"url": "javascript:alert(1)", "title": "x"},
        page := {"url": "https://a.example/", "title": "ok", "content": "fine"},
    ]
    assert [r.url for r in await SearXNG(web.url).search("q")] == [page["url"]]


def offline(tmp_path: Path, **web) -> Settings:
    return Settings(
        THREADSAGE_DATA_DIR=tmp_path / "data", DATABASE_URL=None, OPENAI_API_KEY=None, _env_file=None, **web
    )


async def test_offline_out_of_scope_question_is_answered_from_the_web_and_labelled(
    tmp_path: Path, web: FakeWebSearch, handbook_kb
) -> None:
    settings = offline(tmp_path, THREADSAGE_WEB_SEARCH="searxng", THREADSAGE_SEARXNG_URL=web.url)
    async with open_chat_service(settings, kb=handbook_kb) as chat:
        reply = only(await Conversation(chat).say(OUT_OF_SCOPE))
        in_scope = only(
            await Conversation(chat, "test:ws:c:t2").say("What is the hotel limit in London under the Lisbon policy?")
        )
    assert reply.kind is ReplyKind.ANSWER and reply.route == "web_search"
    assert reply.text.startswith(WEB_LABEL) and "France won the 1998 World Cup. [web 1]" in reply.text
    assert "1. [World Cup 1998 final](https://example.org/wc1998)" in reply.text
    assert reply.citations == ()  # the web is never a document citation
    assert len(web.requests) == 1  # the documents' question never went to the web
    assert in_scope.citations and WEB_LABEL not in in_scope.text


async def test_without_web_results_the_refusal_stands(tmp_path: Path, web: FakeWebSearch, handbook_kb) -> None:
    web.status = 500
    settings = offline(
        tmp_path, THREADSAGE_WEB_SEARCH="tavily", TAVILY_API_KEY="tvly-test", THREADSAGE_TAVILY_URL=web.url
    )
    async with open_chat_service(settings, kb=handbook_kb) as chat:
        reply = only(await Conversation(chat).say(OUT_OF_SCOPE))
    assert (reply.text, reply.route) == (say("refusal"), "fallback")
    assert [step["node"] for step in reply.trace][-3:] == ["web", "fallback", "compose"]


async def test_with_a_model_the_web_answer_cites_web_results_only(
    tmp_path: Path, llm: FakeOpenAI, web: FakeWebSearch, handbook_kb
) -> None:
    llm.script["RouteDecision"] = route_to("UNKNOWN")
    llm.script["web_answer"] = "France won it [1], in Paris [2]; see also [7]."
    overrides = {"THREADSAGE_WEB_SEARCH": "tavily", "TAVILY_API_KEY": "tvly-test", "THREADSAGE_TAVILY_URL": web.url}
    async with llm_chat(tmp_path, llm, handbook_kb, **overrides) as chat:
        reply = only(await Conversation(chat).say(OUT_OF_SCOPE))
    assert llm.chat_kinds() == ["RouteDecision", "web_answer"]
    assert "France won it [web 1], in Paris [web 2]; see also ." in reply.text  # [7] named no result
    assert reply.citations == () and reply.text.startswith(WEB_LABEL)
    asked = next(body for path, body in llm.requests if "Web results:" in user_text(body))
    assert "<result>\nFrance won the 1998 World Cup.\n</result>" in user_text(asked)


@pytest.mark.parametrize(
    ("env", "missing"),
    [({"THREADSAGE_WEB_SEARCH": "tavily"}, "TAVILY_API_KEY"), ({"THREADSAGE_WEB_SEARCH": "searxng"}, "SEARXNG_URL")],
)
async def test_an_incomplete_web_search_setting_is_refused_at_start_up(
    tmp_path: Path, handbook_kb, env: dict[str, str], missing: str
) -> None:
    with pytest.raises(ValueError, match=missing):
        async with open_chat_service(offline(tmp_path, **env), kb=handbook_kb):
            pass
