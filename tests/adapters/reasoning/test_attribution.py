"""An answer written without [n] markers gets them where its sentences stand in the passages it uses."""

from __future__ import annotations

from threadsage.adapters.reasoner import Passage
from threadsage.adapters.reasoning.attribution import attributed


def passage(heading: str, text: str) -> Passage:
    return Passage(
        id=heading, path=f"{heading}.md", source="handbook", title=heading, heading=heading, text=text, score=1.0
    )


TRAVEL = passage("Travel", "Flights of 6 hours or more may be booked in premium economy. One checked bag is included.")
LEAVE = passage("Leave", "Employees get 25 days of paid annual leave, and unused days carry over until March.")


def test_each_sentence_is_credited_to_the_passage_that_holds_its_words() -> None:
    answer = "You get 25 days of paid leave a year. Flights over 6 hours can be booked in premium economy!"
    assert attributed(answer, [TRAVEL, LEAVE], {1, 2}) == (
        "You get 25 days of paid leave a year [2]. Flights over 6 hours can be booked in premium economy [1]!"
    )


def test_what_the_passages_do_not_back_stays_uncited() -> None:
    answer = "Happy to help. The cafeteria serves lunch from noon until two every weekday.\nPaid leave is 25 days."
    assert attributed(answer, [TRAVEL, LEAVE], {1, 2}) == (
        "Happy to help. The cafeteria serves lunch from noon until two every weekday.\nPaid leave is 25 days [2]."
    )


def test_only_the_passages_the_answer_uses_are_credited_or_any_when_it_names_none() -> None:
    answer = "Premium economy is allowed on flights of 6 hours or more."
    assert attributed(answer, [TRAVEL, LEAVE], {2}) == answer
    assert attributed(answer, [TRAVEL, LEAVE], set()) == "Premium economy is allowed on flights of 6 hours or more [1]."


def test_a_sentence_that_denies_is_never_credited() -> None:
    """A refusal shares its words with the passage it says does not answer."""
    for answer in (
        "The documents do not say how many days of paid annual leave employees get.",
        "The handbook doesn't list paid annual leave days for employees.",
        "No passage gives the paid annual leave days of employees.",
    ):
        assert attributed(answer, [TRAVEL, LEAVE], set()) == answer


def test_an_answer_that_cites_is_left_as_it_is() -> None:
    answer = "Premium economy [2]. Paid leave is 25 days."
    assert attributed(answer, [TRAVEL, LEAVE], {1, 2}) == answer


def test_a_tie_goes_to_the_higher_ranked_passage() -> None:
    again = passage("Travel again", TRAVEL["text"])
    assert attributed("Premium economy on long flights.", [TRAVEL, again], {1, 2}).endswith("[1].")
    assert attributed("Premium economy on long flights.", [TRAVEL, again], {2}).endswith("[2].")


def test_a_figure_the_passage_does_not_hold_is_not_credited_to_it() -> None:
    assert attributed("Employees get 30 days of paid annual leave.", [TRAVEL, LEAVE], set()).endswith("leave.")
    assert attributed("Employees get 25 days of paid annual leave.", [TRAVEL, LEAVE], set()).endswith("leave [2].")
