"""Citations for an answer that gives none: each of its sentences is credited to the passage that
holds most of its content words.

Asked for "[n]" markers and the excerpts used, small models often write a plain answer all the
same, and an answer with no source shown is one a reader cannot check. A sentence is credited only
where most of its own content terms stand in one passage, so what the passages do not back — a
greeting, the model's own aside — stays uncited; so does a sentence that states a figure the
passage does not hold (a small model's "the hotel limit in Lisbon is €25", with the passage's
words but a number of its own), and one that denies something, as "the documents do not say how
long parental leave is" shares its words with the passage it denies knowing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import NamedTuple

from threadsage.adapters.questions.ambiguity import passage_terms
from threadsage.adapters.reasoner import Passage, cited
from threadsage.support.text import SENTENCE_BREAK, term_set

SHARE = 0.6  # of a sentence's content terms that the passage it is credited to must hold
LEAST_SHARED = 2  # content terms, so that a short aside is never credited
_CLOSING = tuple(".!?;:。！？；：")
_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")
_DENIAL = re.compile(r"\b(?:not|no|never|none|nothing|cannot|unable)\b|n['’]t\b|没有|无法|未", re.IGNORECASE)


def attributed(answer: str, passages: Sequence[Passage], used: Collection[int]) -> str:
    """`answer` with an [n] after each sentence that passage n backs, n among the numbers (from 1)
    of the passages the answer says it uses, or any when it names none (the field small models
    leave out). An answer that cites anything is left as it is."""
    if cited(answer):
        return answer
    candidates = [
        _Candidate(n, passage_terms(p), frozenset(_FIGURE.findall(p["text"])))
        for n, p in enumerate(passages, start=1)
        if not used or n in used
    ]
    if not candidates:
        return answer
    pieces: list[str] = []
    start = 0
    for gap in SENTENCE_BREAK.finditer(answer):
        pieces += [_credited(answer[start : gap.start()], candidates), gap.group()]
        start = gap.end()
    pieces.append(_credited(answer[start:], candidates))
    return "".join(pieces)


class _Candidate(NamedTuple):
    number: int
    terms: frozenset[str]
    figures: frozenset[str]


def _credited(sentence: str, candidates: Sequence[_Candidate]) -> str:
    own = term_set(sentence)
    if len(own) < LEAST_SHARED or _DENIAL.search(sentence):
        return sentence
    best = max(candidates, key=lambda candidate: len(own & candidate.terms))  # ties: the first
    shared = len(own & best.terms)
    if shared < LEAST_SHARED or shared < SHARE * len(own) or not set(_FIGURE.findall(sentence)) <= best.figures:
        return sentence
    number = best.number
    body = sentence.rstrip()
    trailing = sentence[len(body) :]
    if body.endswith(_CLOSING):
        return f"{body[:-1]} [{number}]{body[-1]}{trailing}"
    return f"{body} [{number}]{trailing}"
