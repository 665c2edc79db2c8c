"""The model calls through LangChain against the fake OpenAI server over real HTTP: the token limit
each kind of call sends (in the field the server reads), retries (429 with Retry-After, 5xx) and
what is not retried (other 4xx, a timeout, whose connection is closed), the proxy of the
environment, errors without the key, and the providers the settings can name."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langchain_ollama import ChatOllama
from langchain_openai import AzureChatOpenAI, ChatOpenAI

from tests.fakes.openai_server import Failure, FakeOpenAI, kind_of
from threadsage.adapters.reasoner import RouteDecision, Verdict
from threadsage.adapters.reasoning.llm.back_end import LLMReasoner
from threadsage.adapters.reasoning.llm.calls import ModelFailure
from threadsage.adapters.reasoning.llm.chat_models import structured_method
from threadsage.settings.environment import Settings

KEY = "sk-test-0123456789abcdefSECRET"
PASSAGE = {
    "id": "p1",
    "path": "finance/travel.md",
    "source": "handbook",
    "title": "Travel",
    "heading": "Hotels",
    "text": "Hotels up to €180 a night.",
    "score": 1.0,
}


def settings(tmp_path: Path, base_url: str | None, **overrides: object) -> Settings:
    values = {"THREADSAGE_LLM_TIMEOUT": 1, "THREADSAGE_LLM_RETRIES": 2, **overrides}
    return Settings(
        THREADSAGE_DATA_DIR=tmp_path, OPENAI_API_KEY=KEY, OPENAI_BASE_URL=base_url, _env_file=None, **values
    )


@pytest.fixture
async def model(tmp_path: Path, llm: FakeOpenAI) -> AsyncIterator[LLMReasoner]:
    reasoner = LLMReasoner(settings(tmp_path, llm.base_url), "UTC")
    reasoner.calls._backoff = 0.01
    yield reasoner
    await reasoner.aclose()


def completions(llm: FakeOpenAI) -> list[dict]:
    return [body for path, body in llm.requests if path.endswith("/chat/completions")]


async def test_every_kind_of_call_sends_its_token_limit_as_max_tokens(
    tmp_path: Path, llm: FakeOpenAI, model: LLMReasoner
) -> None:
    """llama.cpp's server reads `max_tokens` only: a base URL gets that field, each call kind its limit."""
    await model.contextualise("and Toronto?", [("user", "Hotel limit in Lisbon?")])
    await model.route("What is the hotel limit?", [PASSAGE])
    await model.judge("What is the hotel limit?", [PASSAGE], "€180 [1].")
    await model.rewrite("What is the hotel limit?", [PASSAGE])
    await model.translate("酒店标准", "English")
    await model.answer("What is the hotel limit?", [PASSAGE])
    await model.chat("hello", [])
    limits = {kind_of(body): body.get("max_tokens") for body in completions(llm)}
    s = settings(tmp_path, llm.base_url)
    assert limits == {
        "contextualise": s.max_tokens_contextualise,
        "RouteDecision": s.max_tokens_route,
        "Verdict": s.max_tokens_judge,
        "rewrite": s.max_tokens_rewrite,
        "Translation": s.max_tokens_translate,
        "answer": s.max_tokens_answer,
        "chat": s.max_tokens_answer,
    }
    assert not any("max_completion_tokens" in body for body in completions(llm))
    assert all(body["temperature"] == 0 for body in completions(llm))


def test_openai_itself_gets_max_completion_tokens(tmp_path: Path) -> None:
    """Without a base URL the model is OpenAI's, which reads `max_completion_tokens`."""
    reasoner = LLMReasoner(settings(tmp_path, None), "UTC")
    model = reasoner.calls.model("gpt-4o-mini", 77)
    assert isinstance(model, ChatOpenAI)
    payload = model._get_request_payload([HumanMessage(content="hi")])
    assert payload["max_completion_tokens"] == 77 and "max_tokens" not in payload


