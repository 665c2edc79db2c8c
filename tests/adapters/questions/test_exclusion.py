"""Questions that exclude something: what to search for, and which passages go last."""

from __future__ import annotations

import pytest

from threadsage.adapters.questions.exclusion import Exclusion, split_exclusion, without_excluded
from threadsage.adapters.reasoner import Passage


@pytest.mark.parametrize(
    ("question", "query", "excluded"),
    [
        ("What leave can I take other than annual leave?", "What leave can I take?", ("annual leave",)),
        ("Apart from the VPN, how do I reset a password?", "how do I reset a password?", ("the VPN",)),
        ("Which expenses, not counting hotels, need a receipt?", "Which expenses, need a receipt?", ("hotels",)),
        ("Excluding contractors, who approves leave?", "who approves leave?", ("contractors",)),
        ("Which channel, not the general one, is for sales?", "Which channel, is for sales?", ("general one",)),
        (
            "What benefit is not about health but about learning?",
            "What benefit is about learning?",
            ("about health",),
        ),
        ("Which role is not part of the finance team?", "Which role?", ("the finance team",)),
        ("除了年假以外，我还有哪些假期？", "我还有哪些假期？", ("年假",)),
        ("不包括交通费，每天的餐费上限是多少？", "每天的餐费上限是多少？", ("交通费",)),
    ],
)
def test_the_excluded_topic_leaves_the_search_query(question: str, query: str, excluded: tuple[str, ...]) -> None:
    assert split_exclusion(question) == Exclusion(query, excluded)


@pytest.mark.parametrize(
    "question",
    [
        "What happens if I do not submit my timesheet?",  # a negated action is the subject, not an exclusion
        "How much is the meal allowance?",
        "For contractors, what is the notice period?",
        "Why can't I log in to the VPN?",
    ],
)
def test_questions_without_an_exclusion_are_searched_as_asked(question: str) -> None:
    assert split_exclusion(question) == Exclusion(question, ())
    assert not split_exclusion(question)


def test_a_scene_setting_statement_goes_with_what_it_describes() -> None:
    question = (
        "The benefits page lists the gym allowance and the learning budget. "
        "Which perk, not a benefits page item, covers home office furniture?"
    )
    found = split_exclusion(question)
    assert found.query == "Which perk, covers home office furniture?"
    assert found.excluded == ("benefits page item",)
    assert found.scenes == ("The benefits page lists the gym allowance and the learning budget.",)


def test_a_short_qualifier_before_the_question_is_kept() -> None:
    found = split_exclusion("For contractors, what leave is there other than sick leave?")
    assert found.query == "For contractors, what leave is there?"


def test_excluding_everything_searches_the_whole_question() -> None:
    assert split_exclusion("Other than annual leave?") == Exclusion("Other than annual leave?", ())


def passage(path: str, title: str, heading: str, text: str = "") -> Passage:
    return Passage(id=path + heading, path=path, source=path, title=title, heading=heading, text=text, score=1.0)


def test_passages_named_after_the_excluded_topic_go_last_in_order() -> None:
    annual = passage("leave.md", "Leave policy", "Annual leave", "25 days of annual leave.")
    sick = passage("leave.md", "Leave policy", "Sick leave", "10 paid sick days; annual leave is separate.")
    parental = passage("benefits.md", "Benefits", "Parental leave", "16 weeks.")
    both = passage("faq.md", "Annual and parental leave", "Overview", "See the pages.")
    exclusion = split_exclusion("Which leave do I get other than annual leave?")
    ranked = without_excluded([annual, sick, both, parental], exclusion)
    # "leave" is wanted, but the excluded phrase has it too: it does not save "Annual leave".
    assert [p["heading"] for p in ranked] == ["Sick leave", "Parental leave", "Annual leave", "Overview"]
    assert without_excluded([annual, sick], split_exclusion("Which leave do I get?")) == [annual, sick]
