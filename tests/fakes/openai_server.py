"""A fake OpenAI-compatible HTTP server, so the real model client is exercised over HTTP.

- `/v1/embeddings`: a hashed bag of words — texts that share words get similar vectors, which is
  enough for hybrid search to behave as it does with a real model.
- `/v1/chat/completions`: scripted per test. A request is recognised by its system prompt
  ("answer", "contextualise", "rewrite", "chat", "synthesise", "web_answer") or else by the
  structured output it asks for (the function its `tool_choice` names: "RouteDecision",
  "Verdict", …). `fake.script[kind]` holds what to return: a dict (the named function's
  arguments, or the JSON content a `response_format` asks for), a string (content), a callable
  taking the request, a `Failure`, or `ToolCalls` — the model calling tools it was offered, as
  OpenAI's API documents it: an assistant message with `tool_calls` and `finish_reason:
  "tool_calls"`. A string scripted for a request that names a function comes back as content:
  what a server that ignores `tool_choice` sends.

Real servers' habits, each switched on by name in `fake.habits` (and each met by a test through
the real bot, tests/graph/test_real_habits.py). What is documented (OpenAI's API reference, Chat
Completions) is the request and the reply's shape; these are the ways real servers keep to the
shape and not to the rest:
- `ignores_tool_choice`: a request naming a function gets plain content instead of the call
  (llama-cpp-python's server without a function-calling chat format).
- `json_then_text`: … and that content is the JSON object followed by an explanation.
- numbers out of range need no habit: script them (`{"useful": 2}`); grammar-constrained servers
  enforce a JSON shape, never a number's bounds.
- `never_stops`: the reply goes on until the request's token limit (`max_tokens`, or
  `max_completion_tokens`, which OpenAI reads) and ends with `finish_reason: "length"`; a request
  with no limit runs to CONTEXT_TOKENS, `token_seconds` a token.
- `rejects_response_format`: HTTP 500 for `response_format` of type `json_schema` (llama.cpp).
- `rejects_images`: HTTP 400 for a request whose content holds an `image_url` part, as OpenAI
  answers it for a model without vision ("Invalid content type. image_url is only supported by
  certain models.", an `invalid_request_error`); llama.cpp's server without its projector and vLLM
  answer 400 too.

A user message's content is a string, or a list of parts (`{"type": "text", "text": …}`,
`{"type": "image_url", "image_url": {"url": …}}`, a data URL for an image sent inline), as the API
reference documents for vision: `user_text` reads its text parts, `image_urls` its images.
- a slow first token: `first_token_seconds` before anything is sent; a client that closes the
  connection meanwhile is counted in `abandoned`, by kind, and gets nothing.

Streaming, as OpenAI's API reference documents it (Chat Completions, "stream": true): the reply
comes as server-sent events, `data: {chat.completion.chunk}` each, then `data: [DONE]`. The first
chunk's delta holds the role; then each token is a chunk — a delta of `content`, or for a function
call a first delta with the call's index, id, type and name and empty `arguments`, then deltas of
`arguments` alone; the last chunk has an empty delta and the `finish_reason`; a request with
`stream_options: {"include_usage": true}` gets one more chunk with empty `choices` and the `usage`.
A token is a word with its leading space ("a word a token", as for a reply that never stops).
- `first_token_seconds`, then `tokens_per_second`: a realistic pace (0: as fast as it goes). With a
  pace set, a reply that is not streamed takes the same time in all (a real server computes it
  whole before it answers).
- `DiesMidway` scripted for a kind: the reply stops after some tokens and the connection closes
  without the end (a server killed or out of memory mid-reply); not streamed, the connection is
  dropped before any answer.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.http import DROP, ServedFake, Slow, Streamed
from threadsage.adapters.reasoning.llm import prompts

TEXT_KINDS = {
    prompts.ANSWER: "answer",
    prompts.CONTEXTUALISE: "contextualise",
    prompts.REWRITE: "rewrite",
    prompts.CHAT: "chat",
    prompts.SYNTHESISE: "synthesise",
    prompts.WEB_ANSWER: "web_answer",
}
DATA = prompts.DATA_NOT_INSTRUCTIONS
HABITS = frozenset(
    {"ignores_tool_choice", "json_then_text", "never_stops", "rejects_response_format", "rejects_images"}
)
IMAGES_REFUSED = {
    "error": {
        "message": "Invalid content type. image_url is only supported by certain models.",
        "type": "invalid_request_error",
        "param": "messages.[1].content.[1].type",
        "code": None,
    }
}
CONTEXT_TOKENS = 4096  # where a reply with no token limit stops at last
RAMBLE = "and furthermore"  # what a reply that never stops keeps writing, a token a word

DEFAULTS: dict[str, Any] = {
    "RouteDecision": {"intent": "FACT_LOOKUP", "confidence": 0.9, "reasoning": "looks like a fact"},
    "Verdict": {"grounded": 1.0, "useful": 1.0, "reasoning": "fine"},
    "SubQuestions": lambda request: {"questions": [user_text(request).removeprefix("Question: ")]},
    "answer": {"answer": "According to the documents, it is described in [1].", "used": [1]},
    "Computations": {"calculations": [], "date_questions": []},
    "contextualise": lambda request: user_text(request).rsplit("Latest message: ", 1)[-1],
    "rewrite": lambda request: user_text(request).removeprefix("Question: "),
    "chat": "Hello! Ask me about the documents.",
    "StepResult": lambda request: {"answer": "Found in [1].", "found": excerpt_count(request) > 0},
    "Replan": {"questions": []},
    "synthesise": "Both sides, from the findings [1][2].",
    "web_answer": "The web says so [1].",
    # no translation unless a test scripts one: the query comes back as it was, and is searched as asked
    "Translation": lambda request: {"query": user_text(request).removeprefix("Query: ")},
}

STRUCTURED = [kind for kind in DEFAULTS if kind[0].isupper()]


@dataclass
class Failure:
    """Answer with an HTTP error, garbage, or after a delay. `headers` go with it: OpenAI's rate
    limit errors (429) tell how long to wait in `Retry-After`."""

    status: int = 500
    body: str = '{"error": {"message": "internal error", "type": "server_error"}}'
    delay: float = 0.0
    times: int = 1_000_000  # then the script's next entry (or the default) applies
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class DiesMidway:
    """The reply `value` (as a script entry) that stops after `tokens` tokens, its connection closed."""

    value: Any
    tokens: int = 4


@dataclass
class ToolCalls:
    """The model calling tools: (tool name, arguments) pairs."""

    calls: list[tuple[str, dict]]


def bag_of_words_vector(text: str, dim: int) -> list[float]:
    vector = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % dim] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def user_text(request: dict) -> str:
    return next((_text(m["content"]) for m in reversed(request["messages"]) if m["role"] == "user"), "")


def _text(content: str | list[dict]) -> str:
    """A message's text: the content itself, or its text parts joined."""
    return content if isinstance(content, str) else "\n".join(p["text"] for p in content if p["type"] == "text")


