"""The search's candidates read by meaning as well as words: the first by words keeps its place, the
closest in meaning comes second, then they alternate; a question the model cannot read keeps the
search's order."""

from __future__ import annotations

from threadsage.adapters.meaning.ordering import by_meaning
from threadsage.adapters.reasoner import Passage


def place(n: int, title: str, text: str) -> Passage:
    return Passage(id=f"p{n}", path=f"{n}.md", source=f"{n}.md", title=title, heading="", text=text, score=1.0)


CANDIDATES = [
    place(0, "Onboarding", "On your first day, sign the contract and meet your buddy."),
    place(1, "Expenses", "Claims are paid with your salary on the 25th of the month."),
    place(2, "Canteen", "The canteen serves lunch from noon to two."),
    place(3, "Laptops", "Company laptops are replaced every three years; return the old one to IT."),
]


def test_the_closest_in_meaning_comes_second_behind_the_first_by_words() -> None:
    kept = by_meaning("How often do we get a new computer?", CANDIDATES, 3)
    assert [p["id"] for p in kept] == ["p0", "p3", "p1"]


def test_the_first_by_words_closest_in_meaning_too_is_not_repeated() -> None:
    kept = by_meaning("When are expense claims paid?", CANDIDATES[1:], 2)
    assert [p["id"] for p in kept] == ["p1", "p2"]


def test_a_question_in_another_language_keeps_the_search_order() -> None:
    assert [p["id"] for p in by_meaning("我们多久换一次电脑？", CANDIDATES, 2)] == ["p0", "p1"]
    assert by_meaning("anything", CANDIDATES[:1], 3) == CANDIDATES[:1]
