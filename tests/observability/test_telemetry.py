"""Observability with real components: metrics moved by real turns through ChatService (offline
back-end, and the fake OpenAI server for model calls), `/metrics` over HTTP from the served app,
the log lines an operator ships, and a served process traced to a fake LangSmith."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import uvicorn
from prometheus_client import REGISTRY

from tests.fakes.http import JsonServer
from tests.fakes.openai_server import Failure, FakeOpenAI
from tests.fakes.slack_api import FakeSlack
from tests.helpers.conversation import AMBIGUOUS, Conversation, llm_chat, only, route_to, service
from tests.helpers.locations import HANDBOOK
from tests.helpers.served import serve
from threadsage.chat import ACCEPTED, APOLOGY, STALE, ClarificationAnswer, ReplyKind, Turn
from threadsage.delivery.coordination import LocalCoordinator
from threadsage.http.server import create_app
from threadsage.observability.redaction import REDACTED

QUESTION = "Which cabin class may I book for a flight of 6 hours or more?"
SLACK_TOKEN = "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx"
APP_TOKEN = "xapp-1-A0123456789-1234567890123-abcdef0123456789"
TELEGRAM_TOKEN = "123456789:AAHk9x0Yy_zz-abcdefghijklmnopqrstuv"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
MCP_TOKEN = "mcp-editor-token-7f3a9c0d1e2b"


def samples() -> dict[str, float]:
    """Every threadsage sample but histogram buckets and sums (timings vary) and `_created`."""
    found = {}
    for metric in REGISTRY.collect():
        for sample in metric.samples:
            if sample.name.startswith("threadsage_") and not sample.name.endswith(("_bucket", "_sum", "_created")):
                labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
                found[f"{sample.name}{{{labels}}}"] = sample.value
    return found


def moved(before: dict[str, float], prefix: str = "threadsage_") -> dict[str, float]:
    """What changed since `before`: the registry is process-wide, so tests compare deltas."""
    return {
        key: value - before.get(key, 0.0)
        for key, value in samples().items()
        if key.startswith(prefix) and value != before.get(key, 0.0)
    }


def turn(outcome: str, route: str = "none") -> dict[str, float]:
    """The two samples every turn (of platform "obs", the tests' session keys) moves."""
    return {
        f"threadsage_turns_total{{outcome={outcome},platform=obs,route={route}}}": 1.0,
        f"threadsage_turn_duration_seconds_count{{platform=obs,route={route}}}": 1.0,
    }


def clarification(event: str) -> dict[str, float]:
    return {f"threadsage_clarifications_total{{event={event},platform=obs}}": 1.0}


class BrokenKnowledgeBase:
    async def search(self, *args: object, **kwargs: object) -> list:
        raise RuntimeError("the knowledge base is down")

    def category_counts(self) -> dict:
        raise RuntimeError("the knowledge base is down")


async def test_every_outcome_of_a_turn_is_counted(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        talk = Conversation(chat, "obs:ws:chan:outcomes")
        before = samples()
        answer = only(await talk.say(QUESTION))
        assert answer.kind is ReplyKind.ANSWER
        assert moved(before) == turn("answer", answer.route)

        before = samples()
        ask = only(await talk.say(AMBIGUOUS))
        assert ask.kind is ReplyKind.CLARIFICATION
        assert moved(before) == turn("clarification", "clarify_needed") | clarification("asked")

        before, in_flight = samples(), []

        async def during_the_turn() -> bool:
            in_flight.append(REGISTRY.get_sample_value("threadsage_turns_in_flight", {"platform": "obs"}))
            return False

        click = Turn("obs", talk.key, "U1", "click-1", answer=ClarificationAnswer(ask.interrupt_id, option=0))
        events = [event async for event in chat.stream(click) if event is not ACCEPTED or await during_the_turn()]
        resumed = only(events)
        assert resumed.kind is ReplyKind.ANSWER and in_flight == [1.0]
        assert moved(before) == turn("answer", resumed.route) | clarification("answered")

        before = samples()
        assert await chat.handle(click) == []
        assert moved(before) == turn("duplicate")

        before = samples()
        assert only(await talk.click(ask.interrupt_id, 0)).text == STALE
        assert moved(before) == turn("notice")

        talk.chat = dataclasses.replace(chat, rate_limit_per_minute=2)  # U1 has asked twice this minute
        before = samples()
        assert only(await talk.say(QUESTION)).kind is ReplyKind.NOTICE
        assert moved(before) == turn("rate_limited")

        talk.chat = dataclasses.replace(chat, context=dataclasses.replace(chat.context, kb=BrokenKnowledgeBase()))
        before = samples()
        assert only(await talk.say(QUESTION, user="U3")).text == APOLOGY
        assert moved(before) == turn("error") | {"threadsage_errors_total{where=turn}": 1.0}
        assert REGISTRY.get_sample_value("threadsage_turns_in_flight", {"platform": "obs"}) == 0.0


class LockLosingCoordinator(LocalCoordinator):
    async def still_holds(self) -> bool:
        return False


class BrokenCoordinator(LocalCoordinator):
    async def claim(self, key: str, ttl_seconds: float) -> bool:
        raise ConnectionError("redis is down")


async def test_failures_around_the_graph_are_errors_too(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        talk = Conversation(chat, "obs:ws:chan:failures")
        talk.chat = dataclasses.replace(chat, coordinator=LockLosingCoordinator())
        before = samples()
        assert only(await talk.say(QUESTION)).text == APOLOGY
        assert moved(before) == turn("error") | {"threadsage_errors_total{where=session_lock}": 1.0}

        talk.chat = dataclasses.replace(chat, coordinator=BrokenCoordinator())
        before = samples()
        assert only(await talk.say(QUESTION)).text == APOLOGY  # outside a queue: apologise at once
        assert moved(before) == turn("error") | {"threadsage_errors_total{where=turn}": 1.0}
        assert REGISTRY.get_sample_value("threadsage_turns_in_flight", {"platform": "obs"}) == 0.0


async def test_clarifications_left_for_a_new_question_or_reset_are_abandoned(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        talk = Conversation(chat, "obs:ws:chan:abandoned")
        ask = only(await talk.say(AMBIGUOUS))
        before = samples()
        other = only(await talk.say(QUESTION, user="U2"))  # someone else's question replaces it
        assert moved(before) == turn("answer", other.route) | clarification("abandoned")
        assert only(await talk.click(ask.interrupt_id, 0)).text == STALE  # it is gone indeed

        only(await talk.say(AMBIGUOUS))
        before = samples()
        await chat.reset(talk.key, "obs")  # /new
        assert moved(before) == clarification("abandoned")
        before = samples()
        await chat.reset(talk.key, "obs")  # nothing pending any more
        assert moved(before) == {}


async def test_model_calls_and_tokens_are_counted_by_model_and_kind(
    tmp_path: Path, llm: FakeOpenAI, handbook_kb
) -> None:
    models = {"THREADSAGE_CHAT_MODEL": "obs-chat", "THREADSAGE_ROUTER_MODEL": "obs-router"}
    llm.script["RouteDecision"] = route_to("FACT_LOOKUP")
    async with llm_chat(tmp_path, llm, handbook_kb, **models) as chat:
        talk = Conversation(chat, "obs:ws:chan:llm")
        before = samples()
        assert only(await talk.say(QUESTION)).kind is ReplyKind.ANSWER
        assert llm.chat_kinds() == ["RouteDecision", "answer"]
        assert moved(before, "threadsage_llm") == {
            "threadsage_llm_calls_total{kind=RouteDecision,model=obs-router}": 1.0,
            "threadsage_llm_tokens_total{kind=RouteDecision,model=obs-router,type=input}": 50.0,
            "threadsage_llm_tokens_total{kind=RouteDecision,model=obs-router,type=output}": 10.0,
            "threadsage_llm_calls_total{kind=GroundedAnswer,model=obs-chat}": 1.0,
            "threadsage_llm_tokens_total{kind=GroundedAnswer,model=obs-chat,type=input}": 50.0,
            "threadsage_llm_tokens_total{kind=GroundedAnswer,model=obs-chat,type=output}": 10.0,
        }

        llm.requests.clear()
        llm.script["answer"] = Failure(status=500, times=10)
        before = samples()
        reply = only(await talk.say(QUESTION, user="U2"))
        assert reply.kind is ReplyKind.ANSWER and reply.text != APOLOGY  # the documents' own words
        assert llm.chat_kinds().count("answer") == 2  # the retry is part of one call
        changed = moved(before)
        assert changed["threadsage_llm_calls_total{kind=GroundedAnswer,model=obs-chat}"] == 1.0
        assert "threadsage_llm_tokens_total{kind=GroundedAnswer,model=obs-chat,type=input}" not in changed
        assert changed["threadsage_errors_total{where=llm}"] == 1.0
        assert "threadsage_errors_total{where=turn}" not in changed

        llm.script["RouteDecision"] = "this is not json at all"
        before = samples()
        assert only(await talk.say("What is the hotel limit?", user="U3")).kind is ReplyKind.CLARIFICATION
        # the reply, and the repair's: each unusable
        assert moved(before, "threadsage_errors") == {"threadsage_errors_total{where=llm_output}": 2.0}
        assert (
            moved(before, "threadsage_llm_calls")[
                "threadsage_llm_calls_total{kind=RouteDecision repair,model=obs-router}"
            ]
            == 1.0
        )


@pytest.fixture
async def served_app() -> AsyncIterator[str]:
    server = uvicorn.Server(
        uvicorn.Config(create_app([]), host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    )
    serving = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110 - uvicorn sets a flag, it has no event to wait on
        await asyncio.sleep(0.01)
    yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    server.should_exit = True
    await serving


async def test_metrics_are_served_over_http(tmp_path: Path, handbook_kb, served_app: str) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        answer = only(await Conversation(chat, "obs-http:ws:chan:t").say(QUESTION))
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{served_app}/metrics") as response:
            assert response.status == 200
            assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
            text = await response.text()
        async with http.get(f"{served_app}/metrics", headers={"Accept": "application/openmetrics-text"}) as response:
            assert response.headers["Content-Type"].startswith("application/openmetrics-text")
            assert (await response.text()).endswith("# EOF\n")
    for name, kind in [
        ("threadsage_turns_total", "counter"),
        ("threadsage_turn_duration_seconds", "histogram"),
        ("threadsage_turns_in_flight", "gauge"),
        ("threadsage_clarifications_total", "counter"),
        ("threadsage_llm_calls_total", "counter"),
        ("threadsage_llm_tokens_total", "counter"),
        ("threadsage_errors_total", "counter"),
    ]:
        assert f"# TYPE {name} {kind}\n" in text
    assert f'threadsage_turns_total{{outcome="answer",platform="obs-http",route="{answer.route}"}} 1.0' in text
    assert f'threadsage_turn_duration_seconds_count{{platform="obs-http",route="{answer.route}"}} 1.0' in text


# --- logs ----------------------------------------------------------------------------------


def json_lines(err: str) -> list[dict]:
    return [json.loads(line) for line in err.splitlines()]


async def test_json_log_lines_carry_the_turn_and_no_user_text(tmp_path: Path, handbook_kb, configure) -> None:
    logs = configure(THREADSAGE_LOG_FORMAT="json")
    async with service(tmp_path, "", handbook_kb) as chat:
        talk = Conversation(chat, "obs:ws:chan:logs")
        await talk.say(QUESTION)
        talk.chat = dataclasses.replace(chat, context=dataclasses.replace(chat.context, kb=BrokenKnowledgeBase()))
        await talk.say(QUESTION)
    logging.getLogger("threadsage.test").info("outside any turn")
    err = logs.getvalue()
    lines = json_lines(err)
    assert "cabin class" not in err  # user text: never at INFO
    handled = [line for line in lines if line["message"].startswith("turn handled")]
    assert [(line["session"], line["turn"], line["level"]) for line in handled] == [
        ("obs:ws:chan:logs", "m1", "INFO"),
        ("obs:ws:chan:logs", "m2", "INFO"),
    ]
    assert handled[0]["logger"] == "threadsage.observability.telemetry" and handled[1]["message"].startswith(
        "turn handled: error"
    )
    [failure] = [line for line in lines if "exc" in line]
    assert (failure["level"], failure["session"], failure["turn"]) == ("ERROR", "obs:ws:chan:logs", "m2")
    assert "Traceback" in failure["exc"] and "RuntimeError: the knowledge base is down" in failure["exc"]
    [outside] = [line for line in lines if line["message"] == "outside any turn"]
    assert set(outside) == {"time", "level", "logger", "message"} and outside["time"].endswith("+00:00")


async def test_user_text_is_logged_at_debug_only(tmp_path: Path, handbook_kb, configure) -> None:
    logs = configure(THREADSAGE_LOG_FORMAT="json", THREADSAGE_LOG_LEVEL="DEBUG")
    async with service(tmp_path, "", handbook_kb) as chat:
        await Conversation(chat, "obs:ws:chan:debug").say(QUESTION)
    lines = json_lines(logs.getvalue())
    assert {line["level"] for line in lines if "cabin class" in line["message"]} == {"DEBUG"}
    assert any(line["message"] == f"message: {QUESTION}" and line["turn"] == "m1" for line in lines)
    assert logging.getLogger("httpx").level == logging.WARNING  # its URLs hold the Telegram token


@pytest.mark.parametrize("log_format", ["json", "text"])
def test_tokens_and_configured_secrets_never_reach_the_log(configure, log_format: str) -> None:
    logs = configure(
        THREADSAGE_LOG_FORMAT=log_format,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        THREADSAGE_MCP_TOKENS=json.dumps({MCP_TOKEN: ["*"], "another-mcp-token-0123456789": []}),
    )
    log = logging.getLogger("threadsage.test")
    log.warning("tokens %s %s %s, secret %s", SLACK_TOKEN, APP_TOKEN, TELEGRAM_TOKEN, SIGNING_SECRET)
    log.warning("an editor called with %s", MCP_TOKEN)
    try:
        raise RuntimeError(f"GET https://api.telegram.org/bot{TELEGRAM_TOKEN}/getMe failed")
    except RuntimeError:
        log.exception("request failed")
    err = logs.getvalue()
    for secret in (SLACK_TOKEN, APP_TOKEN, TELEGRAM_TOKEN, SIGNING_SECRET, "AAHk9x0Yy", MCP_TOKEN):
        assert secret not in err
    assert err.count(REDACTED) == 6
    if log_format == "json":
        warning, _, failure = json_lines(err)
        assert warning["message"] == f"tokens {REDACTED} {REDACTED} {REDACTED}, secret {REDACTED}"
        assert f"bot{REDACTED}/getMe" in failure["exc"]
    else:
        assert f"WARNING threadsage.test: tokens {REDACTED}" in err and "Traceback" in err


async def test_text_log_lines_name_the_turn(tmp_path: Path, handbook_kb, configure) -> None:
    logs = configure(THREADSAGE_LOG_FORMAT="text")
    async with service(tmp_path, "", handbook_kb) as chat:
        await Conversation(chat, "obs:ws:chan:text").say(QUESTION)
    [line] = [line for line in logs.getvalue().splitlines() if "turn handled" in line]
    assert "INFO threadsage.observability.telemetry [obs:ws:chan:text m1]: turn handled: answer" in line


# --- a served process ----------------------------------------------------------------------


@pytest.mark.slow
async def test_a_served_process_logs_json_serves_metrics_and_traces_to_langsmith(tmp_path: Path) -> None:
    """`threadsage run` as operators run it, with LangSmith tracing switched on by environment
    variables only (pointed at a fake LangSmith): no code of ours is involved in tracing."""
    traced: list[bytes] = []

    def ingest_runs(path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict, dict]:
        traced.append(raw)
        return 200, {}, {}

    langsmith = JsonServer(ingest_runs)
    slack = FakeSlack().start()
    env = {
        "THREADSAGE_DATA_DIR": str(tmp_path / "data"),
        "SLACK_BOT_TOKEN": SLACK_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": slack.api_url,
        "LANGSMITH_TRACING": "true",
        "LANGSMITH_API_KEY": "lsv2_pt_test",
        "LANGSMITH_ENDPOINT": langsmith.url,
        "LANGSMITH_PROJECT": "threadsage-test",
    }
    served = serve(["run", "--demo", str(HANDBOOK)], env, tmp_path)
    try:
        async with aiohttp.ClientSession() as http:
            await served.healthy(http)
            await served.mention(http, SIGNING_SECRET, QUESTION)
            await slack.wait_for("chat.postMessage", timeout=60)
            async with http.get(f"{served.url}/metrics") as response:
                metrics = await response.text()
        code, err = served.stop()
        assert code == 0, err[-3000:]
    finally:
        if served.process.poll() is None:
            served.process.kill()
        slack.stop()
        langsmith.stop()
    assert 'threadsage_turns_total{outcome="answer",platform="slack",route="fast_retrieval"} 1.0' in metrics
    lines = [line for line in err.splitlines() if line.strip()]
    records = [json.loads(line) for line in lines if line.startswith("{")]
    assert [line for line in lines if not line.startswith("{")] == [
        line for line in lines if line.startswith("knowledge base was empty; ingested")
    ]  # the one console line of --demo; everything else is JSON
    messages = [r["message"] for r in records]
    assert any(m.startswith("Uvicorn running on") for m in messages)  # uvicorn's lines too
    [handled] = [r for r in records if r["message"].startswith("turn handled")]
    assert handled["session"].startswith("slack:") and handled["turn"] == "C1:1710000000.000001"
    assert SLACK_TOKEN not in err and SIGNING_SECRET not in err and "cabin class" not in err
    runs = b"".join(traced)
    assert b'"name":"LangGraph"' in runs and b'"name":"understand"' in runs  # the graph and its nodes


@pytest.mark.slow
def test_traces_go_to_an_opentelemetry_collector_when_asked(tmp_path: Path) -> None:
    """LANGSMITH_TRACING=true with LANGSMITH_TRACING_MODE=otel: the graph's runs leave as OTLP
    spans over HTTP (here to a fake collector), no LangSmith account needed."""
    import os
    import subprocess
    import sys

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from tests.helpers.served import OURS

    exports: list[bytes] = []

    def collect(path: str, _headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, str], str]:
        if path == "/v1/traces":
            exports.append(raw)
        return 200, {"Content-Type": "application/x-protobuf"}, ""

    collector = JsonServer(collect)
    env = {k: v for k, v in os.environ.items() if not k.startswith((*OURS, "OTEL_"))}
    env |= {
        "THREADSAGE_DATA_DIR": str(tmp_path / "data"),
        "LANGSMITH_TRACING": "true",
        "LANGSMITH_TRACING_MODE": "otel",
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url,
    }
    try:
        chat = subprocess.run(
            [sys.executable, "-m", "threadsage.cli", "chat", "--demo", str(HANDBOOK)],
            input="What is the rate limit per API key?\n",
            capture_output=True,
            text=True,
            env=env,
            timeout=240,
        )
    finally:
        collector.stop()
    assert chat.returncode == 0 and "api-style-guide" in chat.stdout, chat.stderr[-2000:]
    spans = set()
    for raw in exports:
        request = ExportTraceServiceRequest.FromString(raw)
        spans |= {s.name for r in request.resource_spans for ss in r.scope_spans for s in ss.spans}
    # the answering node's step composes the reply too (graph/build.py: followed_by)
    assert {"LangGraph", "understand", "generate"} <= spans, spans
