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
- *equally answering documents*: the best passages of two or more documents each hold about as
  many of the question's terms, score within 15% of each other, share vocabulary beyond the
  question's words (parallel sections, not two topics), and do not give the same figures (when
  the sentences that match the question best state figures, "$1,500" in one and "$2,000" in the
  other is the clearest sign), while the question names nothing that tells the documents apart.
  Nothing here depends on what the documents are called or how their sections are headed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from threadsage.adapters.documents.attachments import SOURCE_PREFIX
from threadsage.adapters.reasoner import MAX_OPTION_CHARS, Passage, passage_label
from threadsage.support.text import term_set

# Another document is a real alternative when its best passage scores at least this share of the top.
CLOSE_SCORE_RATIO = 0.6
MAX_OPTIONS = 3
SIBLING_COVERAGE = 0.5  # each sibling section must answer the question, not merely share a heading
FIGURES_COVERAGE = 0.5  # each document must hold this share of the question's terms
EQUAL_SCORE_RATIO = 0.85  # and score this close to the best one
SAME_TOPIC = 0.1  # Jaccard of the two passages' terms beyond the question's: parallel sections, not two topics
_FIGURE = re.compile(r"[$€£¥]?\d[\d,]*(?:\.\d+)?%?")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")


def passage_terms(p: Passage) -> frozenset[str]:
    return term_set(f"{p['title']} {p['heading']} {p['text']}")


def names(p: Passage) -> frozenset[str]:
    """The terms a passage is named by: its document title and heading path."""
    return term_set(f"{p['title']} {p['heading']}")


def option(p: Passage) -> str:
    label = passage_label(p)
    return label if len(label) <= MAX_OPTION_CHARS else label[: MAX_OPTION_CHARS - 1].rstrip() + "…"


def alternatives(query: frozenset[str], evidence: Sequence[Passage]) -> list[Passage]:
    """The passages to offer as options (2–3), or [] when the question is clear enough."""
    if not evidence or _answered_by_a_file(query, evidence):
        return []
    return (
        _indistinguishable_documents(query, evidence)
        or _sibling_sections(query, evidence)
        or _different_figures(query, evidence)
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
        p
        for p in evidence
        if p["score"] >= floor
        and p["heading"].strip()
        and len(query & passage_terms(p)) >= SIBLING_COVERAGE * len(query)
    ]
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


def _different_figures(query: frozenset[str], evidence: Sequence[Passage]) -> list[Passage]:
    """The best passage of each document that answers the question about as well as the top one
    (as many of its terms, a close score), does not give the same figures, and that the question
    gives no means to tell apart from it."""
    best = _best_per_document(evidence)
    top = best[0]
    covered = len(query & passage_terms(top))
    if covered < FIGURES_COVERAGE * len(query) or any(len(query & passage_terms(p)) > covered for p in best):
        return []  # too little of the question; or a lower passage holds more of it: not the two best answers
    figures = _answering_figures(query, top)
    chosen = [top]
    for other in best[1:]:
        if other["score"] < EQUAL_SCORE_RATIO * top["score"]:
            break
        theirs = _answering_figures(query, other)
        # The same figures is the same answer; figures on one side only, a passage about something else.
        same_answer = (bool(figures) and theirs == figures) or bool(figures) != bool(theirs)
        answers_too = len(query & passage_terms(other)) >= covered - 1 >= FIGURES_COVERAGE * len(query) - 1
        if (
            answers_too
            and not same_answer
            and _same_topic(query, top, other)
            and not query & (names(top) ^ names(other))
        ):
            chosen.append(other)
    return chosen[:MAX_OPTIONS] if len(chosen) >= 2 else []


def _same_topic(query: frozenset[str], one: Passage, other: Passage) -> bool:
    """Whether two passages share enough vocabulary besides the question's words to be the same
    section of two parallel documents, rather than two topics that both use the question's words."""
    mine, theirs = passage_terms(one) - query, passage_terms(other) - query
    return len(mine & theirs) >= SAME_TOPIC * len(mine | theirs)


def _answering_figures(query: frozenset[str], p: Passage) -> frozenset[str]:
    """The figures of the passage's sentences that hold the most of the question's terms."""
    sentences = [(len(query & term_set(s)), s) for s in _SENTENCE_END.split(p["text"])]
    most = max((n for n, _ in sentences), default=0)
    if not most:
        return frozenset()
    found = (m.group().replace(",", "") for n, s in sentences if n == most for m in _FIGURE.finditer(s))
    return frozenset(f for f in found if f.strip("$€£¥%"))
