"""The language-model back-end: any OpenAI-compatible endpoint, through our own small client
(threadsage/adapters/reasoning/llm/openai_chat.py), which costs a fraction of langchain-openai's event-loop CPU
a call (see its docstring).

Routing and judging use structured output (a forced function call, the most widely supported form
among compatible servers) on the router model, which may be a cheaper one (`THREADSAGE_ROUTER_MODEL`);
answers use the chat model, and report the excerpts they rely on as structured output too. The client
retries connection errors, timeouts, 429s and 5xx with backoff, and every request has a timeout.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError

from threadsage.adapters.reasoning.base import GroundedAnswer, ModelBusy, Passage, RouteDecision, Verdict, cited
from threadsage.adapters.reasoning.llm import prompts
from threadsage.adapters.reasoning.llm.openai_chat import Completion, Message, OpenAIChat, forced
from threadsage.observability.telemetry import ERRORS, LLM_CALLS, count_tokens
from threadsage.settings.environment import Settings
from threadsage.tools.calling import answer_with_tools, shown
from threadsage.tools.dates import Calendar

T = TypeVar("T", bound=BaseModel)
RANK_EXCERPT_CHARS = 600


class RankedExcerpts(BaseModel):
    ranking: list[int] = Field(description="Numbers of the relevant excerpts, most relevant first.")


class Translation(BaseModel):
    query: str = Field(description="The search query, translated.")


class SubQuestions(BaseModel):
    questions: list[str] = Field(description="At most 3 sub-questions.")


class LLMReasoner:
    """`budget`, when given, is asked before every model call and answers whether one more call
    fits this minute's process-wide budget."""

    def __init__(self, settings: Settings, budget: Callable[[], Awaitable[bool]] | None = None) -> None:
        self._budget = budget
        key = settings.openai_api_key
        self._client = OpenAIChat(
            settings.openai_base_url,
            key.get_secret_value() if key else "",
            timeout=settings.llm_timeout,
            retries=settings.llm_retries,
        )
        self.calendar = Calendar(settings.timezone)
        self.chat_model = settings.chat_model
        self.router_model = settings.router_model or settings.chat_model
        self.name = f"language model {settings.chat_model}" + (
            f" (router {settings.router_model})" if settings.router_model else ""
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def contextualise(self, question: str, history: Sequence[tuple[str, str]]) -> str:
        conversation = "\n".join(f"{role}: {text}" for role, text in history[-8:])
        return await self._text(prompts.CONTEXTUALISE, f"Conversation:\n{conversation}\n\nLatest message: {question}")

    async def route(self, question: str, evidence: Sequence[Passage]) -> RouteDecision:
        excerpts = prompts.numbered(evidence) or "(no excerpts found)"
        system = prompts.in_language_of(prompts.ROUTE, question)  # the clarification it may write
        return await self._structured(RouteDecision, system, f"Question: {question}\n\nExcerpts:\n{excerpts}")

    async def rank(self, question: str, passages: Sequence[Passage]) -> list[int]:
        """Excerpt numbers (from 1), most relevant first: the listwise rerank. Each excerpt is cut
        to its start, which is enough to order it and keeps the call cheap on 20 candidates."""
        shortened = [Passage(**{**p, "text": p["text"][:RANK_EXCERPT_CHARS]}) for p in passages]
        result = await self._structured(
            RankedExcerpts, prompts.RERANK, f"Question: {question}\n\nExcerpts:\n{prompts.numbered(shortened)}"
        )
        return result.ranking

    async def answer(self, question: str, passages: Sequence[Passage]) -> GroundedAnswer:
        """The answer may call the calculator and the calendar (threadsage/tools/calling.py) and
        comes as a `GroundedAnswer`. A plain-text reply (a server that ignores `tool_choice`) says
        nothing of the excerpts it relies on: the ones it cites are taken, or all when it cites none,
        and the judge checks it as before."""
        messages: list[Message] = [
            {"role": "system", "content": prompts.in_language_of(prompts.ANSWER, question)},
            {"role": "user", "content": f"Excerpts:\n{prompts.numbered(passages)}\n\nQuestion: {question}"},
        ]

        async def invoke(
            sent: list[Message], tools: Sequence[type[BaseModel]], choice: str | dict[str, Any]
        ) -> Completion:
            return await self._invoke(self.chat_model, "text", sent, tools, choice)

        reply, computed = await answer_with_tools(invoke, messages, self.calendar, GroundedAnswer)
        result = _filled(reply, GroundedAnswer)
        if result is None:
            text = (reply.content or "").strip()
            unknown = [] if cited(text) else list(range(1, len(passages) + 1))
            return GroundedAnswer(answer=shown(text, computed), used=unknown)
        return result.model_copy(update={"answer": shown(result.answer.strip(), computed)})

    async def judge(self, question: str, passages: Sequence[Passage], answer: str) -> Verdict:
        return await self._structured(
            Verdict,
            prompts.JUDGE,
            f"Question: {question}\n\nExcerpts:\n{prompts.numbered(passages)}\n\nAnswer:\n{answer}",
        )

    async def rewrite(self, question: str, passages: Sequence[Passage]) -> str:
        return await self._text(prompts.REWRITE, f"Question: {question}")

    async def translate(self, query: str, language: str) -> str:
        """The search query in `language` (a name such as "English"): one structured call on the
        router model, so a reply that is not a translation fails to parse instead of slipping through."""
        result = await self._structured(Translation, f"{prompts.TRANSLATE} Language: {language}.", f"Query: {query}")
        return result.query

    async def decompose(self, question: str) -> list[str]:
        result = await self._structured(SubQuestions, prompts.DECOMPOSE, f"Question: {question}")
        return [q for q in (" ".join(q.split()) for q in result.questions) if q][:3]

    async def chat(self, question: str, history: Sequence[tuple[str, str]]) -> str:
        messages: list[Message] = [{"role": "system", "content": prompts.in_language_of(prompts.CHAT, question)}]
        for role, text in history[-6:]:
            messages.append({"role": "user" if role == "user" else "assistant", "content": text})
        messages.append({"role": "user", "content": question})
        reply = await self._invoke(self.chat_model, "text", messages)
        return (reply.content or "").strip()

    # --- helpers ---------------------------------------------------------------------------

    async def _text(self, system: str, user: str, model: str | None = None) -> str:
        reply = await self._invoke(model or self.router_model, "text", _asked(system, user))
        return (reply.content or "").strip()

    async def _structured(self, schema: type[T], system: str, user: str) -> T:
        """`schema` filled in by the router model: a forced call of its function, validated. A
        reply without that call or with invalid arguments is the model's fault (`llm_output`)."""
        reply = await self._invoke(self.router_model, schema.__name__, _asked(system, user), (schema,), forced(schema))
        result = _filled(reply, schema)
        if result is None:
            ERRORS.labels("llm_output").inc()
            raise ValueError(f"the model returned no {schema.__name__}")
        return result

    async def _invoke(
        self,
        model: str,
        kind: str,
        messages: list[Message],
        tools: Sequence[type[BaseModel]] = (),
        tool_choice: str | dict[str, Any] | None = None,
    ) -> Completion:
        """Every model call goes through here: within the budget, counted with its tokens."""
        if self._budget is not None and not await self._budget():
            raise ModelBusy(f"no model call left this minute for {kind}")
        LLM_CALLS.labels(model, kind).inc()
        try:
            reply = await self._client.complete(model, messages, tools, tool_choice)
        except Exception:
            ERRORS.labels("llm").inc()
            raise
        count_tokens(model, kind, reply.usage)
        return reply


def _filled(reply: Completion, schema: type[T]) -> T | None:
    """`schema` as the reply's call of its function filled it in; None if it made no such call.
    Arguments that do not fit are the model's fault (`llm_output`) and raise."""
    call = next((c for c in reply.tool_calls if c.name == schema.__name__), None)
    if call is None:
        return None
    try:
        return schema.model_validate(call.args)
    except ValidationError:
        ERRORS.labels("llm_output").inc()
        raise


def _asked(system: str, user: str) -> list[Message]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