async def test_a_structured_runnable_is_built_once_per_schema_and_model(model: LLMReasoner) -> None:
    first = model.calls._runnable(Verdict, "gpt-4o-mini", 100)
    assert model.calls._runnable(Verdict, "gpt-4o-mini", 100) is first
    assert model.calls._runnable(RouteDecision, "gpt-4o-mini", 100) is not first


async def test_a_429_waits_as_long_as_retry_after_says_then_succeeds(llm: FakeOpenAI, model: LLMReasoner) -> None:
    llm.script["Verdict"] = [Failure(status=429, headers={"Retry-After": "1"}), {"grounded": 1, "useful": 0.5}]
    start = time.perf_counter()
    verdict = await model.judge("q", [PASSAGE], "a [1]")
    assert verdict.useful == 0.5 and len(completions(llm)) == 2
    assert time.perf_counter() - start >= 1.0  # the header's second, not the 10 ms backoff


async def test_two_500s_are_retried_then_it_succeeds(llm: FakeOpenAI, model: LLMReasoner) -> None:
    llm.script["Verdict"] = [Failure(status=500), Failure(status=502), {"grounded": 1, "useful": 1}]
    assert (await model.judge("q", [PASSAGE], "a [1]")).useful == 1 and len(completions(llm)) == 3


async def test_retries_run_out_on_a_lasting_5xx(llm: FakeOpenAI, model: LLMReasoner) -> None:
    llm.script["Verdict"] = Failure(status=503)
    with pytest.raises(ModelFailure, match="503"):
        await model.judge("q", [PASSAGE], "a [1]")
    assert len(completions(llm)) == 3  # one try and two retries


async def test_a_400_fails_at_once(llm: FakeOpenAI, model: LLMReasoner) -> None:
    llm.script["Verdict"] = Failure(status=400, body='{"error": {"message": "Invalid schema for function"}}')
    with pytest.raises(ModelFailure, match="Invalid schema for function"):
        await model.judge("q", [PASSAGE], "a [1]")
    assert len(completions(llm)) == 1


async def test_a_timeout_closes_the_connection_and_is_not_retried(llm: FakeOpenAI, model: LLMReasoner) -> None:
    """The server sees the connection closed before its first token (so it can stop generating),
    and gets no duplicate."""
    llm.first_token_seconds = 3
    with pytest.raises(ModelFailure, match="timed out"):
        await model.judge("q", [PASSAGE], "a [1]")
    await asyncio.sleep(0.3)  # the fake looks at the connection every 20 ms
    assert llm.abandoned == ["Verdict"] and len(completions(llm)) == 1


async def test_timeouts_are_retried_when_the_setting_says_so(tmp_path: Path, llm: FakeOpenAI) -> None:
    llm.first_token_seconds = 2
    reasoner = LLMReasoner(
        settings(tmp_path, llm.base_url, THREADSAGE_LLM_RETRY_TIMEOUTS=True, THREADSAGE_LLM_RETRIES=1), "UTC"
    )
    reasoner.calls._backoff = 0.01
    try:
        with pytest.raises(ModelFailure, match="timed out"):
            await reasoner.judge("q", [PASSAGE], "a [1]")
    finally:
        await reasoner.aclose()
    assert len(completions(llm)) == 2


async def test_the_api_key_never_shows_in_the_error(llm: FakeOpenAI, model: LLMReasoner) -> None:
    echoed = f'{{"error": {{"message": "Incorrect API key provided: {KEY}.", "code": "invalid_api_key"}}}}'
    llm.script["Verdict"] = Failure(status=401, body=echoed)
    with pytest.raises(ModelFailure) as raised:
        await model.judge("q", [PASSAGE], "a [1]")
    assert "Incorrect API key provided" in str(raised.value) and KEY not in str(raised.value)
    assert llm.authorizations == [f"Bearer {KEY}"]


