"""The MCP server at /mcp, over real HTTP with the official SDK's client: tools `search` and `ask`
through the same knowledge base and chat service as the platforms, each bearer token reading only
its categories, anything else refused with 401 or a plain sentence."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from threadsage.app.runtime import open_chat_service
from threadsage.bots.mcp import mcp_endpoint
from threadsage.chat import ChatService
from threadsage.chat.turns import MAX_QUESTION_CHARS, Turn
from threadsage.http.thread import http_server
from threadsage.settings.environment import Settings

EVERYTHING = "every-category-token-0123456789"
IT_ONLY = "it-only-token-0123456789abcdef"
NOTHING = "no-category-token-0123456789ab"
TOKENS = {EVERYTHING: ["*"], IT_ONLY: ["it"], NOTHING: []}
AMBIGUOUS = "How do I reset my password?"  # the VPN's and the e-mail's: the handbook answers it twice


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    def __init__(self, url: str, chat: ChatService, stop: asyncio.Event) -> None:
        self.url, self.chat, self.stop = url, chat, stop

    @asynccontextmanager
    async def client(self, token: str, mode: str = "legacy") -> AsyncIterator[Client]:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
            Client(streamable_http_client(self.url, http_client=http), mode=mode) as client,
        ):
            yield client

    async def call(self, token: str, tool: str, **arguments: Any) -> tuple[bool, dict[str, Any] | str]:
        """(is an error, the structured result or the error's text)."""
        async with self.client(token) as client:
            result = await client.call_tool(tool, arguments)
        if result.is_error:
            return True, " ".join(getattr(part, "text", "") for part in result.content)
        assert result.structured_content is not None
        return False, result.structured_content


@asynccontextmanager
async def serving(tmp_path: Path, kb, **more: Any) -> AsyncIterator[Served]:
    settings = Settings(
        THREADSAGE_DATA_DIR=tmp_path / "data",
        THREADSAGE_EMBEDDINGS="none",
        MILVUS_URI=None,
        DATABASE_URL=None,
        OPENAI_API_KEY=None,
        THREADSAGE_MCP_TOKENS=json.dumps(TOKENS),
        THREADSAGE_HTTP_PORT=free_port(),
        _env_file=None,
        **more,
    )
    stop = asyncio.Event()
    async with open_chat_service(settings, kb) as chat:
        mcp = mcp_endpoint(settings, chat, kb, stop)
        async with http_server(settings, mcp.routes, None, mcp.running):
            yield Served(f"http://127.0.0.1:{settings.http_port}/mcp", chat, stop)


@pytest.fixture
async def served(tmp_path: Path, categorised_kb) -> AsyncIterator[Served]:
    async with serving(tmp_path, categorised_kb) as server:
        yield server


def test_nothing_is_served_without_a_token(settings: Settings, kb) -> None:
    mcp = mcp_endpoint(settings, None, kb, asyncio.Event())  # type: ignore[arg-type]
    assert mcp.routes == [] and mcp.running == []


async def test_a_missing_wrong_or_malformed_token_is_refused_with_401(served: Served) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for headers in (
        {},
        {"Authorization": "Bearer wrong-token-0123456789abcdefgh"},
        {"Authorization": f"Basic {EVERYTHING}"},
        {"Authorization": f"Bearer {EVERYTHING.upper()}"},
        {"Authorization": "Bearer"},
        {"Authorization": f"Bearer {EVERYTHING}x"},
    ):
        async with httpx2.AsyncClient(timeout=10) as http:
            response = await http.post(served.url, json=body, headers=headers)
        assert response.status_code == 401, headers
        assert response.headers["www-authenticate"].startswith("Bearer")


async def test_both_protocol_eras_list_the_two_read_only_tools(served: Served) -> None:
    for mode in ("legacy", "auto"):  # the initialize handshake, and the 2026 discovery
        async with served.client(EVERYTHING, mode) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"search", "ask"}, mode
        assert all(tool.annotations and tool.annotations.read_only_hint for tool in tools.values())


async def test_search_gives_passages_with_sources_from_the_tokens_categories_only(served: Served) -> None:
    query = "How do I reset my VPN password?"
    failed, everything = await served.call(EVERYTHING, "search", query=query, limit=3)
    assert not failed and isinstance(everything, dict)
    first = everything["passages"][0]
    assert first["title"] == "VPN access with Larkspur Connect" and "Gatekeeper" in first["text"]
    assert first["source"].startswith("https://")  # the `it` folder is published: its passages cite links

    failed, parental = await served.call(IT_ONLY, "search", query="parental leave weeks", limit=5)
    assert not failed and isinstance(parental, dict)
    assert parental["passages"] and all(p["source"].startswith("https://") for p in parental["passages"])
    failed, people = await served.call(EVERYTHING, "search", query="parental leave weeks", limit=5)
    assert not failed and isinstance(people, dict)
    assert any(not p["source"].startswith("https://") for p in people["passages"])  # the people folder's

    assert await served.call(NOTHING, "search", query=query) == (False, {"passages": []})


