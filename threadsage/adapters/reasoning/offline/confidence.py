"""Answer, hedge or abstain: how sure the offline answerer may be that the best passage answers.

The first rule compared the question's words with the passage's, all words alike, so a question
worded differently from its document was refused although search had found the answer. These
signals do not hinge on the wording matching word for word:

- `coverage`: the share of the question's terms (those the documents use) that the best passage
  holds, misspellings included, each weighed by its
  inverse document frequency over the whole knowledge base (`KnowledgeBase.document_frequencies`):
  "plan", "policy" or "employee" in a handbook say little, the one unusual word says most;
- `unknown`: the weight of the question's terms that no document (nor attached file) uses at all — a question about
  something the documents never mention ("the capital of France") leans on such words;
- `margin`: the best passage's score over the best score of another document: search separating
  one document from the rest.

"The best passage" is the one that covers the most among those scoring within `NEAR_TIE` of the
top score: a tie is no ranking, and a file attached in the conversation is scaled to tie with the
best knowledge-base hit — taking whichever came first let a handbook passage that shares one word
of the question ("budget") speak for the file that holds them all.

With a dense model configured the knowledge base fuses both rankings, so a passage ranked first by
both carries their agreement in its fused score. The thresholds were calibrated on every public
question set at once (`bench/abstain_calibration.py`; figures in docs/performance.md).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from threadsage.adapters.questions.ambiguity import passage_terms
from threadsage.adapters.reasoner import Passage

# The number of chunks and each term's chunk count; None where the statistics are not readable.
Frequencies = Callable[[Sequence[str]], "tuple[int, dict[str, int]] | None"]

# Calibrated on all public sets (docs/performance.md, "Answer or abstain").
ANSWER_COVERAGE = 0.4  # at or above: answer
HEDGE_COVERAGE = 0.2  # between: quote the closest passage, saying it may not answer
UNKNOWN_CEILING = 0.4  # more of the question's weight than this unknown to every document: abstain
UNKNOWN_PARTLY = 0.3  # this much unknown to every document…
PARTLY_COVERAGE = 0.55  # …and less than this of the rest held by the best passage: abstain too
CLEAR_MARGIN = 1.3  # a best document this far ahead of the next answers from a lower coverage
TYPO_SIMILARITY = 0.8  # difflib ratio from which an unknown word is a misspelling of a passage's word
MIN_TYPO_CHARS = 4
MIN_UNKNOWN_CHARS = 3
NEAR_TIE = 0.98  # passages scoring this share of the top score or more are tied for it


class Sureness(StrEnum):
    ANSWER = "answer"
    HEDGE = "hedge"
    ABSTAIN = "abstain"


@dataclass(frozen=True)
class Signals:
    coverage: float
    unknown: float
    margin: float
    lead: int = 0  # the evidence's best passage (by coverage among the near-tied top scores)

    def sureness(self) -> Sureness:
        if self.unknown > UNKNOWN_CEILING:
            # Much of the question is in words no document uses: a topic they lack ("the capital
            # of France"), or a synonym they do not use ("vacation" for "annual leave") — which
            # offline, without an embedding model, cannot be told apart.
            return Sureness.ABSTAIN
        if self.unknown >= UNKNOWN_PARTLY and self.coverage < PARTLY_COVERAGE:
            # A good part unknown, and of the rest the best passage holds only some: the words it
            # shares with the question are incidental ("the largest planet in our solar *system*").
            return Sureness.ABSTAIN
        if self.coverage >= ANSWER_COVERAGE or (self.coverage >= HEDGE_COVERAGE and self.margin >= CLEAR_MARGIN):
            return Sureness.ANSWER
        return Sureness.HEDGE if self.coverage >= HEDGE_COVERAGE else Sureness.ABSTAIN


def term_weights(query: frozenset[str], frequencies: Frequencies | None) -> tuple[dict[str, float], set[str]]:
    """Each question term's BM25 IDF over the knowledge base (1.0 each without statistics), and
    the terms no chunk holds."""
    stats = frequencies(sorted(query)) if frequencies is not None else None
    if stats is None:
        return dict.fromkeys(query, 1.0), set()
    n, counts = stats
    weight = {t: math.log(1 + (n - counts.get(t, 0) + 0.5) / (counts.get(t, 0) + 0.5)) for t in query}
    # A two-letter Latin word the documents lack ("vs", "ok") is a word of the asking, not a topic.
    return weight, {t for t in query if not counts.get(t) and (len(t) >= MIN_UNKNOWN_CHARS or not t.isascii())}


def signals(query: frozenset[str], evidence: Sequence[Passage], frequencies: Frequencies | None) -> Signals:
    if not query or not evidence:
        return Signals(0.0, 1.0, 0.0)
    weight, unseen = term_weights(query, frequencies)
    total = sum(weight.values()) or 1.0
    vocabulary = {t for p in evidence for t in passage_terms(p)}
    # A term the knowledge base lacks but a passage holds (a file attached in this conversation)
    # is known; so is a misspelling of a word the passages use ("helth", "servises").
    spelled = {t: t if t in vocabulary else _spelling_of(t, vocabulary) for t in sorted(unseen)}
    unseen -= {t for t, s in spelled.items() if s is not None}
    known = sum(w for t, w in weight.items() if t not in unseen) or 1.0

    def coverage(p: Passage) -> float:
        """Coverage among the terms the documents use: a word no document has cannot be matched,
        and counts in `unknown` instead ("moment", "towards" in a paraphrase; "France" off the topic)."""
        held = passage_terms(p)
        return sum(w for t, w in weight.items() if t in held or spelled.get(t) in held) / known

    tied = [i for i, p in enumerate(evidence) if p["score"] >= NEAR_TIE * evidence[0]["score"]]
    lead = max(tied, key=lambda i: (coverage(evidence[i]), -i))
    top = evidence[lead]
    unknown = sum(weight[t] for t in unseen) / total
    others = [p["score"] for p in evidence if p["path"] != top["path"]]
    margin = top["score"] / others[0] if others and others[0] > 0 else 10.0
    return Signals(round(coverage(top), 3), round(unknown, 3), round(margin, 3), lead)


def _spelling_of(term: str, vocabulary: set[str]) -> str | None:
    """The passages' word that `term` misspells, if one is that close (same first letter)."""
    if len(term) < MIN_TYPO_CHARS:
        return None
    close = difflib.get_close_matches(term, [v for v in vocabulary if v[:1] == term[:1]], n=1, cutoff=TYPO_SIMILARITY)
    return close[0] if close else None
