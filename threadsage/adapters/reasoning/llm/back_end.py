"""The language-model back-end: LangChain chat models for any provider (calls.py, chat_models.py).

Routing, judging, translating and the other small decisions are structured output on the router
model, which may be a cheaper one (`THREADSAGE_ROUTER_MODEL`); answers use the chat model and report
the excerpts they rely on as structured output too. Each kind of call has its own token limit
(`THREADSAGE_MAX_TOKENS_*`). A reply that cannot be used raises (`ModelFailure`), and the graph's
node falls back to what it can still say; only the answer call reads a plain-text reply as it is,
because a server that ignores `tool_choice` answers in text that is still an answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from threadsage.adapters.reasoner import GroundedAnswer, Passage, RouteDecision, TurnImage, Verdict, cited
from threadsage.adapters.reasoning.llm import prompts
from threadsage.adapters.reasoning.llm.calls import ModelCalls
from threadsage.adapters.reasoning.llm.computing import Computations, computed, needs_computation, shown
from threadsage.adapters.reasoning.llm.seeing import Vision
from threadsage.settings.language_model import LanguageModelSettings
from threadsage.tools.dates import Calendar
from threadsage.tools.web import WebResult

T = TypeVar("T", bound=BaseModel)
RANK_EXCERPT_CHARS = 600


class RankedExcerpts(BaseModel):
    ranking: list[int] = Field(description="Numbers of the relevant excerpts, most relevant first.")


class Translation(BaseModel):
    query: str = Field(description="The search query, translated.")


class SubQuestions(BaseModel):
    questions: list[str] = Field(description="At most 3 sub-questions.")


class LLMReasoner:
    """`timezone` (`THREADSAGE_TIMEZONE`) is that of "today" in computations. `budget`, when given,
    is asked before every model call and answers whether one more call fits this minute's
    process-wide budget."""

    def __init__(
        self, settings: LanguageModelSettings, timezone: str, budget: Callable[[], Awaitable[bool]] | None = None
    ) -> None:
        self.calls = ModelCalls(settings, budget)
        self.limits = settings
        self.calendar = Calendar(timezone)
        self.chat_model = settings.chat_model
        self.vision = Vision(settings.chat_model_vision)
        self.router_model = settings.router_model or settings.chat_model
        self.name = f"language model {settings.chat_model}" + (
            f" (router {settings.router_model})" if settings.router_model else ""
        )
        for model in {self.chat_model, self.router_model}:
            self.calls.model(model, settings.max_tokens_route)  # a model that cannot be built fails at start

    async def aclose(self) -> None:
        await self.calls.aclose()

    async def contextualise(self, question: str, history: Sequence[tuple[str, str]]) -> str:
        conversation = "\n".join(f"{role}: {text}" for role, text in history[-8:])
        user = f"Conversation:\n{conversation}\n\nLatest message: {question}"
        return await self.calls.text(
            self.router_model, self.limits.max_tokens_contextualise, "contextualise", asked(prompts.CONTEXTUALISE, user)
        )

    async def route(self, question: str, evidence: Sequence[Passage]) -> RouteDecision:
        excerpts = prompts.numbered(evidence) or "(no excerpts found)"
        system = prompts.in_language_of(prompts.ROUTE, question)  # the clarification it may write
        return await self.router(RouteDecision, system, f"Question: {question}\n\nExcerpts:\n{excerpts}")

    async def rank(self, question: str, passages: Sequence[Passage]) -> list[int]:
        """Excerpt numbers (from 1), most relevant first: the listwise rerank. Each excerpt is cut
        to its start, which is enough to order it and keeps the call cheap on 20 candidates."""
        shortened = [Passage(**{**p, "text": p["text"][:RANK_EXCERPT_CHARS]}) for p in passages]
        user = f"Question: {question}\n\nExcerpts:\n{prompts.numbered(shortened)}"
        return (await self.router(RankedExcerpts, prompts.RERANK, user)).ranking

    async def answer(
        self, question: str, passages: Sequence[Passage], images: Sequence[TurnImage] = ()
    ) -> GroundedAnswer:
        """A `GroundedAnswer` from the chat model; what the calculator and the calendar computed
        for it (computing.py) — when the question asks for a computation — goes in as data and is
        shown under it. A plain-text reply says nothing of the excerpts it relies on: the ones it
        cites are taken, or all when it cites none. The question's `images` go with it to a model
        that sees (seeing.py)."""
        excerpts = prompts.numbered(passages)
        results: list[str] = []
        if needs_computation(question):
            wanted = await self.calls.structured(
                Computations,
                self.chat_model,
                self.limits.max_tokens_route,
                asked(prompts.COMPUTE, f"Excerpts:\n{excerpts}\n\nQuestion: {question}"),
            )
            results = computed(wanted, self.calendar)
        user = f"Excerpts:\n{excerpts}\n\nQuestion: {question}"
        if results:
            user += "\n\nComputed for you:\n" + "\n".join(f"- {r}" for r in results)

        def from_text(text: str) -> GroundedAnswer | None:
            unknown = [] if cited(text) else list(range(1, len(passages) + 1))
            return GroundedAnswer(answer=text, used=unknown) if text else None

        def grounded(messages: list[BaseMessage]) -> Awaitable[GroundedAnswer]:
            limit = self.limits.max_tokens_answer
            return self.calls.structured(GroundedAnswer, self.chat_model, limit, messages, from_text, words="answer")

        messages = asked(prompts.in_language_of(prompts.ANSWER, question), user)
        result = await self.vision.answered(grounded, messages, images)
        return result.model_copy(update={"answer": shown(result.answer.strip(), results)})

    async def judge(self, question: str, passages: Sequence[Passage], answer: str) -> Verdict:
        user = f"Question: {question}\n\nExcerpts:\n{prompts.numbered(passages)}\n\nAnswer:\n{answer}"
        return await self.router(Verdict, prompts.JUDGE, user, self.limits.max_tokens_judge)

    async def rewrite(self, question: str, passages: Sequence[Passage]) -> str:
        return await self.calls.text(
            self.router_model,
            self.limits.max_tokens_rewrite,
            "rewrite",
            asked(prompts.REWRITE, f"Question: {question}"),
        )

    async def translate(self, query: str, language: str) -> str:
        """The search query in `language` (a name such as "English"): one structured call on the
        router model, so a reply that is not a translation fails to parse instead of slipping through."""
        system = f"{prompts.TRANSLATE} Language: {language}."
        return (await self.router(Translation, system, f"Query: {query}", self.limits.max_tokens_translate)).query

    async def decompose(self, question: str) -> list[str]:
        result = await self.router(SubQuestions, prompts.DECOMPOSE, f"Question: {question}")
        return [q for q in (" ".join(q.split()) for q in result.questions) if q][:3]

    async def chat(self, question: str, history: Sequence[tuple[str, str]]) -> str:
        messages: list[BaseMessage] = [SystemMessage(content=prompts.in_language_of(prompts.CHAT, question))]
        for role, text in history[-6:]:
            messages.append(HumanMessage(content=text) if role == "user" else AIMessage(content=text))
        messages.append(HumanMessage(content=question))
        return await self.calls.text(self.chat_model, self.limits.max_tokens_answer, "chat", messages, words=True)

    async def web_answer(self, question: str, results: Sequence[WebResult]) -> str:
        """An answer from web results, citing them as [n] (the caller labels it as the web's)."""
        numbered = "\n\n".join(
            f"[{n}] {r.title} ({r.url})\n<result>\n{prompts.unfenced(r.content)}\n</result>"
            for n, r in enumerate(results, start=1)
        )
        system = prompts.in_language_of(prompts.WEB_ANSWER, question)
        user = f"Web results:\n{numbered}\n\nQuestion: {question}"
        return await self.calls.text(
            self.router_model, self.limits.max_tokens_answer, "web_answer", asked(system, user), words=True
        )

    async def router(self, schema: type[T], system: str, user: str, max_tokens: int | None = None) -> T:
        """`schema` filled in by the router model (the small decisions' token limit unless given)."""
        limit = max_tokens or self.limits.max_tokens_route
        return await self.calls.structured(schema, self.router_model, limit, asked(system, user))


def asked(system: str, user: str) -> list[BaseMessage]:
    return [SystemMessage(content=system), HumanMessage(content=user)]
