"""The language-model back-end: any OpenAI-compatible endpoint through langchain-openai.

Routing and judging use structured output (function calling, the most widely supported form among
compatible servers) on the router model, which may be a cheaper one (`THREADSAGE_ROUTER_MODEL`);
answers use the chat model, and report the excerpts they rely on as structured output too. The client retries 429s
and 5xx with backoff, and every request has a timeout.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field, ValidationError

from threadsage.adapters import prompts
from threadsage.adapters.reasoning import GroundedAnswer, ModelBusy, Passage, RouteDecision, Verdict, cited
from threadsage.config import Settings
from threadsage.observability import ERRORS, LLM_CALLS, count_tokens
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

        def model(name: str) -> ChatOpenAI:
            return ChatOpenAI(
                model=name,
                base_url=settings.openai_base_url,
                api_key=settings.openai_api_key,
                timeout=settings.llm_timeout,
                max_retries=settings.llm_retries,
                temperature=0,
            )

        self.calendar = Calendar(settings.timezone)
        self.chat_model = model(settings.chat_model)
        self.router_model = model(settings.router_model or settings.chat_model)
        self._structured_runnables: dict[type[BaseModel], Runnable[list[BaseMessage], Any]] = {}
        self.name = f"language model {settings.chat_model}" + (
            f" (router {settings.router_model})" if settings.router_model else ""
        )

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
        messages: list[BaseMessage] = [
            SystemMessage(prompts.in_language_of(prompts.ANSWER, question)),
            HumanMessage(f"Excerpts:\n{prompts.numbered(passages)}\n\nQuestion: {question}"),
        ]

        async def invoke(sent: list[BaseMessage], runnable: Runnable[list[BaseMessage], Any]) -> AIMessage:
            return cast(AIMessage, await self._invoke(self.chat_model, "text", sent, runnable))

        reply, computed = await answer_with_tools(invoke, self.chat_model, messages, self.calendar, GroundedAnswer)
        report = next((call["args"] for call in reply.tool_calls if call["name"] == GroundedAnswer.__name__), None)
        if report is None:
            text = str(reply.content).strip()
            unknown = [] if cited(text) else list(range(1, len(passages) + 1))
            return GroundedAnswer(answer=shown(text, computed), used=unknown)
        try:
            result = GroundedAnswer.model_validate(report)
        except ValidationError:
            ERRORS.labels("llm_output").inc()
            raise
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
        messages: list[BaseMessage] = [SystemMessage(prompts.in_language_of(prompts.CHAT, question))]
        for role, text in history[-6:]:
            messages.append(HumanMessage(text) if role == "user" else AIMessage(text))
        messages.append(HumanMessage(question))
        reply = await self._invoke(self.chat_model, "text", messages)
        return str(reply.content).strip()

    # --- helpers ---------------------------------------------------------------------------

    async def _text(self, system: str, user: str, model: ChatOpenAI | None = None) -> str:
        reply = await self._invoke(model or self.router_model, "text", [SystemMessage(system), HumanMessage(user)])
        return str(reply.content).strip()

    async def _structured(self, schema: type[T], system: str, user: str) -> T:
        output = await self._invoke(
            self.router_model, schema.__name__, [SystemMessage(system), HumanMessage(user)], self._runnable(schema)
        )
        result = output["parsed"]
        if output["parsing_error"] is not None or not isinstance(result, schema):
            ERRORS.labels("llm_output").inc()
            raise output["parsing_error"] or ValueError(f"the model returned no {schema.__name__}")
        return result

    def _runnable(self, schema: type[BaseModel]) -> Runnable[list[BaseMessage], Any]:
        """The router model bound to `schema`, built once per schema: building it (the tool's JSON
        schema, the parser) costs 0.8-1.2 ms of CPU on the event loop, a tenth of a turn's CPU when
        it was rebuilt on every call. include_raw keeps the response, whose usage the metrics
        count; errors are raised as before."""
        runnable = self._structured_runnables.get(schema)
        if runnable is None:
            runnable = self.router_model.with_structured_output(schema, method="function_calling", include_raw=True)
            self._structured_runnables[schema] = runnable
        return runnable

    async def _invoke(
        self,
        model: ChatOpenAI,
        kind: str,
        messages: list[BaseMessage],
        runnable: Runnable[list[BaseMessage], Any] | None = None,
    ) -> Any:
        """Every model call goes through here: within the budget, counted with its tokens."""
        if self._budget is not None and not await self._budget():
            raise ModelBusy(f"no model call left this minute for {kind}")
        LLM_CALLS.labels(model.model_name, kind).inc()
        try:
            output = await (runnable or model).ainvoke(messages)
        except Exception:
            ERRORS.labels("llm").inc()
            raise
        count_tokens(model.model_name, kind, (output["raw"] if isinstance(output, dict) else output).usage_metadata)
        return output
