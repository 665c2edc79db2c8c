"""The chat service: the seam every front-end uses: `Turn` in, `Reply`s out, through `ChatService.handle`.

Platforms convert their events into a neutral `Turn` and render neutral `Reply`s; the service knows
no platform. It owns what must hold whatever the platform: one turn at a time per session, each
message handled once, a clarification answered only while pending, once, and (by default) only by
the person who asked, and members-only knowledge read only by members (`members`).

`stream(turn)` yields the turn's events: for a clarification answer first `ACCEPTED` (the click
won), then — when the service reports progress — a `Progress` at each new step and a `Draft` with
the answer's words so far (an empty one withdraws a draft the self-check rejected; the `Reply`
replaces it), then the replies. `handle(turn)` collects the replies, for front-ends that show
nothing in between (its model calls do not stream).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Coroutine, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt

from threadsage.adapters.documents.attachments import AttachmentReader, display_name, files_read, images_read
from threadsage.adapters.reasoner import ModelBusy, Passage, TurnImage
from threadsage.chat.events import reported, reporters
from threadsage.chat.knowledge_loop import Knowledge, KnowledgeLoop
from threadsage.chat.limits import allowed
from threadsage.chat.members import MembersOnly
from threadsage.chat.observing import ClarificationCounts, TurnObserver
from threadsage.chat.recording import Recording
from threadsage.chat.redelivery import replies_already_given
from threadsage.chat.replies import answered, answers_pending, clarification_reply, outcome_of, pending_of, request_of
from threadsage.chat.turns import (
    ACCEPTED,
    IDEMPOTENCY_TTL,
    MAX_QUESTION_CHARS,
    Reply,
    ReplyKind,
    Turn,
    TurnEvent,
    fixed_notice,
    notice,
)
from threadsage.delivery.coordination import Coordinator
from threadsage.delivery.outages import ServiceUnavailable, retried_by_the_queue
from threadsage.graph.context import BrainContext
from threadsage.graph.state import ConversationState, TurnInput
from threadsage.graph.steps import run_reporting
from threadsage.i18n import DEFAULT, Language, language_of, say
from threadsage.memory.checkpoints import caching_latest_checkpoints
from threadsage.memory.sessions import thread_id
from threadsage.observability.telemetry import ERRORS, TurnScope, turn_scope
from threadsage.records.votes import FeedbackStore
from threadsage.support.handoff import Handoff

log = logging.getLogger(__name__)


def session_config(session_key: str) -> RunnableConfig:
    """The graph configuration of a session: its checkpointed thread."""
    return {"configurable": {"thread_id": thread_id(session_key)}}


@dataclass
class ChatService:
    graph: CompiledStateGraph[ConversationState, BrainContext, TurnInput, ConversationState]
    context: BrainContext
    coordinator: Coordinator
    feedback: FeedbackStore | None = None
    anyone_may_answer: bool = False
    rate_limit_per_minute: int = 20
    description: str = ""  # what the service runs on, for banners and logs
    attachments: AttachmentReader = field(default_factory=AttachmentReader)
    progress: bool = False  # yield `Progress` events: worth it when steps take seconds (a language model)
    handoff: Handoff = field(default_factory=Handoff)  # whom to point to when the documents don't know
    recording: Recording = field(default_factory=Recording)  # each turn's row for the operator console
    counts: ClarificationCounts = field(default_factory=ClarificationCounts)  # the clarification metrics
    loop: KnowledgeLoop | None = None  # stale answers, gaps that close themselves, verified answers
    _reading: set[str] = field(default_factory=set, init=False, repr=False)  # people whose files are being read

    @cached_property
    def members_only(self) -> MembersOnly:
        return MembersOnly(self.context.kb)

    async def handle(self, turn: Turn) -> list[Reply]:
        """Exactly one list of replies per new platform message; [] for a repeat delivery."""
        return [event async for event in self._stream(turn, drafts=False) if isinstance(event, Reply)]

    def stream(self, turn: Turn, drafts: bool = True) -> AsyncGenerator[TurnEvent, None]:
        """The turn's events: `ACCEPTED` when a clarification answer has won (once, however many
        clicks arrive together), the steps and drafts of its run (when the service reports
        progress; drafts only when asked for: a front-end that would not show them spares the
        streamed model call), then its replies. A retriable outage under the turn queue is raised
        as `ServiceUnavailable`; anything else ends in an apology."""
        return self._stream(turn, drafts)

    async def _stream(self, turn: Turn, drafts: bool) -> AsyncGenerator[TurnEvent, None]:
        with turn_scope(turn.session_key, turn.message_id, turn.platform) as scope:
            replies: list[Reply] = []
            language = turn.reply_language
            for observer in self.observers:
                observer.begin(turn)
            try:
                try:
                    async for event in self._events(turn, scope, drafts):
                        if isinstance(event, Reply):
                            replies.append(event)
                        yield event
                except ModelBusy:
                    log.warning("model-call budget spent: turn %s answered with a busy notice", turn.message_id)
                    replies.append(fixed_notice("busy", language))
                    yield replies[-1]
                except Exception as exc:
                    if retried_by_the_queue(exc):
                        raise ServiceUnavailable(str(exc)) from exc
                    log.exception("turn %s in %s failed", turn.message_id, turn.session_key)
                    ERRORS.labels("turn").inc()
                    replies.append(fixed_notice("apology", language))
                    yield replies[-1]
                scope.outcome = outcome_of(replies) if replies or scope.outcome == "error" else scope.outcome
                scope.route = (replies[0].route if replies else None) or "none"
                for observer in self.observers:
                    await observer.end(turn, replies, scope.outcome)
            finally:
                for observer in self.observers:  # a turn handed back to the queue, or a stream closed early
                    observer.discard(turn)

    async def _events(self, turn: Turn, scope: TurnScope, drafts: bool) -> AsyncIterator[TurnEvent]:
        if not await self.coordinator.claim(f"turn:{turn.session_key}:{turn.message_id}", IDEMPOTENCY_TTL):
            log.info("repeat delivery of %s ignored", turn.message_id)
            scope.outcome = "duplicate"
            return
        text = (turn.text or "").strip()
        language = turn.reply_language
        if turn.answer is None and not text and not turn.attachments and turn.fetch_files is None:
            yield fixed_notice("empty", language)
            return
        if turn.answer is None and turn.categories == ():
            yield fixed_notice("no_documents", language)  # refused before any model call
            return
        log.debug("message: %s", text or turn.answer)  # user text: DEBUG only
        # clicks never count
        if turn.answer is None and not await allowed(self.coordinator, turn, self.rate_limit_per_minute):
            scope.outcome = "rate_limited"
            # One notice per person and minute: a flood of messages is not answered by a flood.
            if await self.coordinator.claim(f"rate-notice:{turn.platform}:{turn.user_id}", 60.0):
                yield fixed_notice("rate_limited", language)
            return
        config = session_config(turn.session_key)
        if turn.answer is not None:
            refusal = await self._accept(turn, config)
            if refusal is not None:
                yield refusal
                return
            yield ACCEPTED
        async for event in self._reporting(self._locked(turn, text, config), drafts):
            yield event

    async def _read_files(self, turn: Turn, language: Language) -> tuple[list[Passage], list[str], list[TurnImage]]:
        """The turn's files (downloaded now when the front-end left that) and images read, one turn's
        files at a time per person in this process: at most one reader each, whatever the conversation."""
        files = (*turn.attachments, *(await turn.fetch_files() if turn.fetch_files is not None else ()))
        if not files:
            return [], [], []
        reader = f"{turn.platform}:{turn.user_id}"
        if reader in self._reading:
            return [], [say("file_reading_yours", language, name=display_name(a.name)) for a in files], []
        self._reading.add(reader)
        try:
            passages, problems = await self.attachments.read(files, language)
            return passages, problems, images_read(files, passages)
        finally:
            self._reading.discard(reader)

    async def _locked(self, turn: Turn, text: str, config: RunnableConfig) -> list[Reply]:
        """The turn under its session's lock, its files read first (a question waits for an earlier
        message's file, and is answered from it); what could not be read is said after the answer."""
        async with self.coordinator.session_lock(turn.session_key):
            language = turn.reply_language
            attached, problems, images = await self._read_files(turn, language)
            if not (text or turn.answer or attached or problems):
                return [fixed_notice("empty", language)]  # its files were none (a front-end found none to fetch)
            with caching_latest_checkpoints():
                if text or turn.answer is not None:
                    replies = await self._under_lock(turn, text, config, attached, images)
                else:
                    replies = await self._keep_files(turn, config, attached)  # kept for the questions that follow
            return [*replies, *(notice(problem, language) for problem in problems)]

    async def _reporting(self, work: Coroutine[Any, Any, list[Reply]], drafts: bool) -> AsyncIterator[TurnEvent]:
        """The replies of `work`, after (when the service reports progress) the steps its run enters
        and (when `drafts`) the answer's words as they are written (`events.reported`)."""
        if not self.progress:
            for reply in await work:
                yield reply
            return
        async for event in reported(work, drafts):
            yield event

    async def _accept(self, turn: Turn, config: RunnableConfig) -> Reply | None:
        """Decide a click before waiting for the session lock, so that the front-end can show the
        choice (or the refusal) at once: it must answer the pending clarification, and only the
        first click on it wins. A redelivered click skips this: it was accepted the first time."""
        snapshot = await self.graph.aget_state(config)
        if snapshot.values.get("turn_id") == turn.message_id:
            return None
        pending = pending_of(snapshot)
        refusal = self._refusal_of_clarification_answer(turn, pending)
        if refusal is not None:
            return refusal
        assert pending is not None
        if not await self.coordinator.claim(f"answer:{turn.session_key}:{pending.id}", IDEMPOTENCY_TTL):
            return fixed_notice("stale", _language(turn, pending))  # another click on the same question got in first
        return None

    async def _under_lock(
        self, turn: Turn, text: str, config: RunnableConfig, attached: list[Passage], images: list[TurnImage]
    ) -> list[Reply]:
        # Members-only knowledge out unless the front-end vouched for the person (under the lock: see `members`)
        turn = replace(turn, categories=await self.members_only.readable(turn.categories, turn.members_of))
        snapshot = await self.graph.aget_state(config)
        if snapshot.values.get("turn_id") == turn.message_id:  # this very turn again: see `redelivery`
            given = await replies_already_given(turn.message_id, snapshot, self.handoff, self.context.kb)
            if given is None:
                return await self._run(None, config, turn, language_of(snapshot.values.get("question")), images)
            replies, ended = given
            self._ran(turn, ended)
            return replies
        pending = pending_of(snapshot)
        if turn.answer is not None:
            # Checked again: a typed answer may have answered the question meanwhile.
            refusal = self._refusal_of_clarification_answer(turn, pending)
            if refusal is not None:
                return [refusal]
            assert pending is not None
            option = turn.answer.option
            self._answering(turn, pending, option, request_of(pending)["options"][option])
            resumed = self._resume(turn, {"option": option})
            return await self._run(resumed, config, turn, _language(turn, pending))
        if pending is not None and answers_pending(request_of(pending), turn.user_id, text, self.anyone_may_answer):
            # A typed message while a clarification is pending answers it.
            self._answering(turn, pending, None, text[:MAX_QUESTION_CHARS])
            answer = self._resume(turn, {"text": text[:MAX_QUESTION_CHARS]}, attached)
            return await self._run(answer, config, turn, _language(turn, pending), images)
        if pending is not None:  # a new question, or someone else's, replaces the pending one
            await self._abandon(turn.platform, turn.session_key, pending)
        if self.loop is not None and not attached:
            verified = await self.loop.verified_answer(text[:MAX_QUESTION_CHARS], turn.categories, language_of(text))
            if verified is not None:
                self._ran(turn, verified[1])
                return [verified[0]]
        return await self._run(self._question(turn, text, attached), config, turn, language_of(text), images)

    async def _keep_files(self, turn: Turn, config: RunnableConfig, attached: list[Passage]) -> list[Reply]:
        """Files sent without a question: their passages join the session as if a turn had ended (a
        pending clarification is dropped), and the person is asked what they want to know."""
        if not attached:
            return []  # nothing readable: the problems say why
        if (pending := pending_of(await self.graph.aget_state(config))) is not None:
            await self._abandon(turn.platform, turn.session_key, pending)
        await self.graph.aupdate_state(config, {"attached": attached}, as_node="compose")
        return [notice(files_read(attached, turn.reply_language), turn.reply_language)]

    async def last_activity(self, session_key: str) -> datetime | None:
        """When the session last changed (its latest checkpoint), for idle expiry."""
        snapshot = await self.graph.aget_state(session_config(session_key))
        return datetime.fromisoformat(snapshot.created_at) if snapshot.created_at else None

    async def has_conversation(self, session_key: str) -> bool:
        """Whether this session has any history: a thread the bot has taken part in."""
        snapshot = await self.graph.aget_state(session_config(session_key))
        return bool(snapshot.values)

    async def copy_session(self, source: str, target: str) -> bool:
        """The conversation of `source` (its latest checkpoint's values) under `target` too, for an
        answer carried elsewhere (Slack's "Share in channel", "Continue in a DM"); a target with a
        conversation of its own keeps it (False: nothing was copied)."""
        async with self.coordinator.session_lock(target):
            values = (await self.graph.aget_state(session_config(source))).values
            if not values or await self.has_conversation(target):
                return False
            await self.graph.aupdate_state(session_config(target), values, as_node="compose")
            return True

    async def documents_by_category(self, categories: tuple[str, ...] | None = None) -> dict[str, int]:
        """How many documents each category the place may read holds (None: every category)."""
        return await self.members_only.counts(categories)

    async def record_feedback(self, session_key: str, answer_ref: str, user_id: str, vote: int) -> None:
        """Store a 👍 (vote > 0) or 👎; a person's second vote on an answer replaces the first."""
        if self.feedback is not None:
            await self.feedback.record(session_key, answer_ref, user_id, vote)
            for observer in self.observers:
                await observer.voted(session_key, answer_ref)

    @property
    def knowledge(self) -> Knowledge:
        """The knowledge loop's side (stale answers, verified answers, follow-ups), apart from turns."""
        return Knowledge(self.loop)

    async def reset(self, session_key: str, platform: str) -> None:
        """Forget a session's conversation (the `/new` command)."""
        async with self.coordinator.session_lock(session_key):
            if (pending := pending_of(await self.graph.aget_state(session_config(session_key)))) is not None:
                await self._abandon(platform, session_key, pending)
            await self.checkpointer.adelete_thread(thread_id(session_key))

    @property
    def checkpointer(self) -> Any:
        """The graph's checkpointer, for retention pruning beside the service."""
        return self.graph.checkpointer

    # --- steps ---------------------------------------------------------------------------

    @property
    def observers(self) -> tuple[TurnObserver, ...]:
        """What watches the turns (`observing`): the console's record and the metrics."""
        return (self.recording, self.counts)

    def _ran(self, turn: Turn, state: dict[str, Any]) -> None:
        for observer in self.observers:
            observer.ran(turn, state)

    def _answering(self, turn: Turn, pending: Interrupt, option: int | None, label: str) -> None:
        for observer in self.observers:
            observer.answering(turn, pending, option, label)

    async def _abandon(self, platform: str, session_key: str, pending: Interrupt) -> None:
        for observer in self.observers:
            await observer.abandoned(platform, session_key, pending)

    def _refusal_of_clarification_answer(self, turn: Turn, pending: Interrupt | None) -> Reply | None:
        """The notice refusing `turn`'s answer to a clarification (one no longer pending, another
        asker's, an option it did not offer), or None to accept it."""
        answer = turn.answer
        assert answer is not None
        language = _language(turn, pending)
        if pending is None or not pending.id.startswith(answer.interrupt_id):
            return fixed_notice("stale", language)
        request = request_of(pending)
        if not self.anyone_may_answer and request["asker"] not in ("", turn.user_id):
            return fixed_notice("not_yours", language)
        if not 0 <= answer.option < len(request["options"]):
            return fixed_notice("stale", language)
        return None

    def _resume(self, turn: Turn, answer: dict[str, Any], attached: list[Passage] | None = None) -> Command[Any]:
        """Input that answers the pending clarification, stamped with this turn's id."""
        update = {"turn_id": turn.message_id} | ({"attached": attached} if attached else {})
        return Command(resume=answer, update=update)

    def _question(self, turn: Turn, text: str, attached: list[Passage]) -> TurnInput:
        question = TurnInput(
            turn_id=turn.message_id,
            question=text[:MAX_QUESTION_CHARS],
            asker=turn.user_id,
            categories=None if turn.categories is None else list(turn.categories),
        )
        if attached:
            question["attached"] = attached
        return question

    async def _run(
        self,
        graph_input: TurnInput | Command[Any] | None,
        config: RunnableConfig,
        turn: Turn,
        language: Language,
        images: Sequence[TurnImage] = (),
    ) -> list[Reply]:
        steps, drafts = reporters(language)
        context = replace(self.context, images=tuple(images))  # this run's only: never in the state
        # Each step is saved before the next one starts: a turn taken over after its worker died
        # repeats at most the step that was running, never a model call whose result was kept.
        result = await run_reporting(self.graph, graph_input, config, context, steps, drafts, durability="sync")
        if not await self.coordinator.still_holds():
            # The lock expired under us (a stall longer than its TTL) and another turn of this
            # session may be running: do not deliver over it.
            log.warning("session lock lost during a turn; its replies are dropped")
            ERRORS.labels("session_lock").inc()
            return [fixed_notice("apology", language)]
        self._ran(turn, result)
        interrupts: Sequence[Interrupt] = result.get("__interrupt__") or []
        if interrupts:
            return [clarification_reply(interrupts[0], result)]
        reply = await answered(self.handoff, self.context.kb, result)
        if self.loop is not None and reply.kind is ReplyKind.ANSWER and reply.citations:
            reply = await self.loop.told_of_changes(turn.session_key, reply)
        return [reply]


def _language(turn: Turn, pending: Interrupt | None) -> Language:
    """A click has no text of its own: it speaks the language of the question it clarifies."""
    question = turn.text or (request_of(pending)["question"] if pending is not None else None)
    return language_of(question, turn.language or DEFAULT)
