"""The meaning the offline reader reads by: a question in a person's own words is closest to the
place that answers it, though they share no word; its sentences are scored one by one."""

from __future__ import annotations

import numpy as np

from threadsage.adapters.meaning import closeness, minilm, model, reads_meaning, sentences

PLACES = [
    ("Laptops and equipment › Replacement", "Company laptops are replaced every three years. Return the old one."),
    ("Expenses › Payment", "Approved claims are paid with your salary on the 25th of the month."),
    ("Leave for contractors › Annual leave", "Contractors receive 12 unpaid days of planned absence a year."),
]


def test_a_question_in_other_words_is_closest_to_the_place_that_answers_it() -> None:
    for question, answering in [
        ("How often do we get a new computer?", 0),  # no word in common with "laptops are replaced"
        ("When is my expense money paid back?", 1),
        ("how many vacation days do contractors get?", 2),
    ]:
        near = closeness(question, PLACES)
        best = max(range(len(PLACES)), key=lambda i: near[i].best)
        assert best == answering, (question, [round(n.best, 3) for n in near])


def test_each_sentence_is_scored_and_the_closest_named() -> None:
    [near] = closeness("How often do we get a new computer?", PLACES[:1])
    assert near.units == tuple(sentences(PLACES[0][1])) and len(near.scores) == 2
    assert near.units[near.closest] == "Company laptops are replaced every three years."
    assert near.ranked()[0] == near.closest and near.best > 0.4  # the place as a whole reads close


def test_a_place_with_nothing_to_read_has_no_sentence_to_show() -> None:
    [near] = closeness("How often do we get a new computer?", [("Empty", "")])
    assert near.units == () and near.scores == () and near.closest == 0 and near.best < 0.3


def test_only_english_questions_are_read_by_meaning() -> None:
    assert reads_meaning("How often do we get a new computer?")
    assert not reads_meaning("我们多久换一次电脑？")  # the embedding knows English only


def test_the_closest_places_sentences_are_read_by_the_transformer_the_others_by_the_word_vectors() -> None:
    question = "When is my expense money paid back?"
    near = closeness(question, PLACES)
    for (label, text), mine in zip(PLACES, near, strict=True):
        units = [f"{label}: {unit}" for unit in sentences(text)]
        by = minilm if mine is near[1] else model
        matrix = by.vectors([question, *units])
        assert np.allclose(mine.scores, matrix[1:] @ matrix[0], atol=1e-5), label
