"""A question that names two things ("X and Y", "X vs Y", "X和Y有什么区别") is answered with the best
sentence for each, each cited — not with sentences about one of them only."""

from __future__ import annotations

import pytest

from threadsage.adapters.reasoner import Passage
from threadsage.adapters.reasoning.offline.back_end import OfflineReasoner


def page(path: str, title: str, text: str, score: float) -> Passage:
    return Passage(id=path, path=path, source=path, title=title, heading="Overview", text=text, score=score)


# The first page says a lot about the question's shared words; the second names the other thing.
KANBAN = page(
    "methods/kanban.md",
    "Kanban",
    "Kanban boards show the work of a team in columns. Kanban limits the work in progress of a team. "
    "A team organises its work by pulling the next card. Each team decides how its work is organised.",
    9.0,
)
SCRUM = page("methods/scrum.md", "Scrum", "Scrum runs in two-week sprints.", 6.0)
LUNCH = page("office/lunch.md", "Lunch", "Lunch is served at noon in the canteen.", 2.0)


@pytest.mark.parametrize(
    "question",
    [
        "How does Kanban organise the work of a team, and how does Scrum organise it?",
        "What is the difference between Kanban and Scrum for the work of a team?",
        "Kanban vs Scrum: how is the work of a team organised?",
    ],
)
async def test_each_thing_named_gets_its_own_cited_sentence(question: str) -> None:
    answer = await OfflineReasoner().extract(question, [KANBAN, SCRUM, LUNCH])
    assert "two-week sprints. [2]" in answer, answer
    assert "Kanban" in answer and "[1]" in answer, answer
    assert "canteen" not in answer, answer


@pytest.mark.parametrize("question", ["看板和冲刺在团队的工作上有什么区别？", "比较看板和冲刺的团队工作"])
async def test_a_chinese_comparison_of_two_things_cites_both(question: str) -> None:
    lines = ["看板方法把团队的工作放在列中。", "看板限制团队进行中的工作数量。", "团队的工作由团队自己安排和决定。"]
    kanban = page("methods/kanban.md", "看板", "\n".join(lines), 9.0)
    scrum = page("methods/scrum.md", "冲刺", "冲刺方法用两周的迭代安排每一次发布。", 6.0)
    answer = await OfflineReasoner().extract(question, [kanban, scrum])
    assert "两周的迭代安排每一次发布。 [2]" in answer and "[1]" in answer, answer


async def test_a_question_about_one_thing_is_not_topped_up() -> None:
    answer = await OfflineReasoner().extract("How does Kanban limit the work of a team?", [KANBAN, SCRUM])
    assert "sprints" not in answer, answer


async def test_a_phrase_joined_by_and_in_a_plain_question_is_one_thing() -> None:
    said = ["The gym terms are signed when you join.", "The terms of the gym last a year.", "The gym terms renew."]
    gym = page("perks/gym.md", "Gym", " ".join(said), 9.0)
    rules = page("perks/rules.md", "Rules", "Conditions of use are posted on the door.", 5.0)
    answer = await OfflineReasoner().extract("What are the gym terms and conditions?", [gym, rules])
    assert "door" not in answer, answer


ROTA = page(
    "oncall/rota.md",
    "On-call rota",
    "The on-call shift changes hands every Monday at noon. To swap a shift, agree it with a colleague and "
    "update the rota. " + " ".join(f"Alert {n} is routed to the primary engineer of the week." for n in range(20)),
    9.0,
)
TIME_OFF = page(
    "people/time-off.md",
    "Time off",
    "Book time off in the leave tool. Long absences are booked at least three weeks ahead, short ones two days "
    "ahead. Swap your on-call shift before you book time off that overlaps it.",
    7.0,
)


async def test_the_second_part_of_a_question_gets_its_place_with_no_sentence_twice() -> None:
    # The words quote the second page's sentence about swapping; the second part reads closest to
    # it too, but the sentence beside it answers: the place shows both, and that sentence once.
    question = "How do I swap my on-call shift, and how soon should I put in for time off?"
    answer = await OfflineReasoner().extract(question, [ROTA, TIME_OFF, LUNCH])
    assert "three weeks ahead" in answer and "[2]" in answer, answer
    assert "agree it with a colleague" in answer and "[1]" in answer, answer
    assert answer.count("Swap your on-call shift") == 1, answer


async def test_each_part_of_a_question_read_by_meaning_gets_its_place() -> None:
    # The whole question reads closest to the second part's page; the first part's place is shown too.
    question = "How do I swap my on-call shift, and how far ahead must I book time off?"
    answer = await OfflineReasoner().extract(question, [ROTA, TIME_OFF, LUNCH])
    assert "three weeks ahead" in answer and "agree it with a colleague" in answer, answer
    assert "canteen" not in answer, answer
