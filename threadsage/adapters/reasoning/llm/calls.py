"""Every model call of the language-model back-end: LangChain chat models and structured-output
runnables, built once per model, token limit and schema and reused, called within bounds.

- Time: a call gets `THREADSAGE_LLM_TIMEOUT` in all; past it the request is cancelled, which
  closes its connection, so the server stops generating for nobody.
- Retries: connection errors, 408, 409, 429 and 5xx, with exponential backoff and jitter, a
  `Retry-After` (or OpenAI's `retry-after-ms`) within reason honoured. Not a timeout, unless
  `THREADSAGE_LLM_RETRY_TIMEOUTS` says so: a server still computing the abandoned request would
  get the same work again behind it.
- Structured replies that do not parse are read as real servers send them (salvage.py), then
  asked for once more with what was wrong (the repair), then given up as `UnusableReply`: each
  node of the graph has its fallback for that.
- Budget and metrics: each call (a repair too) asks the process-wide budget first and is counted
  with its tokens; errors are `ModelFailure`s whose message never holds a key.
- Words: a call whose reply is written for the person (the answer, small talk, a synthesis, a web
  answer) carries `WORDS` in its run's metadata, and its model may stream: when the run is
  streamed with LangGraph's `messages` mode, its tokens come out as they arrive
  (threadsage/graph/drafts.py). Every other call is made on a model with streaming off and the
  `nostream` tag, so it costs nothing more in a streamed run than it did.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from langchain_core.exceptions import ModelError, ModelTimeoutError
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from openai import DefaultAioHttpClient
from pydantic import BaseModel, ValidationError

from threadsage.adapters.reasoner import ModelBusy
from threadsage.adapters.reasoning.llm.chat_models import Method, chat_model, structured_method
from threadsage.adapters.reasoning.llm.salvage import first_json_object, reply_text, salvaged
from threadsage.observability.telemetry import ERRORS, LLM_CALLS, count_tokens
from threadsage.settings.language_model import LanguageModelSettings
from threadsage.support.retry_after import server_wait
from threadsage.support.tls import tls_context

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
# Run metadata of a call whose reply is the person's words: "" for its text, else the field of its
# structured reply that holds them. LangGraph's `messages` stream mode passes it on with each token.
WORDS = "threadsage_words"
NOT_STREAMED: RunnableConfig = {"tags": ["nostream"]}  # LangGraph's tag: left out of `messages` mode
RETRIED_STATUSES = frozenset({408, 409, 429})  # and every 5xx
MAX_RETRY_AFTER = 20.0  # seconds: a longer wait asked by the server is cut to this
MAX_BACKOFF = 8.0
REASON_CHARS = 200
ASK_AGAIN = "Reply again, with {name} only"
REPAIR = "Your reply could not be read as {name}: {error}. " + ASK_AGAIN + ", every number within its stated range."


class ModelFailure(Exception):
    """A model request that failed after its retries: a short reason, never a key; the HTTP status
    when the server answered with one (seeing.py tells a refused image by it)."""

    def __init__(self, reason: str, status: int | None = None) -> None:
        super().__init__(reason)
        self.status = status


class UnusableReply(ModelFailure):
    """The model answered, but not with the structured reply asked for, even after the repair."""


class ModelCalls:
    """`budget`, when given, is asked before every call: may one more be made this minute?"""

    def __init__(
        self, settings: LanguageModelSettings, budget: Callable[[], Awaitable[bool]] | None = None, backoff: float = 0.5
    ) -> None:
        self._settings = settings
        self._budget = budget
        self._backoff = backoff
        self._secrets = [
            s.get_secret_value() for s in (settings.openai_api_key, settings.azure_openai_api_key) if s is not None
        ]
        # the openai SDK's aiohttp transport (its documented `DefaultAioHttpClient`, with the SDK's
        # pool limits: calls in flight never queue for a connection): about a fifth less CPU a call
        # than httpx's, and a streamed answer's tokens cost less (docs/performance.md)
        self._http = DefaultAioHttpClient(verify=tls_context(), timeout=settings.llm_timeout)
        self._models: dict[tuple[str, int, bool], BaseChatModel] = {}
        self._structured: dict[tuple[type[BaseModel], str, int, bool], Runnable[Any, Any]] = {}
        self._words: dict[str, RunnableConfig] = {}

    def model(self, name: str, max_tokens: int, streams: bool = False) -> BaseChatModel:
        """The chat model `name` answering at most `max_tokens` tokens, built on first use; it
        streams when a streamed run asks (`streams`) or never."""
        key = (name, max_tokens, streams)
        if key not in self._models:
            self._models[key] = chat_model(self._settings, name, max_tokens, self._http, streams)
        return self._models[key]

    async def aclose(self) -> None:
        await self._http.aclose()

    def method(self, name: str) -> Method:
        return structured_method(self._settings, name)

    async def text(
        self, model: str, max_tokens: int, kind: str, messages: Sequence[BaseMessage], words: bool = False
    ) -> str:
        """The model's reply to `messages`, as text (stripped); `words`: it is for the person."""
        config = self._config("" if words else None)
        reply = await self._call(model, kind, self.model(model, max_tokens, words), list(messages), config)
        return reply_text(reply).strip()

    async def structured(
        self,
        schema: type[T],
        model: str,
        max_tokens: int,
        messages: Sequence[BaseMessage],
        from_text: Callable[[str], T | None] | None = None,
        words: str | None = None,
    ) -> T:
        """`schema` as the model fills it in. A reply that does not parse is salvaged, else read by
        `from_text` (a plain-text reply that serves as it is), else repaired once. `words`: the
        field that holds the person's words, for a reply written for them."""
        runnable = self._runnable(schema, model, max_tokens, words is not None)
        sent = self._with_schema(schema, model, messages)
        config = self._config(words)
        reply = _raw(await self._call(model, schema.__name__, runnable, sent, config))
        if (found := salvaged(schema, reply)) is not None:
            return found
        if from_text is not None and (found := from_text(reply_text(reply).strip())) is not None:
            return found
        ERRORS.labels("llm_output").inc()
        error = _what_is_wrong(schema, reply)
        log.info("%s did not parse (%s): one repair", schema.__name__, error)
        written = reply_text(reply) or json.dumps([c["args"] for c in reply.tool_calls])
        repair = [
            *sent,
            AIMessage(content=written[:2000]),
            HumanMessage(content=REPAIR.format(name=schema.__name__, error=error)),
        ]
        reply = _raw(await self._call(model, f"{schema.__name__} repair", runnable, repair, config))
        if (found := salvaged(schema, reply)) is not None and not _echoes_the_repair(schema, reply):
            return found
        ERRORS.labels("llm_output").inc()
        raise UnusableReply(f"the model returned no usable {schema.__name__}")

    def _config(self, words: str | None) -> RunnableConfig:
        """The run configuration of a call: words for the person (and which field), or not streamed."""
        if words is None:
            return NOT_STREAMED
        if words not in self._words:
            self._words[words] = {"metadata": {WORDS: words}}
        return self._words[words]

    def _runnable(
        self, schema: type[BaseModel], model: str, max_tokens: int, streams: bool = False
    ) -> Runnable[Any, Any]:
        """The model bound to ask for `schema`, built once per schema, model and limit. A named
        function is bound with its tool converted once, here (LangChain's `with_structured_output`
        converts the schema again at every call, for its trace metadata, and parses in a thread);
        the reply is read by salvage.py whichever way it was asked for."""
        key = (schema, model, max_tokens, streams)
        if key not in self._structured:
            chat = self.model(model, max_tokens, streams)
            method = self.method(model)
            if method == "function_calling":
                self._structured[key] = chat.bind_tools([schema], tool_choice=schema.__name__)
            else:
                self._structured[key] = chat.with_structured_output(schema, method=method, include_raw=True)
        return self._structured[key]

    def _with_schema(self, schema: type[BaseModel], model: str, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """JSON mode constrains the reply to *a* JSON object: the prompt has to say which."""
        if self.method(model) != "json_mode" or not messages or not isinstance(messages[0], SystemMessage):
            return list(messages)
        shape = json.dumps(schema.model_json_schema())
        system = SystemMessage(content=f"{messages[0].content}\n\nReply with one JSON object of this schema: {shape}")
        return [system, *messages[1:]]

    async def _call(
        self, model: str, kind: str, runnable: Runnable[Any, Any], messages: list[BaseMessage], config: RunnableConfig
    ) -> Any:
        """One call within the budget and the time limit, retried as the module says."""
        if self._budget is not None and not await self._budget():
            raise ModelBusy(f"no model call left this minute for {kind}")
        LLM_CALLS.labels(model, kind).inc()
        retries = self._settings.llm_retries
        for attempt in range(retries + 1):
            try:
                async with asyncio.timeout(self._settings.llm_timeout):
                    result = await runnable.ainvoke(messages, config)
            except (TimeoutError, ModelTimeoutError):
                failure, retry, wait = ModelFailure("timed out"), self._settings.llm_retry_timeouts, None
            except Exception as exc:  # noqa: BLE001 - every provider's errors: retried or said, never raised raw
                failure, retry, wait = ModelFailure(self._reason(exc), _status(exc)), _retryable(exc), _retry_after(exc)
            else:
                _count(model, kind, result)
                return result
            if not retry or attempt == retries:
                break
            await asyncio.sleep(wait if wait is not None else self._delay(attempt))
        ERRORS.labels("llm").inc()
        raise failure

    def _delay(self, attempt: int) -> float:
        return float(min(self._backoff * 2**attempt, MAX_BACKOFF) * (1 - 0.25 * random.random()))

    def _reason(self, exc: Exception) -> str:
        """The error's class, status and message, short, with any key taken out (a 401 may echo it)."""
        status = _status(exc)
        reason = f"{type(exc).__name__}" + (f" {status}" if status else "") + f": {exc}"
        for secret in self._secrets:
            if secret:
                reason = reason.replace(secret, "***")
        return reason[:REASON_CHARS]


def _raw(result: Any) -> AIMessage:
    """The model's message, whichever runnable asked (`include_raw` wraps it in a dict)."""
    raw = result.get("raw") if isinstance(result, dict) else result
    return raw if isinstance(raw, AIMessage) else AIMessage(content="")


def _echoes_the_repair(schema: type[BaseModel], reply: AIMessage) -> bool:
    """Whether the reply to the repair only repeats it (a small model did: "Reply again, with
    GroundedAnswer only." as the answer): our words, not an answer."""
    written = reply_text(reply) + json.dumps([c["args"] for c in reply.tool_calls], ensure_ascii=False)
    return ASK_AGAIN.format(name=schema.__name__) in written


def _what_is_wrong(schema: type[BaseModel], reply: AIMessage) -> str:
    """Why the reply is not `schema`, short, for the repair request."""
    if not reply.tool_calls and not reply_text(reply).strip():
        return "the reply was empty"
    data = reply.tool_calls[0]["args"] if reply.tool_calls else first_json_object(reply_text(reply))
    if data is None:
        return "no JSON object was found in it"
    try:
        schema.model_validate(data)
    except ValidationError as exc:
        return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])[:REASON_CHARS]
    return "it was not in the form asked for"


def _status(exc: Exception) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _retryable(exc: Exception) -> bool:
    status = _status(exc)
    if status is not None:
        return status in RETRIED_STATUSES or status >= 500
    return isinstance(exc, ModelError) and exc.is_retryable  # a connection error


def _retry_after(exc: Exception) -> float | None:
    """The server's wait in seconds (OpenAI's `retry-after-ms`, then `Retry-After`), capped."""
    headers: Mapping[str, str] | None = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        milliseconds = float(headers.get("retry-after-ms", "-1"))
    except ValueError:
        milliseconds = -1.0
    if milliseconds >= 0:
        return min(milliseconds / 1000, MAX_RETRY_AFTER)
    return server_wait(headers.get("Retry-After"), MAX_RETRY_AFTER)


def _count(model: str, kind: str, result: Any) -> None:
    usage = _raw(result).usage_metadata
    if usage:
        count_tokens(
            model, kind, {"prompt_tokens": usage.get("input_tokens"), "completion_tokens": usage.get("output_tokens")}
        )
