"""The seam every front-end uses: `Turn` in, `Reply`s out, through `ChatService.handle`.

Platforms convert their events into a neutral `Turn` and render neutral `Reply`s (text, buttons);
the service knows no platform. It owns what must hold whatever the platform: one turn at a time
per session, each platform message handled once, and a clarification answered only while it is
pending, only once, and (by default) only by the person who asked.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt, StateSnapshot

from threadsage.graph.context import BrainContext
from threadsage.memory.coordination import Coordinator, current_delivery
from threadsage.memory.feedback import FeedbackStore
from threadsage.memory.outages import ServiceUnavailable, retried_by_the_queue
from threadsage.memory.sessions import thread_id
from threadsage.observability import CLARIFICATIONS, ERRORS, turn_scope

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 4000
IDEMPOTENCY_TTL = 24 * 3600.0


@dataclass(frozen=True)
class ClarificationAnswer:
    """A click on an option (`option`, 0-based) or a typed answer (`text`)."""

    interrupt_id: str
    option: int | None = None
    text: str | None = None


@dataclass(frozen=True)
class Turn:
    session_key: str
    user_id: str
    message_id: str
    text: str | None = None
    answer: ClarificationAnswer | None = None
    categories: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)  # for rendering only


class ReplyKind(StrEnum):
    ANSWER = "answer"
    CLARIFICATION = "clarification"
    NOTICE = "notice"


@dataclass(frozen=True)
class Choice:
    id: str
    label: str


@dataclass(frozen=True)
class Citation:
    number: int
    title: str
    heading: str
    source: str
    path: str
    snippet: str


@dataclass(frozen=True)
class Reply:
    kind: ReplyKind
    text: str
    citations: tuple[Citation, ...] = ()
    choices: tuple[Choice, ...] = ()
    interrupt_id: str | None = None
    confidence: float | None = None
    low_confidence: bool = False
    route: str | None = None
    trace: tuple[dict, ...] = ()


def notice(text: str) -> Reply:
    return Reply(ReplyKind.NOTICE, text)


EMPTY = "Ask me a question about the documents — your message was empty."
APOLOGY = "Sorry — something went wrong while answering. Please try again in a moment."
STALE = "That question has already been answered or is no longer open."
NOT_YOURS = "Only the person who asked can answer this clarification."
RATE_LIMITED = "You're asking faster than I can keep up — please wait a minute and ask again."


@dataclass
class ChatService:
    graph: CompiledStateGraph
    context: BrainContext
    coordinator: Coordinator
    feedback: FeedbackStore | None = None
    anyone_may_answer: bool = False
    rate_limit_per_minute: int = 20

    async def handle(self, turn: Turn, on_accepted: Callable[[], Awaitable[None]] | None = None) -> list[Reply]:
        """Exactly one list of replies per new platform message; [] for a repeat delivery.

        `on_accepted` runs, under the session lock, once a clarification answer has been accepted
        and before the graph resumes: front-ends use it to update the question at once (for one
        click only, however many arrive together)."""
        platform = turn.session_key.split(":", 1)[0]
        with turn_scope(turn.session_key, turn.message_id, platform) as scope:
            try:
                replies = await self._handle(turn, platform, on_accepted)
            except Exception as exc:
                if retried_by_the_queue(exc):
                    raise ServiceUnavailable(str(exc)) from exc
                log.exception("turn %s in %s failed", turn.message_id, turn.session_key)
                ERRORS.labels("turn").inc()
                replies = [notice(APOLOGY)]
            scope.outcome = _outcome(replies)
            scope.route = (replies[0].route if replies else None) or "none"
            return replies

    async def _handle(
        self, turn: Turn, platform: str, on_accepted: Callable[[], Awaitable[None]] | None
    ) -> list[Reply]:
        if not await self.coordinator.claim(f"turn:{turn.session_key}:{turn.message_id}", IDEMPOTENCY_TTL):
            log.info("repeat delivery of %s ignored", turn.message_id)
            return []
        text = (turn.text or "").strip()
        if turn.answer is None and not text:
            return [notice(EMPTY)]
        log.debug("message: %s", text or turn.answer)  # user text: DEBUG only
        if turn.answer is None and not await self._allowed(turn, platform):
            return [notice(RATE_LIMITED)]  # clicks never count
        config = {"configurable": {"thread_id": thread_id(turn.session_key)}}
        async with self.coordinator.session_lock(turn.session_key):
            snapshot = await self.graph.aget_state(config)
            if snapshot.values.get("turn_id") == turn.message_id:
                return await self._redelivered(turn, snapshot, config, platform)
            pending = snapshot.interrupts[0] if snapshot.interrupts else None
            if turn.answer is not None:
                refusal = self._refuse_answer(turn, pending)
                if refusal:
                    return [refusal]
                if on_accepted is not None:
                    await on_accepted()
                CLARIFICATIONS.labels(platform, "answered").inc()
                resume = {"option": turn.answer.option} if turn.answer.option is not None else {"text": turn.answer.text}
                return await self._run(self._resume(turn, resume), config, platform)
            if pending is not None and (self.anyone_may_answer or pending.value.get("asker") == turn.user_id):
                # A typed message while a clarification is pending answers it.
                CLARIFICATIONS.labels(platform, "answered").inc()
                return await self._run(self._resume(turn, {"text": text[:MAX_QUESTION_CHARS]}), config, platform)
            if pending is not None:  # someone else's question replaces the pending one
                CLARIFICATIONS.labels(platform, "abandoned").inc()
            return await self._run(self._question(turn, text), config, platform)

    async def _redelivered(self, turn: Turn, snapshot: StateSnapshot, config: dict, platform: str) -> list[Reply]:
        """This very turn again (the queue handed it to another worker): finish its run from the
        last checkpoint, or give back what the run produced — never run it a second time."""
        if snapshot.next and not snapshot.interrupts:
            log.info("turn %s resumed from its last checkpoint", turn.message_id)
            return await self._run(None, config, platform)
        log.info("turn %s had finished; its replies are given again", turn.message_id)
        return self._replies(dict(snapshot.values), snapshot.interrupts)

    async def check_answer(self, turn: Turn) -> Reply | None:
        """The notice a clarification answer would get (stale, foreign, out of range), or None —
        read-only, so a front-end can show it as a toast before answering the click. `handle`
        decides again under the session lock."""
        config = {"configurable": {"thread_id": thread_id(turn.session_key)}}
        return self._refuse_answer(turn, await self._pending(config))

    async def last_activity(self, session_key: str) -> datetime | None:
        """When the session last changed (its latest checkpoint), for idle expiry."""
        snapshot = await self.graph.aget_state({"configurable": {"thread_id": thread_id(session_key)}})
        return datetime.fromisoformat(snapshot.created_at) if snapshot.created_at else None

    async def has_conversation(self, session_key: str) -> bool:
        """Whether this session has any history: a thread the bot has taken part in."""
        snapshot = await self.graph.aget_state({"configurable": {"thread_id": thread_id(session_key)}})
        return bool(snapshot.values)

    async def record_feedback(self, session_key: str, answer_ref: str, user_id: str, vote: int) -> None:
        """Store a 👍 (vote > 0) or 👎; a person's second vote on an answer replaces the first."""
        if self.feedback is not None:
            await self.feedback.record(session_key, answer_ref, user_id, vote)

    async def reset(self, session_key: str) -> None:
        """Forget a session's conversation (the `/new` command)."""
        config = {"configurable": {"thread_id": thread_id(session_key)}}
        async with self.coordinator.session_lock(session_key):
            if await self._pending(config) is not None:
                CLARIFICATIONS.labels(session_key.split(":", 1)[0], "abandoned").inc()
            await self.graph.checkpointer.adelete_thread(thread_id(session_key))

    # --- steps ---------------------------------------------------------------------------

    async def _pending(self, config: dict) -> Interrupt | None:
        snapshot = await self.graph.aget_state(config)
        return snapshot.interrupts[0] if snapshot.interrupts else None

    async def _allowed(self, turn: Turn, platform: str) -> bool:
        """The per-person rate limit. Under the turn queue it decides once per turn: a turn
        redelivered after its worker died neither counts twice nor changes its answer."""
        def allow() -> Awaitable[bool]:
            return self.coordinator.allow(f"rate:{platform}:{turn.user_id}", self.rate_limit_per_minute, 60.0)

        if current_delivery.get() is None:
            return await allow()
        key = f"rate-decision:{turn.session_key}:{turn.message_id}"
        decided = await self.coordinator.recall(key)
        if decided is None:
            decided = "allowed" if await allow() else "limited"
            await self.coordinator.remember(key, decided, IDEMPOTENCY_TTL)
        return decided == "allowed"

    def _refuse_answer(self, turn: Turn, pending: Interrupt | None) -> Reply | None:
        answer = turn.answer
        assert answer is not None
        if pending is None or not pending.id.startswith(answer.interrupt_id):
            return notice(STALE)
        if not self.anyone_may_answer and pending.value.get("asker") not in ("", turn.user_id):
            return notice(NOT_YOURS)
        options = pending.value.get("options", [])
        if answer.option is not None and not 0 <= answer.option < len(options):
            return notice(STALE)
        if answer.option is None and not (answer.text or "").strip():
            return notice(EMPTY)
        return None

    def _resume(self, turn: Turn, answer: dict) -> Command:
        """Input that answers the pending clarification, stamped with this turn's id."""
        return Command(resume=answer, update={"turn_id": turn.message_id})

    def _question(self, turn: Turn, text: str) -> dict:
        """Input for a new question: resets every per-turn field of the state."""
        question = text[:MAX_QUESTION_CHARS]
        return {
            "turn_id": turn.message_id,
            "messages": [HumanMessage(content=question)],
            "question": question,
            "asker": turn.user_id,
            "categories": list(turn.categories),
            "standalone": question,
            "clarify_rounds": 0,
            "focus": [],
            "pinned": None,
            "search_query": question,
            "documents": [],
            "sub_questions": [],
            "answer": "",
            "best_answer": "",
            "best_score": -1.0,
            "best_documents": [],
            "hops": 0,
            "llm_calls": 0,
            "confidence": 0.0,
            "low_confidence": False,
            "citations": [],
            "trace": [],
        }

    async def _run(self, graph_input: dict | Command | None, config: dict, platform: str) -> list[Reply]:
        result = await self.graph.ainvoke(graph_input, config, context=self.context)
        if not await self.coordinator.still_holds():
            # The lock expired under us (a stall longer than its TTL) and another turn of this
            # session may be running: do not deliver over it.
            log.warning("session lock lost during a turn; its replies are dropped")
            ERRORS.labels("session_lock").inc()
            return [notice(APOLOGY)]
        interrupts = result.get("__interrupt__") or []
        if interrupts:
            CLARIFICATIONS.labels(platform, "asked").inc()
        return self._replies(result, interrupts)

    @staticmethod
    def _replies(state: dict, interrupts: Sequence[Interrupt]) -> list[Reply]:
        """What a run that ended in `state` says: its clarification, or its answer."""
        return [_clarification(interrupts[0], state)] if interrupts else [_answer(state)]


def _outcome(replies: list[Reply]) -> str:
    """The `outcome` label of a turn's replies (see threadsage_turns_total)."""
    if not replies:
        return "duplicate"
    reply = replies[0]
    if reply.kind is not ReplyKind.NOTICE:
        return reply.kind.value
    return {RATE_LIMITED: "rate_limited", APOLOGY: "error"}.get(reply.text, "notice")


def _clarification(pending: Interrupt, state: dict) -> Reply:
    value = pending.value
    return Reply(
        kind=ReplyKind.CLARIFICATION,
        text=value["prompt"],
        choices=tuple(Choice(str(i), label) for i, label in enumerate(value["options"])),
        interrupt_id=pending.id,
        route="clarify_needed",
        confidence=state.get("decision", {}).get("confidence"),
        trace=tuple(state.get("trace", [])),
    )


def _answer(state: dict) -> Reply:
    return Reply(
        kind=ReplyKind.ANSWER,
        text=state["answer"],
        citations=tuple(Citation(**c) for c in state.get("citations", [])),
        confidence=state.get("confidence"),
        low_confidence=state.get("low_confidence", False),
        route=state.get("route"),
        trace=tuple(state.get("trace", [])),
    )
