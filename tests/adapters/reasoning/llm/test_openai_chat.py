"""Our Chat Completions client against the fake OpenAI server over real HTTP: what it sends, what it
parses, and how it retries (429 with Retry-After, 5xx, timeouts) or fails at once (other 4xx,
garbage), never with the API key in its message."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import aiohttp
import pytest
from pydantic import BaseModel, Field

from tests.fakes.openai_server import Failure, FakeOpenAI, ToolCalls
from threadsage.adapters.reasoning.llm.openai_chat import ModelError, OpenAIChat, forced, tool

KEY = "sk-test-0123456789abcdefSECRET"
ASK = [{"role": "system", "content": "Route the question."}, {"role": "user", "content": "Question: what?"}]


class Lookup(BaseModel):
    """Look a thing up."""

    query: str = Field(description="What to look up.")
    limit: int = 3


@pytest.fixture
async def chat(llm: FakeOpenAI) -> AsyncIterator[OpenAIChat]:
    client = OpenAIChat(llm.base_url, KEY, timeout=0.5, retries=2, backoff=0.01)
    yield client
    await client.aclose()


def completions(llm: FakeOpenAI) -> list[dict]:
    return [body for path, body in llm.requests if path.endswith("/chat/completions")]


async def test_a_forced_call_sends_the_tool_and_parses_its_arguments(llm: FakeOpenAI, chat: OpenAIChat) -> None:
    llm.script["Lookup"] = {"query": "hotel limit", "limit": 5}
    reply = await chat.complete("gpt-test", ASK, (Lookup,), forced(Lookup))
    (call,) = reply.tool_calls
    assert (call.id, call.name, call.args) == ("call_1", "Lookup", {"query": "hotel limit", "limit": 5})
    assert reply.finish_reason == "tool_calls" and reply.content is None
    assert reply.usage is not None and reply.usage["prompt_tokens"] == 50
    (sent,) = completions(llm)
    assert (sent["model"], sent["messages"], sent["temperature"]) == ("gpt-test", ASK, 0)
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "Lookup"}}
    assert sent["tools"] == [tool(Lookup)]
    assert sent["tools"][0]["function"] == {
        "name": "Lookup",
        "description": "Look a thing up.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look up."},
                "limit": {"type": "integer", "default": 3},
            },
            "required": ["query"],
        },
    }


async def test_tool_calls_and_unparsable_arguments_come_back_as_written(llm: FakeOpenAI, chat: OpenAIChat) -> None:
    llm.script["unknown"] = ToolCalls([("Lookup", {"query": "a"}), ("Lookup", "not json")])
    reply = await chat.complete("gpt-test", [{"role": "user", "content": "hi"}], (Lookup,), "required")
    assert [(c.name, c.args, c.arguments) for c in reply.tool_calls] == [
        ("Lookup", {"query": "a"}, '{"query": "a"}'),
        ("Lookup", None, "not json"),
    ]
    assert reply.as_message()["tool_calls"][1] == {
        "id": "call_2",
        "type": "function",
        "function": {"name": "Lookup", "arguments": "not json"},
    }


async def test_a_429_waits_as_long_as_retry_after_says_then_succeeds(llm: FakeOpenAI, chat: OpenAIChat) -> None:
    llm.script["Lookup"] = [Failure(status=429, headers={"Retry-After": "1"}), {"query": "x"}]
    start = time.perf_counter()
    reply = await chat.complete("gpt-test", ASK, (Lookup,), forced(Lookup))
    elapsed = time.perf_counter() - start
    assert reply.tool_calls[0].args == {"query": "x"}
    assert len(completions(llm)) == 2
    assert elapsed >= 1.0  # the header's second, not the 10 ms backoff (a lower bound: load only lengthens it)


async def test_two_500s_are_retried_then_it_succeeds(llm: FakeOpenAI, chat: OpenAIChat) -> None:
    llm.script["Lookup"] = [Failure(status=500), Failure(status=500), {"query": "x"}]
    reply = await chat.complete("gpt-test", ASK, (Lookup,), forced(Lookup))
    assert reply.tool_calls[0].args == {"query": "x"} and len(completions(llm)) == 3


async def test_retries_run_out_on_a_lasting_5xx(llm: FakeOpenAI, chat: OpenAIChat) -> None:
    llm.script["Lookup"] = Failure(status=503)
    with pytest.raises(ModelError) as raised:
        await chat.complete("gpt-test", ASK, (Lookup,), forced(Lookup))
    assert raised.value.status == 503 and "internal error" in str(raised.value)
    assert len(completions(llm)) == 3  # one try and two retries


async def test_a_400_fails_at_once(llm: FakeOpenAI, chat: OpenAIChat) -> None:
    llm.script["Lookup"] = Failure(status=400, body='{"error": {"message": "Invalid schema for function"}}')
    with pytest.raises(ModelError) as raised:
        await chat.complete("gpt-test", ASK, (Lookup,), forced(Lookup))
    assert raised.value.status == 400 and "Invalid schema for function" in str(raised.value)
    assert len(completions(llm)) == 1


async def test_a_slow_server_times_out_on_every_attempt(llm: FakeOpenAI) -> None:
    llm.script["Lookup"] = Failure(status=200, delay=2)
    client = OpenAIChat(llm.base_url, KEY, timeout=0.3, retries=1, backoff=0.01)
    start = time.perf_counter()
    try:
        with pytest.raises(ModelError, match="timed out") as raised:
            await client.complete("gpt-test", ASK, (Lookup,), forced(Lookup))
    finally:
        await client.aclose()
    assert raised.value.status is None  # timed out, not the server's late answer
    assert time.perf_counter() - start >= 0.6  # two attempts of 0.3 s each (a lower bound: load only lengthens it)
    assert len(completions(llm)) == 2


@pytest.mark.parametrize(
    "body",
    ["<html>Bad gateway</html>", '{"id": "chatcmpl-1", "choices": []}', '{"choices": [{"index": 0}]}'],
    ids=["not-json", "no-choice", "no-message"],
)
async def test_a_reply_that_is_no_completion_is_an_error(llm: FakeOpenAI, chat: OpenAIChat, body: str) -> None:
    llm.script["Lookup"] = Failure(status=200, body=body)
    with pytest.raises(ModelError):
        await chat.complete("gpt-test", ASK, (Lookup,), forced(Lookup))
    assert len(completions(llm)) == 1


async def test_the_api_key_never_shows_in_the_error(llm: FakeOpenAI, chat: OpenAIChat) -> None:
    echoed = f'{{"error": {{"message": "Incorrect API key provided: {KEY}.", "code": "invalid_api_key"}}}}'
    llm.script["Lookup"] = Failure(status=401, body=echoed)
    with pytest.raises(ModelError) as raised:
        await chat.complete("gpt-test", ASK, (Lookup,), forced(Lookup))
    assert raised.value.status == 401 and "Incorrect API key provided" in str(raised.value)
    assert KEY not in str(raised.value) and KEY not in repr(raised.value.args)
    assert llm.authorizations == [f"Bearer {KEY}"]


async def test_requests_go_through_the_proxy_of_the_environment(
    llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the openai SDK's client did: HTTP_PROXY is used (the fake server stands in for the proxy,
    which receives the request with its absolute target), NO_PROXY is respected."""
    monkeypatch.setenv("HTTP_PROXY", llm.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    client = OpenAIChat("http://models.example.invalid/v1", KEY, timeout=2, retries=0)
    try:
        reply = await client.complete("gpt-test", ASK)
    finally:
        await client.aclose()
    assert reply.content is not None
    assert [path for path, _ in llm.requests] == ["http://models.example.invalid/v1/chat/completions"]
    assert llm.proxy_authorizations == [""]


async def test_the_proxy_s_credentials_go_in_a_proxy_authorization_header(
    llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", llm.url.replace("http://", "http://proxyuser:s3cret@"))
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    client = OpenAIChat("http://models.example.invalid/v1", KEY, timeout=2, retries=0)
    try:
        await client.complete("gpt-test", ASK)
    finally:
        await client.aclose()
    assert llm.proxy_authorizations == [aiohttp.BasicAuth("proxyuser", "s3cret").encode()]
    assert llm.authorizations == [f"Bearer {KEY}"]