def image_urls(request: dict) -> list[str]:
    """The URLs of the image parts of the request's user messages (a data URL for an inline image)."""
    return [
        part["image_url"]["url"]
        for m in request["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for part in m["content"]
        if part["type"] == "image_url"
    ]


def excerpt_count(request: dict) -> int:
    return len(re.findall(r"^\[(\d+)\] ", user_text(request), re.M))


def forced_function(request: dict) -> str | None:
    """The function the request's `tool_choice` names: its structured output."""
    forced = request.get("tool_choice")
    return str(forced["function"]["name"]) if isinstance(forced, dict) else None


def response_format(request: dict) -> str | None:
    form = request.get("response_format")
    return str(form.get("type")) if isinstance(form, dict) else None


def kind_of(request: dict) -> str:
    system = next((str(m["content"]) for m in request["messages"] if m["role"] == "system"), "")
    # A prompt may end with the question's language named (`prompts.in_language_of`).
    kind = next((kind for prompt, kind in TEXT_KINDS.items() if system.startswith(prompt.removesuffix(DATA))), None)
    if kind is not None:
        return kind
    if forced := forced_function(request):
        return forced
    form = request.get("response_format")
    if isinstance(form, dict) and form.get("type") == "json_schema":
        return str(form["json_schema"]["name"])
    # JSON mode: the schema is in the system prompt, with its title
    return next((name for name in STRUCTURED if f'"title": "{name}"' in system), "unknown")


def token_limit(request: dict) -> int:
    """The reply's limit as the request sets it (either field), else the context's end."""
    limit = request.get("max_tokens") or request.get("max_completion_tokens")
    return int(limit) if limit else CONTEXT_TOKENS


@dataclass
class FakeOpenAI(ServedFake):
    embedding_dim: int = 64
    latency: float = 0.0  # seconds per chat completion, like a real model's time
    habits: set[str] = field(default_factory=set)  # of HABITS
    first_token_seconds: float = 0.0
    token_seconds: float = 0.0  # per token of a reply that never stops
    tokens_per_second: float = 0.0  # the pace of every reply after its first token (0: no wait)
    abandoned: list[str] = field(default_factory=list)  # kinds of the requests the client gave up on
    # each completion's kind and its own time: to its first token (the whole reply when not streamed), in all
    own_seconds: list[tuple[str, float, float]] = field(default_factory=list)
    script: dict[str, Any] = field(default_factory=dict)
    requests: list[tuple[str, dict]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)  # each request's Authorization header
    proxy_authorizations: list[str] = field(default_factory=list)  # ... and Proxy-Authorization (as a proxy)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def chat_kinds(self) -> list[str]:
        """The kinds of the chat completions received so far, in order."""
        return [kind_of(body) for path, body in self.requests if path.endswith("/chat/completions")]

    def _respond(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, str], Any]:
        body = json.loads(raw)
        with self._lock:
            self.requests.append((path, body))
            named = {name.lower(): value for name, value in headers.items()}  # HTTP names are case-blind
            self.authorizations.append(named.get("authorization", ""))
            self.proxy_authorizations.append(named.get("proxy-authorization", ""))
        if path.endswith("/embeddings"):
            return 200, {}, self.embeddings(body)
        if path.endswith("/chat/completions"):
            return self.completion(body)
        return 404, {}, {"error": {"message": "no such route"}}

    def embeddings(self, body: dict) -> dict:
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": bag_of_words_vector(str(t), self.embedding_dim)}
            for i, t in enumerate(inputs)
        ]
        return {
            "object": "list",
            "data": data,
            "model": body.get("model", "fake"),
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }

    def completion(self, request: dict) -> tuple[int, dict[str, str], Any]:
        assert self.habits <= HABITS, f"unknown habits: {self.habits - HABITS}"
        kind = kind_of(request)
        with self._lock:
            entry = self.script.get(kind, DEFAULTS.get(kind, ""))
            if isinstance(entry, list):  # a sequence of responses, one per call, the last repeats
                entry = entry.pop(0) if len(entry) > 1 else entry[0]
            if isinstance(entry, Failure):
                entry.times -= 1
                if entry.times <= 0:
                    self.script.pop(kind, None)
        if self.latency:
            time.sleep(self.latency)
        if isinstance(entry, Failure):
            time.sleep(entry.delay)
            return entry.status, entry.headers, entry.body
        if "rejects_images" in self.habits and image_urls(request):
            return 400, {}, IMAGES_REFUSED
        if "rejects_response_format" in self.habits and response_format(request) == "json_schema":
            return (
                500,
                {},
                {"error": {"message": "response_format json_schema is not supported", "type": "server_error"}},
            )
        dies = entry if isinstance(entry, DiesMidway) else None
        value = dies.value if dies is not None else entry
        value = value(request) if callable(value) else value
        message, finish = self.message(request, value)
        usage = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
        if "never_stops" in self.habits:
            message, finish, usage["completion_tokens"] = rambling(message, token_limit(request))
            time.sleep(self.token_seconds * usage["completion_tokens"])
        if request.get("stream"):
            whole = len(tokens_of(message)) / self.tokens_per_second if self.tokens_per_second else 0.0
            first = self.latency + self.first_token_seconds
            self.own_seconds.append((kind, first, first + whole))
            return 200, {}, self.streamed(request, kind, message, finish, usage, dies)
        if dies is not None:
            return DROP, {}, ""
        paced = self.first_token_seconds
        if self.tokens_per_second:
            usage["completion_tokens"] = len(tokens_of(message))
            paced += usage["completion_tokens"] / self.tokens_per_second
        self.own_seconds.append((kind, self.latency + paced, self.latency + paced))
        completion = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        if paced:
            return 200, {}, Slow(paced, json.dumps(completion), lambda: self.abandoned.append(kind))
        return 200, {}, json.dumps(completion)

    def streamed(
        self, request: dict, kind: str, message: dict, finish: str, usage: dict, dies: DiesMidway | None
    ) -> Streamed:
        """The reply as OpenAI streams it (the module's docstring): a chunk per token."""
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time())}
        base["model"] = request.get("model", "fake")

        def chunk(delta: dict, finish_reason: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            return b"data: " + json.dumps({**base, "choices": [choice]}).encode() + b"\n\n"

        calls = message.get("tool_calls")
        pieces = [chunk({"role": "assistant", "content": None if calls else ""})]
        if calls:
            call = calls[0]
            name = call["function"]["name"]
            header = {"index": 0, "id": call["id"], "type": "function", "function": {"name": name, "arguments": ""}}
            pieces.append(chunk({"tool_calls": [header]}))
        tokens = tokens_of(message)
        for token in tokens:
            if calls:
                pieces.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": token}}]}))
            else:
                pieces.append(chunk({"content": token}))
        pieces.append(chunk({}, finish))
        if (request.get("stream_options") or {}).get("include_usage"):
            usage = {**usage, "completion_tokens": len(tokens)}
            pieces.append(b"data: " + json.dumps({**base, "choices": [], "usage": usage}).encode() + b"\n\n")
        pieces.append(b"data: [DONE]\n\n")
        pace = 1 / self.tokens_per_second if self.tokens_per_second else 0.0
        cut = None if dies is None else min(len(pieces) - 2, 2 + dies.tokens)
        return Streamed(self.first_token_seconds, pieces, pace, lambda: self.abandoned.append(kind), cut)

    def message(self, request: dict, value: Any) -> tuple[dict, str]:
        """The assistant message for a scripted value, and its finish reason, as the habits have it."""
        forced = forced_function(request)
        text_only = self.habits & {"ignores_tool_choice", "json_then_text"}
        if isinstance(value, ToolCalls) or (forced and isinstance(value, dict) and not text_only):
            calls = value.calls if isinstance(value, ToolCalls) else [(forced, value)]
            return {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{n}",
                        "type": "function",
                        "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
                    }
                    for n, (name, args) in enumerate(calls, start=1)
                ],
            }, "tool_calls"
        content = value if isinstance(value, str) else json.dumps(value)
        if "json_then_text" in self.habits and not isinstance(value, str):
            content += "\n\nThis JSON object answers the request: I hope it helps."
        return {"role": "assistant", "content": content}, "stop"


_TOKEN = re.compile(r"\s*\S+")


def tokens_of(message: dict) -> list[str]:
    """The reply's text (or its one call's arguments) as tokens: a word with its leading spaces."""
    calls = message.get("tool_calls")
    text = calls[0]["function"]["arguments"] if calls else (message.get("content") or "")
    found = _TOKEN.findall(text)
    if found and len(text) > sum(map(len, found)):
        found[-1] += text[sum(map(len, found)) :]  # trailing spaces go with the last token
    return found


def rambling(message: dict, limit: int) -> tuple[dict, str, int]:
    """The message as a reply that never stopped by itself: its text (or its call's arguments)
    followed by words until `limit` tokens (a word a token), cut there, `finish_reason: "length"`."""
    calls = message.get("tool_calls")
    start = calls[0]["function"]["arguments"].removesuffix("}") if calls else (message.get("content") or "")
    words = start.split()
    text = " ".join([*words, *(RAMBLE.split() * limit)][:limit])
    if calls:
        calls = [{**calls[0], "function": {**calls[0]["function"], "arguments": text}}]
        return {**message, "tool_calls": calls}, "length", limit
    return {**message, "content": text}, "length", limit
