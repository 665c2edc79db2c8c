"""A fake OpenAI-compatible HTTP server, so the real model client is exercised over HTTP.

- `/v1/embeddings`: a hashed bag of words — texts that share words get similar vectors, which is
  enough for hybrid search to behave as it does with a real model.
- `/v1/chat/completions`: scripted per test. A request is recognised by the structured output it
  asks for (the function its `tool_choice` forces: "RouteDecision", "Verdict", …) or, otherwise, by
  its system prompt ("answer", "contextualise", "rewrite", "chat", "synthesise", "web_answer").
  `fake.script[kind]` holds what to return: a dict (tool arguments), a string (content), a
  callable taking the request, a `Failure`, or `ToolCalls` — the model calling tools it was
  offered, as OpenAI's API documents it: an assistant message with `tool_calls` and
  `finish_reason: "tool_calls"`; the next request then carries `tool` messages with the results.
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

from tests.fakes.http import ServedFake
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

DEFAULTS: dict[str, Any] = {
    "RouteDecision": {"intent": "FACT_LOOKUP", "confidence": 0.9, "reasoning": "looks like a fact"},
    "Verdict": {"grounded": 1.0, "useful": 1.0, "reasoning": "fine"},
    "SubQuestions": lambda request: {"questions": [user_text(request).removeprefix("Question: ")]},
    "answer": "According to the documents, it is described in [1].",
    # the answer's structured form, when the model is made to give it (after the tool rounds)
    "GroundedAnswer": {"answer": "According to the documents, it is described in [1].", "used": [1]},
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
    return next((str(m["content"]) for m in reversed(request["messages"]) if m["role"] == "user"), "")


def excerpt_count(request: dict) -> int:
    return len(re.findall(r"^\[(\d+)\] ", user_text(request), re.M))


def kind_of(request: dict) -> str:
    forced = request.get("tool_choice")
    if isinstance(forced, dict):  # structured output: the one function the model must call
        return forced["function"]["name"]
    system = next((str(m["content"]) for m in request["messages"] if m["role"] == "system"), "")
    # A prompt may end with the question's language named (`prompts.in_language_of`).
    return next(
        (kind for prompt, kind in TEXT_KINDS.items() if system.startswith(prompt.removesuffix(DATA))), "unknown"
    )


@dataclass
class FakeOpenAI(ServedFake):
    embedding_dim: int = 64
    latency: float = 0.0  # seconds per chat completion, like a real model's time
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
            self.authorizations.append(headers.get("Authorization", ""))
            self.proxy_authorizations.append(headers.get("Proxy-Authorization", ""))
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

    def completion(self, request: dict) -> tuple[int, dict[str, str], str]:
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
        value = entry(request) if callable(entry) else entry
        if isinstance(value, ToolCalls) or isinstance(request.get("tool_choice"), dict):
            calls = value.calls if isinstance(value, ToolCalls) else [(kind, value)]
            message = {
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
            }
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": str(value)}, "stop"
        completion = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
        }
        return 200, {}, json.dumps(completion)