async def test_ask_answers_as_the_chat_does_and_cites_its_sources(served: Served) -> None:
    question = "How much annual leave do contractors get?"
    failed, answer = await served.call(EVERYTHING, "ask", question=question)
    assert not failed and isinstance(answer, dict)
    here = await served.chat.handle(Turn("terminal", "terminal:local:same:-", "me", "m1", text=question))
    assert answer["kind"] == "answer" and answer["text"] == here[0].text
    assert answer["citations"] and answer["citations"][0]["source"] == "leave-contractors.md"

    failed, other = await served.call(IT_ONLY, "ask", question=question)
    assert not failed and isinstance(other, dict)
    assert "leave-contractors.md" not in json.dumps(other)  # the people folder is not the `it` token's to read


async def test_a_clarification_is_answered_by_passing_the_conversation_back(served: Served) -> None:
    failed, asked = await served.call(EVERYTHING, "ask", question=AMBIGUOUS)
    assert not failed and isinstance(asked, dict)
    assert asked["kind"] == "clarification" and len(asked["options"]) == 2
    email = next(option for option in asked["options"] if option.startswith("E-mail"))
    failed, answer = await served.call(EVERYTHING, "ask", question=email, conversation=asked["conversation"])
    assert not failed and isinstance(answer, dict)
    assert answer["kind"] == "answer" and answer["conversation"] == asked["conversation"]
    assert "E-mail and calendar" in answer["text"] and "Gatekeeper" not in answer["text"]


async def test_a_conversation_is_the_tokens_own(served: Served) -> None:
    failed, asked = await served.call(EVERYTHING, "ask", question=AMBIGUOUS)
    assert not failed and isinstance(asked, dict)
    # Another token passing the same id starts a conversation of its own: nothing is pending there.
    failed, other = await served.call(IT_ONLY, "ask", question="1", conversation=asked["conversation"])
    assert not failed and isinstance(other, dict)
    # "1" is read as a question of its own there, not as the first option's pick: no password reset.
    assert not any("password" in c["title"].lower() + c["section"].lower() for c in other["citations"]), other
    assert other["kind"] != "clarification"


async def test_bad_calls_get_a_plain_sentence(served: Served) -> None:
    cases = [
        ({"question": "   "}, "The question is empty."),
        ({"question": "x" * (MAX_QUESTION_CHARS + 1)}, f"longer than {MAX_QUESTION_CHARS} characters"),
        ({"question": "hi", "conversation": "../../etc"}, "`conversation` is the id an earlier answer returned"),
    ]
    for arguments, said in cases:
        failed, text = await served.call(EVERYTHING, "ask", **arguments)
        assert failed and isinstance(text, str) and said in text and "Traceback" not in text


async def test_over_the_rate_limit_every_call_says_so(tmp_path: Path, categorised_kb) -> None:
    async with serving(tmp_path, categorised_kb, rate_limit_per_minute=1) as limited:
        failed, first = await limited.call(EVERYTHING, "ask", question="What is the VPN?")
        assert not failed and isinstance(first, dict) and first["kind"] == "answer"
        for _ in range(2):  # a chat hears it once a minute; a tool call never comes back empty
            failed, over = await limited.call(EVERYTHING, "ask", question="What is the VPN?")
            assert not failed and isinstance(over, dict)
            assert over["kind"] == "notice" and "faster than I can keep up" in over["text"]


async def test_requests_are_refused_while_the_process_stops(served: Served) -> None:
    served.stop.set()
    async with httpx2.AsyncClient(timeout=10) as http:
        response = await http.post(
            served.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Authorization": f"Bearer {EVERYTHING}"},
        )
    assert response.status_code == 503


async def test_no_token_reaches_the_logs(served: Served, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        await served.call(EVERYTHING, "ask", question="What is the VPN?")
        async with httpx2.AsyncClient(timeout=10) as http:
            await http.post(served.url, json={}, headers={"Authorization": f"Bearer {IT_ONLY}x"})
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert logged and EVERYTHING not in logged and IT_ONLY not in logged
