"""A question asking for a sum or a difference of two figures the passages give: each side looked
up on its own, the arithmetic done by the calculator, every figure cited."""

from __future__ import annotations

from threadsage.adapters.reasoner import Passage
from threadsage.adapters.reasoning.offline.back_end import OfflineReasoner
from threadsage.i18n import say


def page(path: str, title: str, text: str, score: float) -> Passage:
    return Passage(id=path, path=path, source=path, title=title, heading="Parking", text=text, score=score)


NORTH = page("offices/north.md", "North office", "A parking permit at the North office costs $120 a month.", 9.0)
SOUTH = page("offices/south.md", "South office", "A parking permit at the South office costs $80 a month.", 8.8)
GYM = page("perks/gym.md", "Gym", "The gym costs €40 a month.", 3.0)


async def test_a_total_of_two_figures_is_worked_out_and_both_are_cited() -> None:
    question = "What is the total cost of a parking permit at the North office and the South office?"
    answer = await OfflineReasoner().extract(question, [NORTH, SOUTH, GYM])
    assert "$120 a month. [1]" in answer and "$80 a month. [2]" in answer, answer
    assert answer.endswith(say("computed_offline", expression="$120 + $80", result="$200")), answer


async def test_a_difference_asked_with_chinese_words_is_worked_out() -> None:
    answer = await OfflineReasoner().extract(
        "North office 和 South office 的 parking permit 相差多少？", [NORTH, SOUTH]
    )
    assert answer.endswith("$120 - $80 = $40"), answer


async def test_figures_in_different_currencies_or_no_sum_asked_are_left_alone() -> None:
    mixed = await OfflineReasoner().extract(
        "What is the total cost of the North office parking and the gym?", [NORTH, GYM]
    )
    plain = await OfflineReasoner().extract("What does a parking permit at the North office cost?", [NORTH, SOUTH])
    assert "calculator" not in mixed and "calculator" not in plain, (mixed, plain)
