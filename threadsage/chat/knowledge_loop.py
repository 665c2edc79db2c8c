"""The knowledge loop: what a sync or an ingest changed, put to use (docs/console.md, "The
knowledge loop").

- Answers that cited another version of a changed or removed document are marked stale
  (`KnowledgeRecords.went_stale`), and so are the verified answers that cite one.
- The open gaps (questions not covered, or answered with low confidence, in the last
  `THREADSAGE_GAP_WINDOW_DAYS`) are asked again, cheaply: a search first (one per distinct
  question: the same content words in any order), the answerer only where a new or changed
  document ranks in the top 3. A gap whose
  new answer cites such a document is closed; the person who asked hears it once, through the
  bot of their platform (`threadsage.chat.notify`), unless the place may no longer read the
  documents the answer cites, or the place had its `THREADSAGE_GAP_FOLLOW_UPS_PER_HOUR`. Where
  no bot of the platform runs (`threadsage ingest` on its own) the follow-up waits for the next
  one (`send_waiting`).
- An answer in a thread whose earlier answers cited an older version of a document it cites says
  so first (`told_of_changes`): a re-ask, or the question asked again after a 👎.
- A verified answer is given first to a question that matches its question closely (shared
  content words ÷ all ≥ `THREADSAGE_VERIFIED_MATCH`) when every document it cites ranks in the
  question's top 5 in the place's categories (the retrieval agrees, and scoping holds).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from threadsage.adapters.documents.loaders import doc_id_of
from threadsage.adapters.knowledge import Hit, KnowledgeBase, passage
from threadsage.adapters.knowledge.collection import members_only
from threadsage.adapters.reasoner import Passage, Reasoner
from threadsage.chat.escalations import Elsewhere
from threadsage.chat.notify import Notice, Notifier
from threadsage.chat.turns import Reply, ReplyKind
from threadsage.chat.verified import VerifiedQuestions, same_in_other_words
from threadsage.delivery.coordination import Coordinator
from threadsage.graph.nodes.compose import SNIPPET_CHARS, validate_citations
from threadsage.graph.state import Citation
from threadsage.i18n import Language, language_of, say
from threadsage.ingestion.pipeline import DocumentChange
from threadsage.records.knowledge import Gap, KnowledgeRecords, Verified
from threadsage.settings.knowledge_loop import KnowledgeLoopSettings
from threadsage.support.text import term_set

log = logging.getLogger(__name__)

TOP = 3  # a changed document must rank this high for a gap to be asked again
AGREE_K = 5  # a verified answer's documents must all rank this high
QUESTION_CHARS = 200  # of the question, quoted in a follow-up


@dataclass
class LoopReport:
    """What one round of the loop did, for the log and the figures (bench/gap_reask.py)."""

    stale_answers: int = 0
    stale_verified: int = 0
    gaps: int = 0
    searches: int = 0
    model_calls: int = 0
    closed: int = 0
    follow_ups: Counter[str] = field(default_factory=Counter)  # sent, off, scope, limit, waiting, failed
    seconds: float = 0.0

    def summary(self) -> str:
        follow_ups = ", ".join(f"{n} {outcome}" for outcome, n in sorted(self.follow_ups.items())) or "none"
        return (
            f"{self.stale_answers} answers and {self.stale_verified} verified answers stale; {self.closed} of "
            f"{self.gaps} gaps closed ({self.searches} searches, {self.model_calls} answers asked); "
            f"follow-ups: {follow_ups}"
        )


@dataclass
class KnowledgeLoop:
    records: KnowledgeRecords
    kb: KnowledgeBase
    reasoner: Reasoner
    coordinator: Coordinator
    window_days: float = 30
    follow_up: str = "thread"  # off | thread | dm
    per_hour: int = 5
    match: float = 0.6
    retrieve_k: int = 6
    notifiers: dict[str, Notifier] = field(default_factory=dict)  # by platform: the bots register
    _questions: VerifiedQuestions = field(init=False)
    elsewhere: Elsewhere = field(init=False)  # escalations to another platform's experts, through `notifiers`

    def __post_init__(self) -> None:
        self._questions = VerifiedQuestions(self.records)
        self.elsewhere = Elsewhere(self.notifiers, self.coordinator)

    @classmethod
    def from_settings(
        cls,
        settings: KnowledgeLoopSettings,
        records: KnowledgeRecords,
        kb: KnowledgeBase,
        reasoner: Reasoner,
        coordinator: Coordinator,
    ) -> KnowledgeLoop:
        return cls(
            records,
            kb,
            reasoner,
            coordinator,
            settings.gap_window_days,
            settings.gap_follow_up,
            settings.gap_follow_ups_per_hour,
            settings.verified_match,
        )

    async def changed(self, changes: Sequence[DocumentChange], now: float | None = None) -> LoopReport:
        """Mark what went stale, then ask the open gaps again of the new and changed documents."""
        started, report = time.perf_counter(), LoopReport()
        at = int((now if now is not None else time.time()) * 1000)
        for change in changes:
            label = "removed" if change.kind == "removed" else f"changed to version {change.version}"
            report.stale_answers += await self.records.went_stale(change.doc_id, change.version, label, at)
        report.stale_verified = await self._verified_went_stale(changes, at)
        touched = {c.doc_id: c for c in changes if c.kind != "removed"}
        if touched:
            await self._reask(touched, at, report)
        report.seconds = time.perf_counter() - started
        log.info("knowledge loop: %s", report.summary())
        return report

    # --- gaps ------------------------------------------------------------------------------

    async def _reask(self, touched: dict[str, DocumentChange], at: int, report: LoopReport) -> None:
        gaps = await self.records.open_gaps(at - int(self.window_days * 86_400_000))
        report.gaps = len(gaps)
        by_words: dict[frozenset[str], list[Gap]] = defaultdict(list)
        for gap in gaps:
            # The same content words in any order (the console's grouping): one search, one answer.
            query = gap.standalone or gap.question
            by_words[term_set(query) or frozenset([query])].append(gap)
        for asked in by_words.values():
            query = asked[0].standalone or asked[0].question
            report.searches += 1
            # A follow-up goes to whoever asked, wherever: never from a private channel's knowledge.
            hits = [h for h in await self.kb.search(query, max(TOP, self.retrieve_k)) if not members_only(h.category)]
            if not any(h.doc_id in touched for h in hits[:TOP]):
                continue
            passages = [passage(h) for h in hits]
            report.model_calls += 1
            grounded = await self.reasoner.answer(query, passages)
            text, citations = validate_citations(grounded.answer, passages)
            by_source = {h.source: h for h in hits}
            closing = next(
                (by_source[c["source"]] for c in citations if by_source[c["source"]].doc_id in touched), None
            )
            if closing is None:
                continue
            kept = [{**c, "category": by_source[c["source"]].category} for c in citations]  # for scoping later
            doc = {"doc_id": closing.doc_id, "title": closing.title, "path": closing.path}
            for gap in asked:
                if not await self.records.close(gap, at, doc, text, kept):
                    continue  # closed meanwhile (another process): its follow-up is that one's
                report.closed += 1
                outcome = await self._follow_up(gap, text, kept)
                report.follow_ups[outcome] += 1
                await self.records.followed_up(gap, outcome)

    async def send_waiting(self, now: float | None = None) -> Counter[str]:
        """The follow-ups of gaps closed where no bot of their platform ran (`threadsage ingest`
        alone), for the platforms whose bots run here: each claimed first, so once."""
        outcomes: Counter[str] = Counter()
        since = int(((now if now is not None else time.time()) - self.window_days * 86_400) * 1000)
        for platform in list(self.notifiers):
            for gap, text, citations in await self.records.waiting(platform, since):
                if await self.records.claim(gap):
                    outcome = await self._follow_up(gap, text, citations)
                    outcomes[outcome] += 1
                    await self.records.followed_up(gap, outcome)
        if outcomes:
            log.info("follow-ups of gaps closed while no bot ran: %s", dict(outcomes))
        return outcomes

    async def _follow_up(self, gap: Gap, text: str, kept: list[dict[str, Any]]) -> str:
        """Tell the person who asked, once, if the place allows it; what became of it."""
        if self.follow_up == "off":
            return "off"
        notifier = self.notifiers.get(gap.platform)
        if notifier is None:
            return "waiting"  # for the next bot of that platform (`send_waiting`)
        needed = {str(c.get("category", "")) for c in kept}
        citations = [_citation(c) for c in kept]
        readable = notifier.categories(gap.session_key)
        if readable is not None and not needed <= set(readable):
            return "scope"
        if not await self.coordinator.allow(f"gap-follow-up:{gap.platform}:{gap.channel}", self.per_hour, 3600.0):
            return "limit"
        language = language_of(gap.question)
        words = say("gap_closed", language, question=_short(gap.question), answer=text)
        reply = Reply(ReplyKind.ANSWER, words, tuple(citations), language=language, route="gap_follow_up")
        try:
            await notifier.notify(Notice(gap.session_key, gap.message_id, gap.user_id, reply, self.follow_up == "dm"))
        except Exception:
            log.exception("could not post the follow-up of a closed gap in %s", gap.platform)
            return "failed"
        return "sent"

    # --- answers in a thread whose documents changed ---------------------------------------

    async def told_of_changes(self, session_key: str, reply: Reply) -> Reply:
        """`reply`, saying first that documents it cites changed since the session's earlier
        answers cited them (a re-ask, or the answer again after a 👎): once per change."""
        docs = sorted({doc_id_of(c["source"]) for c in reply.citations if c.get("source")})
        titles = await self.records.changed_in_session(session_key, docs)
        if not titles:
            return reply
        note = say("doc_changed", reply.language, titles=", ".join(f"“{t}”" for t in titles))
        return dataclasses.replace(reply, text=f"{note}\n\n{reply.text}")

    # --- verified answers ------------------------------------------------------------------

    async def _verified_went_stale(self, changes: Sequence[DocumentChange], at: int) -> int:
        versions = {c.doc_id: c for c in changes}
        stale = 0
        for kept in await self.records.verified(active_only=True):
            for cited in kept.citations:
                change = versions.get(cited.get("doc", ""))
                if change is not None and change.version != cited.get("version"):
                    label = "removed" if change.kind == "removed" else f"changed to version {change.version}"
                    await self.records.verified_stale(kept.id, f"{cited.get('title', '')}: {label}", at)
                    stale += 1
                    break
        return stale

    async def verified_answer(
        self, question: str, categories: Sequence[str] | None, language: Language
    ) -> tuple[Reply, dict[str, Any]] | None:
        """The verified answer for `question`, with the state its turn records; None when none
        matches closely, or the retrieval (in the place's categories) does not find the documents
        it cites (an expert's own answer cites none)."""
        wanted = term_set(question)
        if not wanted:
            return None
        best, closeness = None, 0.0
        known = await self._questions.terms()
        for ident, _, theirs in known:
            score = len(wanted & theirs) / len(wanted | theirs) if theirs else 0.0
            if score > closeness:
                best, closeness = ident, score
        if best is None or closeness < self.match:
            best = await asyncio.to_thread(same_in_other_words, question, known)
        if best is None:
            return None
        kept = await self.records.active_verified(best)
        if kept is None:  # retired or stale since this process read the questions
            return None
        docs = [c.get("doc", "") for c in kept.citations]
        hits = {h.doc_id: h for h in reversed(await self.kb.search(question, AGREE_K, categories))} if docs else {}
        if not all(d in hits for d in docs):
            return None  # an answer from documents holds while the search still finds them (an expert's cites none)
        await self.records.used(kept.id, int(time.time() * 1000))
        return _verified_reply(kept, [hits[d] for d in docs], language)


def _verified_reply(kept: Verified, hits: list[Hit], language: Language) -> tuple[Reply, dict[str, Any]]:
    passages: list[Passage] = [passage(h) for h in hits]
    citations = [
        Citation(
            number=n,
            title=h.title,
            heading=str(c.get("heading") or h.heading),
            source=h.source,
            path=h.path,
            snippet=" ".join(h.text.split())[:SNIPPET_CHARS],
            url=h.url,
        )
        for n, (h, c) in enumerate(zip(hits, kept.citations, strict=True), start=1)
    ]
    day = datetime.fromtimestamp(kept.verified_at / 1000, UTC).strftime("%Y-%m-%d")
    text = f"{kept.answer}\n\n{say('verified', language, who=kept.verified_by, day=day)}"
    reply = Reply(ReplyKind.ANSWER, text, tuple(citations), route="verified", language=language)
    return reply, {"answer": text, "citations": citations, "documents": passages, "route": "verified"}


def _citation(kept: dict[str, Any]) -> Citation:
    """A citation as a closed gap keeps it (with its document's category, for scoping)."""
    return Citation(
        number=int(kept["number"]),
        title=str(kept["title"]),
        heading=str(kept.get("heading", "")),
        source=str(kept["source"]),
        path=str(kept.get("path", "")),
        snippet=str(kept.get("snippet", "")),
        url=str(kept.get("url", "")),
    )


def _short(question: str) -> str:
    flat = " ".join(question.split())
    return flat if len(flat) <= QUESTION_CHARS else flat[: QUESTION_CHARS - 1].rstrip() + "…"


@dataclass(frozen=True)
class Knowledge:
    """The knowledge loop as the bots and the processes meet it, apart from the turns of
    `ChatService` (`ChatService.knowledge`): nothing happens without a loop (no database for its
    records)."""

    loop: KnowledgeLoop | None

    def register(self, platform: str, notifier: Notifier) -> None:
        """How the bot of `platform` reaches its places unasked (a gap that closed, an escalation
        from another platform and its answer)."""
        if self.loop is not None:
            self.loop.notifiers[platform] = notifier

    @property
    def elsewhere(self) -> Elsewhere | None:
        """Escalations to the experts of another platform (`escalations`); None without a loop."""
        return self.loop.elsewhere if self.loop is not None else None

    def reaches(self, platform: str) -> bool:
        """Whether a question may go to experts on `platform`: its bot runs here (logged once when not)."""
        return self.loop is not None and self.loop.elsewhere.reaches(platform)

    async def changed(self, changes: list[DocumentChange]) -> None:
        """A sync or an ingest changed the documents: the loop's turn."""
        if self.loop is not None:
            await self.loop.changed(changes)

    async def stale_question(self, session_key: str, answer_ref: str) -> str | None:
        """After a 👎: the question of the answer `answer_ref`, when that answer cited a document
        that changed since — the bots ask it again in the thread (`told_of_changes` says why)."""
        return await self.loop.records.stale_question(session_key, answer_ref) if self.loop is not None else None

    async def save_verified(self, session_key: str, answer_ref: str, by: str) -> str:
        """A curator's "Save as verified answer" (the bot checked who clicked): "saved", or why
        not — "stale" (a cited document changed since), "gone" (no such answer recorded)."""
        if self.loop is None:
            return "gone"
        return await self.loop.records.verify_answer(session_key, answer_ref, by, int(time.time() * 1000))

    async def keep_answer(self, question: str, answer: str, by: str) -> str:
        """An expert's reply kept as the verified answer to the question they answered: "saved",
        or "gone" where the knowledge loop does not run (no records)."""
        if self.loop is None:
            return "gone"
        await self.loop.records.keep_answer(question, answer, by, int(time.time() * 1000))
        return "saved"

    async def escalated(self, ident: str, where: tuple[str, str, str], question: str, experts: str) -> None:
        """A question sent to the experts, for the console (nothing where no records are kept)."""
        if self.loop is not None:
            await self.loop.records.escalated(ident, where, question, experts, int(time.time() * 1000))

    async def expert_replied(self, ident: str, expert: str) -> None:
        if self.loop is not None:
            await self.loop.records.expert_replied(ident, expert, int(time.time() * 1000))

    async def send_waiting(self) -> None:
        """The follow-ups of gaps an ingest closed where no bot ran, through the bots registered here."""
        if self.loop is not None:
            await self.loop.send_waiting()