async def test_requests_go_through_the_proxy_of_the_environment(
    tmp_path: Path, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTP_PROXY is used (the fake server stands in for the proxy, which receives the request
    with its absolute target); NO_PROXY is respected."""
    monkeypatch.setenv("HTTP_PROXY", llm.url)
    for name in ("NO_PROXY", "no_proxy", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    reasoner = LLMReasoner(settings(tmp_path, "http://models.example.invalid/v1"), "UTC")
    try:
        assert await reasoner.chat("hello", [])
    finally:
        await reasoner.aclose()
    assert [path for path, _ in llm.requests] == ["http://models.example.invalid/v1/chat/completions"]
    monkeypatch.setenv("NO_PROXY", "models.example.invalid")
    reasoner = LLMReasoner(settings(tmp_path, "http://models.example.invalid/v1", THREADSAGE_LLM_RETRIES=0), "UTC")
    try:
        with pytest.raises(ModelFailure):  # straight to a host that does not exist
            await reasoner.chat("hello", [])
    finally:
        await reasoner.aclose()
    assert len(llm.requests) == 1


@pytest.mark.parametrize("form", ["json_schema", "json_mode"])
async def test_json_forms_of_structured_output(tmp_path: Path, llm: FakeOpenAI, form: str) -> None:
    llm.script["Verdict"] = {"grounded": 0.5, "useful": 0.25}
    reasoner = LLMReasoner(settings(tmp_path, llm.base_url, THREADSAGE_STRUCTURED_OUTPUT=form), "UTC")
    try:
        verdict = await reasoner.judge("q", [PASSAGE], "a [1]")
    finally:
        await reasoner.aclose()
    [sent] = completions(llm)
    assert (verdict.grounded, verdict.useful) == (0.5, 0.25) and "tools" not in sent
    if form == "json_schema":
        assert sent["response_format"]["type"] == "json_schema"
        assert sent["response_format"]["json_schema"]["name"] == "Verdict"
    else:
        assert sent["response_format"] == {"type": "json_object"}
        assert '"title": "Verdict"' in sent["messages"][0]["content"]  # the schema, in the prompt


def test_providers_named_in_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`provider:model` picks the LangChain chat model, each with the token limit in its own field."""
    # The `anthropic` extra, imported here only as the product imports it (init_chat_model, when
    # named): at the top it cost every worker of the fast tier seconds of collection.
    from langchain_anthropic import ChatAnthropic

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")  # read by langchain-anthropic itself
    s = Settings(
        THREADSAGE_DATA_DIR=tmp_path,
        THREADSAGE_CHAT_MODEL="anthropic:claude-test",
        THREADSAGE_ROUTER_MODEL="ollama:qwen-test",
        AZURE_OPENAI_ENDPOINT="https://example-resource.openai.azure.com",
        AZURE_OPENAI_API_KEY="azure-key",
        _env_file=None,
    )
    assert s.uses_language_model and s.openai_api_key is None
    reasoner = LLMReasoner(s, s.timezone)
    claude = reasoner.calls.model("anthropic:claude-test", 99)
    assert isinstance(claude, ChatAnthropic) and (claude.model, claude.max_tokens, claude.max_retries) == (
        "claude-test",
        99,
        0,
    )
    ollama = reasoner.calls.model("ollama:qwen-test", 55)
    assert isinstance(ollama, ChatOllama) and (ollama.model, ollama.num_predict) == ("qwen-test", 55)
    azure = reasoner.calls.model("azure_openai:my-deployment", 44)
    assert isinstance(azure, AzureChatOpenAI) and (azure.deployment_name, azure.max_tokens) == ("my-deployment", 44)
    assert (structured_method(s, "ollama:qwen-test"), structured_method(s, "anthropic:claude-test")) == (
        "json_schema",
        "function_calling",
    )
    assert structured_method(s.model_copy(update={"structured_output": "json_mode"}), "ollama:q") == "json_mode"
