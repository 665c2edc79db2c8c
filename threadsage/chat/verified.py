"""Which verified answer a question asks for: the same words (`KnowledgeLoop.match`, shared terms)
or, failing that, the same in other words (MiniLM, `MEANING_MATCH`) — what lets an expert's saved
answer close the gap it came from when the next person asks it differently."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from threadsage.adapters.meaning import minilm, reads_meaning
from threadsage.records.knowledge import KnowledgeRecords
from threadsage.support.text import term_set

# Two questions this close by MiniLM ask the same in other words ("Quick one: how long is…" 0.98,
# "Which budget code for okapi work?" / "What is the okapi project's budget code?" 0.87); the same
# question about other people reads lower ("…do contractors get?" / "…do employees get?" 0.80).
MEANING_MATCH = 0.85

VERIFIED_FRESH_SECONDS = 5.0  # how long a process matches questions against its copy of the verified ones


@dataclass
class VerifiedQuestions:
    """The active verified answers' questions, as the term sets a turn's question is matched
    against: read from the database again after `fresh_for` seconds or a change made through the
    same records, instead of reading every verified answer (up to 500) on every turn. A verified
    answer saved in another process is therefore given here up to `fresh_for` seconds later; one
    retired or made stale elsewhere is never given, as the chosen one is read again before use
    (`KnowledgeRecords.active_verified`)."""

    records: KnowledgeRecords
    fresh_for: float = VERIFIED_FRESH_SECONDS
    _kept: list[tuple[str, str, frozenset[str]]] = field(default_factory=list)
    _read_at: float = -float("inf")
    _changes: int = -1

    async def terms(self) -> list[tuple[str, str, frozenset[str]]]:
        """(id, the question, its term set) of each active verified answer, newest first."""
        now = time.monotonic()
        if self._changes != self.records.verified_changes or now - self._read_at >= self.fresh_for:
            changes = self.records.verified_changes  # before the read: a change during it reads again
            questions = await self.records.active_questions()
            self._kept = [(ident, question, term_set(question)) for ident, question in questions]
            self._read_at, self._changes = now, changes
        return self._kept


def same_in_other_words(question: str, known: Sequence[tuple[str, str, frozenset[str]]]) -> str | None:
    """The verified answer whose question asks the same in other words ("Quick one: how long…"), by
    MiniLM's closeness of the two questions (`MEANING_MATCH`; English questions only); None."""
    if not known or not reads_meaning(question):
        return None
    matrix = minilm.vectors([question, *(theirs for _, theirs, _ in known)])
    scores = matrix[1:] @ matrix[0]
    best = int(scores.argmax())
    return known[best][0] if float(scores[best]) >= MEANING_MATCH else None
