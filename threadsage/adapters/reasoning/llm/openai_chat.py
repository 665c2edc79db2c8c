"""A small async client for OpenAI's Chat Completions API (`POST {base_url}/chat/completions`).

One structured call (a forced function call, parsed with its schema) costs many times more
event-loop CPU through langchain-openai's `with_structured_output(...).ainvoke`, or through the
`openai` SDK, than as an aiohttp POST, `json` and a pydantic validation — and a turn makes several
(docs/performance.md, "A cheaper turn (issue 16)", "Model calls through our own client"). This is
the last, with what the SDK did that we rely on: a timeout per request,
retries with exponential backoff and jitter on connection errors, timeouts, 408, 409, 429 and 5xx
(a `Retry-After` within reason is honoured), and one error type whose message never holds the key.
"""

from __future__ import annotations

import asyncio
import json
import random
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import aiohttp
from pydantic import BaseModel
from yarl import URL

from threadsage.support.retry_after import server_wait

OPENAI_URL = "https://api.openai.com/v1"
RETRIED_STATUSES = frozenset({408, 409, 429})  # and every 5xx
MAX_RETRY_AFTER = 20.0  # seconds: a longer wait asked by the server is cut to this
MAX_BACKOFF = 8.0
REASON_CHARS = 200

Message = dict[str, Any]


class ModelError(Exception):
    """A model request that failed: its HTTP status (None for connection errors and timeouts)
    and a short reason."""

    def __init__(self, reason: str, status: int | None = None) -> None:
        super().__init__(f"model request failed ({status or 'no response'}): {reason}")
        self.status = status


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # as the model wrote it
    args: dict[str, Any] | None  # parsed, or None when the arguments are no JSON object


@dataclass(frozen=True)
class Completion:
    content: str | None
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str | None
    usage: Mapping[str, Any] | None  # prompt_tokens, completion_tokens, total_tokens

    def as_message(self) -> Message:
        """The reply as the assistant message that goes back in the next request."""
        message: Message = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message


@cache
def tool(schema: type[BaseModel]) -> dict[str, Any]:
    """`schema` as a function the model may call, built once per class: named after the class,
    described by its docstring, its parameters the JSON schema without pydantic's titles (as
    langchain's `convert_to_openai_tool` sent them)."""
    parameters = _untitled(schema.model_json_schema())
    description = parameters.pop("description", "")
    return {
        "type": "function",
        "function": {"name": schema.__name__, "description": description, "parameters": parameters},
    }


def forced(schema: type[BaseModel]) -> dict[str, Any]:
    """The `tool_choice` that makes the model call `schema`'s function."""
    return {"type": "function", "function": {"name": schema.__name__}}


class OpenAIChat:
    """One aiohttp session per client, opened on first use in the running loop; `aclose` it."""

    def __init__(self, base_url: str | None, api_key: str, timeout: float, retries: int, backoff: float = 0.5) -> None:
        self._url = (base_url or OPENAI_URL).rstrip("/") + "/chat/completions"
        self._key = api_key
        self._headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._retries = retries
        self._backoff = backoff
        self._session: aiohttp.ClientSession | None = None
        self._proxy: dict[str, Any] = {}

    async def complete(
        self,
        model: str,
        messages: Sequence[Message],
        tools: Sequence[type[BaseModel]] = (),
        tool_choice: str | dict[str, Any] | None = None,
        temperature: float = 0,
    ) -> Completion:
        request: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature}
        if tools:
            request["tools"] = [tool(schema) for schema in tools]
        if tool_choice is not None:
            request["tool_choice"] = tool_choice
        return _completion(await self._post(json.dumps(request)))

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _post(self, body: str) -> Any:
        if self._session is None:
            # as many connections as the openai SDK allows: calls in flight never queue for one
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1000), timeout=self._timeout)
            self._proxy = environment_proxy(self._url)
        for attempt in range(self._retries + 1):
            wait: float | None = None
            try:
                async with self._session.post(self._url, data=body, headers=self._headers, **self._proxy) as response:
                    raw = await response.read()
                    if response.status < 300:
                        return _json(raw)
                    error = ModelError(self._reason(raw), response.status)
                    if response.status not in RETRIED_STATUSES and response.status < 500:
                        raise error
                    wait = _retry_after(response.headers)
            except (aiohttp.ClientError, TimeoutError) as exc:
                error = ModelError("timed out" if isinstance(exc, TimeoutError) else type(exc).__name__)
            if attempt < self._retries:
                delay = min(self._backoff * 2**attempt, MAX_BACKOFF) * (1 - 0.25 * random.random())
                await asyncio.sleep(delay if wait is None else wait)
        raise error

    def _reason(self, raw: bytes) -> str:
        """The API's error message, short, with the key taken out (a 401 may echo part of it)."""
        try:
            reason = str(json.loads(raw)["error"]["message"])
        except (ValueError, KeyError, TypeError):
            reason = raw.decode(errors="replace")
        return reason.replace(self._key, "***")[:REASON_CHARS] if self._key else reason[:REASON_CHARS]


def environment_proxy(url: str) -> dict[str, Any]:
    """The proxy HTTP(S)_PROXY / NO_PROXY name for `url` (as the SDK's httpx client took it), as a
    request option; aiohttp sends credentials in its URL as Proxy-Authorization. Read once, when
    the session opens: aiohttp's `trust_env` reads the environment and ~/.netrc in a thread on
    every request, two thread hops per model call."""
    target = URL(url)
    proxy = urllib.request.getproxies().get(target.scheme)
    if not proxy or target.host is None or urllib.request.proxy_bypass(target.host):
        return {}
    return {"proxy": URL(proxy)}


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        raise ModelError("the reply is not JSON", 200) from None


def _completion(data: Any) -> Completion:
    try:
        choice = data["choices"][0]
        message = choice["message"]
        calls = tuple(
            ToolCall(str(c.get("id") or ""), str(c["function"]["name"]), *_arguments(c["function"].get("arguments")))
            for c in message.get("tool_calls") or ()
        )
        content = message.get("content")
        usage = data.get("usage")
        return Completion(
            None if content is None else str(content),
            calls,
            choice.get("finish_reason"),
            usage if isinstance(usage, Mapping) else None,
        )
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ModelError("the reply holds no choice with a message", 200) from None


def _arguments(raw: Any) -> tuple[str, dict[str, Any] | None]:
    text = raw if isinstance(raw, str) else json.dumps(raw)  # some compatible servers send an object
    try:
        parsed = json.loads(text)
    except ValueError:
        return text, None
    return text, parsed if isinstance(parsed, dict) else None


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """The server's wait in seconds (OpenAI's `retry-after-ms`, then `Retry-After`), capped."""
    try:
        milliseconds = float(headers["retry-after-ms"])
    except (KeyError, ValueError):
        milliseconds = -1.0
    if milliseconds >= 0:
        return min(milliseconds / 1000, MAX_RETRY_AFTER)
    return server_wait(headers.get("Retry-After"), MAX_RETRY_AFTER)


def _untitled(schema: Any) -> Any:
    """A JSON schema without pydantic's `title`s (a property named "title" stays: it is a dict)."""
    if isinstance(schema, dict):
        return {k: _untitled(v) for k, v in schema.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(schema, list):
        return [_untitled(v) for v in schema]
    return schema
