"""Follow-ups, made standalone by `OfflineReasoner.contextualise` ("And if I'm sick? (after: How much
notice do I give?)"): what the follow-up itself asks, the sentence of a place closest to it, and the
section it names within the topic of the question before."""

from __future__ import annotations

from collections.abc import Sequence

from threadsage.adapters.meaning import closeness, reads_meaning
from threadsage.adapters.questions.ambiguity import names
from threadsage.adapters.reasoner import Passage, passage_label
from threadsage.support.text import term_set

AFTER = " (after: "  # joins a follow-up to the question before it (`contextualise`)


def named_by_follow_up(question: str, passages: Sequence[Passage]) -> int | None:
    """The first passage whose title and heading name every word a follow-up adds to the question
    before it and a word of that question too ("long" and "leave" in "And for long-term care leave?"
    after one on short-term care leave: what changed, within the same topic); None for any other
    question, one adding no word, or where no section of the topic is named so."""
    own, _, before = question.partition(AFTER)
    topic = term_set(before)
    new = term_set(own) - topic
    return next((i for i, p in enumerate(passages) if new and new <= names(p) and topic & names(p)), None)


def followed_up(own: str, p: Passage) -> str:
    """The sentence of `p` that reads closest to a follow-up's own words ("" when there are none,
    or they cannot be read by meaning)."""
    if not own or not reads_meaning(own):
        return ""
    [near] = closeness(own, [(passage_label(p), p["text"])])
    return near.units[near.closest] if near.units else ""


def own_words(question: str) -> str:
    """What a follow-up made standalone by `contextualise` asks itself ("" for any other question)."""
    own, after, _ = question.partition(AFTER)
    return own.strip() if after else ""
