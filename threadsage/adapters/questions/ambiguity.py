"""When does a question need asking back? Read off the retrieved evidence, without a model.

Three signs, any suffices:
- the best passages of different documents answer the question about equally well, are named by
  its words, and the question names nothing that tells them apart ("reset my password": the VPN
  page and the e-mail page both have a "Resetting your password" section);
- *sibling sections*: two documents of the same kind (their titles share words: "Expenses policy –
  Lisbon office", "Expenses policy – Toronto office") each have a section under the same heading
  that matches the question nearly as well as the best passage, and the question names neither
  side ("What is the daily meal allowance?"), and each section holds half of the question's terms
  (a shared "What you can claim" is no reason to ask about a project budget). This one holds even
  when a summary page that mentions both ranks first — the summary is where people get the wrong
  one of the two numbers.
- *parallel answers*: the best passages of two or more documents each hold about as much of the
  question (its terms weighed by rarity, as the offline answerer weighs them), score within 15%
  of each other, share vocabulary beyond the question's words (parallel sections, not two
  topics), do not give the same figures, and between them fill most of the evidence: search finds
  the question answered again and again in these documents and nowhere else. The question names
  nothing that tells them apart — a word of one's title that the other's passage uses too ("the
  health plan" where both plans speak of the insurer's health services) tells nothing.
  Measured on every public set (docs/performance.md): one passage each among unrelated hits is
  two topics that share the question's words far more often than two readings of it.
  Nothing here depends on what the documents are called or how their sections are headed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from threadsage.adapters.documents.attachments import SOURCE_PREFIX
from threadsage.adapters.reasoner import MAX_OPTION_CHARS, Passage, passage_label
from threadsage.support.text import SENTENCE_BREAK, term_set

# Another document is a real alternative when its best passage scores at least this share of the top.
CLOSE_SCORE_RATIO = 0.6
MAX_OPTIONS = 3
SIBLING_COVERAGE = 0.5  # each sibling section must answer the question, not merely share a heading
ANSWERING = 0.4  # the best-covering document holds this weighted share of the question or more
ANSWERING_SLACK = 0.3  # and each other one nearly as much
EQUAL_SCORE_RATIO = 0.85  # and score this close to the best one
COMMON_NAME = 0.25  # a name word weighing less than this share of the question's rarest word is common
DOMINANT = 0.8  # share of the evidence's passages that come from the documents asked about
SAME_TOPIC = 0.1  # Jaccard of the two passages' terms beyond the question's: parallel sections, not two topics
_FIGURE = re.compile(r"[$€£¥]?\d[\d,]*(?:\.\d+)?%?")


def passage_terms(p: Passage) -> frozenset[str]:
    return term_set(f"{p['title']} {p['heading']} {p['text']}")


def names(p: Passage) -> frozenset[str]:
    """The terms a passage is named by: its document title and heading path."""
    return term_set(f"{p['title']} {p['heading']}")


def option(p: Passage) -> str:
    label = passage_label(p)
    return label if len(label) <= MAX_OPTION_CHARS else label[: MAX_OPTION_CHARS - 1].rstrip() + "…"


def alternatives(
    query: frozenset[str], evidence: Sequence[Passage], weights: Mapping[str, float] | None = None
) -> list[Passage]:
    """The passages to offer as options (2–3), or [] when the question is clear enough. `weights`:
    each query term's weight (its rarity in the knowledge base); all alike without."""
    if not evidence or _answered_by_a_file(query, evidence):
        return []
    return (
        _indistinguishable_documents(query, evidence)
        or _sibling_sections(query, evidence)
        or _parallel_answers(query, evidence, weights or dict.fromkeys(query, 1.0))
    )


def _answered_by_a_file(query: frozenset[str], evidence: Sequence[Passage]) -> bool:
    """A file attached in this conversation that holds every term of the question answers it:
    the person sent it for this, so documents that match too are no reason to ask back. (Its
    score is ranked among the attached passages only, so it cannot be compared with theirs.)"""
    return any(p["source"].startswith(SOURCE_PREFIX) and query <= passage_terms(p) for p in evidence)


def _best_per_document(evidence: Sequence[Passage]) -> list[Passage]:
    best: dict[str, Passage] = {}
    for p in evidence:
        best.setdefault(p["path"], p)
    return list(best.values())


def _indistinguishable_documents(query: frozenset[str], evidence: Sequence[Passage]) -> list[Passage]:
    """The best passage of each document that answers the question as well as the top one and
    that the question gives no means to tell apart from it."""
    top, *others = _best_per_document(evidence)
    top_covered = query & passage_terms(top)
    top_names = names(top)
    if not query & top_names:
        return []  # the best match merely mentions the topic; nothing to choose between
    chosen = [top]
    for other in others:
        if other["score"] < CLOSE_SCORE_RATIO * top["score"]:
            break
        other_names = names(other)
        about_the_question = bool(query & other_names)
        names_one_side = query & (top_names ^ other_names)
        if about_the_question and top_covered <= passage_terms(other) and not names_one_side:
            chosen.append(other)
    return chosen[:MAX_OPTIONS] if len(chosen) >= 2 else []


