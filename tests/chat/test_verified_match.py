"""A question asked in other words finds the verified answer saved for it (an expert's answer closes
the gap for the next person who asks differently); the same question about other people does not."""

from __future__ import annotations

from threadsage.chat.verified import same_in_other_words
from threadsage.support.text import term_set

SAVED = [
    (q, q, term_set(q))
    for q in ("How long is parental leave for adoptive parents?", "How many vacation days do contractors get?")
]


def test_the_same_question_in_other_words_finds_its_verified_answer() -> None:
    asked = "Quick one: how long is parental leave for adoptive parents?"
    assert same_in_other_words(asked, SAVED) == SAVED[0][0]


def test_the_same_question_about_other_people_finds_none() -> None:
    assert same_in_other_words("How many vacation days do employees get?", SAVED) is None
    assert same_in_other_words("Where is the printer?", SAVED) is None


def test_a_question_the_model_cannot_read_finds_none() -> None:
    assert same_in_other_words("收养父母的育儿假有多长？", SAVED) is None
    assert same_in_other_words("How long is parental leave for adoptive parents?", []) is None
