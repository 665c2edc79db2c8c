"""The passages closest in meaning among all those read (`MeaningIndex`): found whatever words they
share with the question, and replaced whole after a change."""

from __future__ import annotations

from threadsage.adapters.meaning import minilm
from threadsage.adapters.meaning.recall import MeaningIndex

PASSAGES = {
    "onboarding": "Onboarding: on your first day, sign the contract and meet your buddy.",
    "expenses": "Expenses: claims are paid back with your salary on the 25th of the month.",
    "canteen": "Canteen: the canteen serves lunch from noon to two.",
    "laptops": "Laptops: company laptops are replaced every three years; return the old one to IT.",
    "parking": "Parking: the garage under the office has twenty spaces for staff cars.",
    "holidays": "Public holidays: the office is closed on New Year's Day and on Christmas Day.",
    "printing": "Printing: the printer on the second floor prints in colour; ask reception for paper.",
    "security": "Security: report a lost badge to the front desk the same day.",
    "payroll": "Payroll: salaries are paid on the 25th; the payslip is in the HR portal.",
    "training": "Training: each person has a yearly budget of 1,000 euros for courses and books.",
    "travel": "Travel: book trains in second class and flights in economy.",
}


def index_of(passages: dict[str, str]) -> MeaningIndex:
    index = MeaningIndex()
    index.replace(list(passages), list(passages.values()))
    return index


def test_the_closest_passage_is_found_without_a_shared_word() -> None:
    index = index_of(PASSAGES)
    assert sorted(index.closest("How often is my work computer swapped for a new one?", 100)) == sorted(PASSAGES)
    assert index.closest("How often is my work computer swapped for a new one?", 2)[0] == "laptops"
    assert index.closest("When do I get back what I spent myself?", 3)[0] == "expenses"


def test_nothing_is_found_before_anything_was_read_or_for_a_question_the_model_cannot_read() -> None:
    empty = MeaningIndex()
    assert empty.closest("How often is my work computer swapped for a new one?", 5) == []
    index = index_of(PASSAGES)
    assert index.closest("我们多久换一次电脑？", 5) == []


def test_a_replacement_drops_what_it_does_not_hold() -> None:
    index = index_of(PASSAGES)
    index.replace(["canteen"], [PASSAGES["canteen"]])
    assert index.closest("How often is my work computer swapped for a new one?", 5) == ["canteen"]


def test_the_vectors_are_those_read_ahead(monkeypatch) -> None:
    made: list[str] = []
    real = minilm._embed
    monkeypatch.setattr(minilm, "_embed", lambda texts: made.extend(texts) or real(texts))
    index_of(PASSAGES)
    index_of(PASSAGES)  # a second fill embeds nothing again
    assert len(made) <= len(PASSAGES)
