"""Statements made alike of different things (issue 34): a short question two sections answer in
the same words with different values is asked back with those sections, a question naming one of
them is answered, and no sentence is quoted twice."""

from __future__ import annotations

from threadsage.adapters.reasoner import Passage
from threadsage.adapters.reasoning.offline.back_end import OfflineReasoner
from threadsage.adapters.reasoning.offline.choosing import best_sentences, parallel_statements, set_aside
from threadsage.support.text import terms


def passage(heading: str, text: str, score: float) -> Passage:
    return Passage(
        id=heading,
        path="office/badges.md",
        source="office/badges.md",
        title="Badges",
        heading=heading,
        text=text,
        score=score,
    )


VISITORS = passage("Visitors", "Visitor badges must be returned within 2 days of the visit.", 3.0)
CONTRACTORS = passage("Contractors", "Contractor badges must be returned within 10 days of the contract's end.", 2.9)
PRINTERS = passage("Printers", "The printers on each floor print in colour. Toner is in the supply room.", 1.0)
EVIDENCE = [VISITORS, CONTRACTORS, PRINTERS]


async def test_a_short_question_answered_alike_in_two_sections_is_asked_back_with_them() -> None:
    decision = await OfflineReasoner().route("When must badges be returned?", EVIDENCE)
    assert decision.clarify, decision
    assert decision.clarify_options == ["Badges › Visitors", "Badges › Contractors"]


LEAVE = passage(
    "Leave",
    "If you work full time, you get 25 days of leave a year. If you work part time, you get 15 days of leave a year.",
    3.0,
)


async def test_statements_of_one_section_are_offered_by_what_each_is_about() -> None:
    decision = await OfflineReasoner().route("How many days of leave do I get?", [LEAVE, PRINTERS])
    assert decision.clarify_options == ["If you work full time", "If you work part time"], decision


def test_the_statement_of_the_case_named_is_quoted_without_the_others() -> None:
    query = terms("How many days of leave do I get? (If you work part time)")  # as resumed after the pick
    chosen = set_aside(set(query), best_sentences(query, [(1, LEAVE)], wants_quantity=True))
    assert [sentence for *_, sentence in chosen] == ["If you work part time, you get 15 days of leave a year."]


async def test_a_question_naming_one_of_the_sections_is_answered_from_it() -> None:
    question = "When must contractor badges be returned?"
    decision = await OfflineReasoner().route(question, EVIDENCE)
    assert not decision.clarify, decision
    assert "10 days" in await OfflineReasoner().extract(question, EVIDENCE)


def test_sentences_sharing_only_an_address_are_no_parallel_statements() -> None:
    badges = passage("Lost badges", "Report a lost badge by mailing <desk@example.org>.", 3.0)
    leaving = passage("Leaving", "Let <desk@example.org> know on your last day, with your badge.", 2.9)
    numbered = list(enumerate([badges, leaving, PRINTERS], start=1))
    assert parallel_statements(terms("Who do I tell about my badge?"), numbered, wants_quantity=False) == []


def test_a_sentence_said_in_two_places_is_chosen_once() -> None:
    said = "Badges are printed at the front desk on Mondays."
    numbered = [(1, passage("New badges", said, 2.0)), (2, passage("Visitors", said, 1.9))]
    chosen = best_sentences(terms("When are badges printed?"), numbered, wants_quantity=True)
    assert [sentence for *_, sentence in chosen] == [said]