def _sibling_sections(query: frozenset[str], evidence: Sequence[Passage]) -> list[Passage]:
    """Sections of the same heading in sibling documents, close in score to the best passage and
    holding half of the question's terms or more, that the question does not tell apart."""
    floor = CLOSE_SCORE_RATIO * evidence[0]["score"]
    close = [
        p for p in evidence if p["score"] >= floor and len(query & passage_terms(p)) >= SIBLING_COVERAGE * len(query)
    ]
    return same_heading(query, close)


def same_heading(query: frozenset[str], close: Sequence[Passage]) -> list[Passage]:
    """Of passages that each answer the question, the first group of sections under one heading
    in documents of a shared title ("Expenses – Oslo office", "Expenses – Lima office") whose
    telling words the question does not name; [] when there is none of two or more."""
    close = [p for p in close if p["heading"].strip()]
    for i, first in enumerate(close):
        heading = first["heading"].strip().lower()
        group = [first]
        for other in close[i + 1 :]:
            if other["path"] in {p["path"] for p in group} or other["heading"].strip().lower() != heading:
                continue
            titles = [term_set(p["title"]) for p in (*group, other)]
            shared = frozenset.intersection(*titles)
            telling = frozenset.union(*titles) - shared  # what sets the documents apart
            if shared and not query & telling:
                group.append(other)
        if len(group) >= 2:
            return group[:MAX_OPTIONS]
    return []


def _parallel_answers(
    query: frozenset[str], evidence: Sequence[Passage], weights: Mapping[str, float]
) -> list[Passage]:
    """The best passage of each document that answers the question about as well as the best one
    (about as much of its weight, a close score), does not give the same figures, and that the
    question gives no means to tell apart — when these documents fill most of the evidence."""
    best = _best_per_document(evidence)
    total = sum(weights.values()) or 1.0

    def coverage(p: Passage) -> float:
        held = passage_terms(p)
        return sum(w for t, w in weights.items() if t in held) / total

    close = [p for p in best if p["score"] >= EQUAL_SCORE_RATIO * best[0]["score"]]
    most = max(coverage(p) for p in close)
    answering = [p for p in close if coverage(p) >= most - ANSWERING_SLACK]
    if most < ANSWERING or len(answering) < 2:
        return []
    lead = answering[0]
    figures = _answering_figures(query, lead)
    chosen = [lead]
    for other in answering[1:]:
        same_answer = bool(figures) and _answering_figures(query, other) == figures
        if not same_answer and _same_topic(query, lead, other) and not _telling(query, lead, other, weights):
            chosen.append(other)
    paths = {p["path"] for p in chosen}
    if len(chosen) < 2 or sum(p["path"] in paths for p in evidence) < DOMINANT * len(evidence):
        return []
    return chosen[:MAX_OPTIONS]


def _telling(query: frozenset[str], one: Passage, other: Passage, weights: Mapping[str, float]) -> frozenset[str]:
    """The question's words that name one passage's document or section and not the other's. A
    question naming both sides is about both (a comparison); a word of one side's name that the
    other's passage uses too, and that is among the knowledge base's commonest, tells nothing."""
    mine, theirs = query & (names(one) - names(other)), query & (names(other) - names(one))
    if mine and theirs:
        return mine | theirs
    shared = passage_terms(one) & passage_terms(other)
    rarest = max(weights.values(), default=1.0)
    return frozenset(t for t in mine | theirs if t not in shared or weights.get(t, 1.0) >= COMMON_NAME * rarest)


def _same_topic(query: frozenset[str], one: Passage, other: Passage) -> bool:
    """Whether two passages share enough vocabulary besides the question's words to be the same
    section of two parallel documents, rather than two topics that both use the question's words."""
    mine, theirs = passage_terms(one) - query, passage_terms(other) - query
    return len(mine & theirs) >= SAME_TOPIC * len(mine | theirs)


def _answering_figures(query: frozenset[str], p: Passage) -> frozenset[str]:
    """The figures of the passage's sentences that hold the most of the question's terms."""
    sentences = [(len(query & term_set(s)), s) for s in SENTENCE_BREAK.split(p["text"])]
    most = max((n for n, _ in sentences), default=0)
    if not most:
        return frozenset()
    found = (m.group().replace(",", "") for n, s in sentences if n == most for m in _FIGURE.finditer(s))
    return frozenset(f for f in found if f.strip("$€£¥%"))
