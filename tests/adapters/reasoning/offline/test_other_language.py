"""A question in another language than the best passage, offline: quoted as the closest passage,
unless the question's gloss (`i18n.glossing`) shows the passages do not cover it."""

from __future__ import annotations

from threadsage.adapters.reasoner import Passage
from threadsage.adapters.reasoning.offline.back_end import OfflineReasoner
from threadsage.adapters.reasoning.offline.confidence import Sureness


def page(path: str, text: str, score: float) -> Passage:
    return Passage(id=path, path=path, source=path, title="", heading="", text=text, score=score)


LAPTOP = page("it/laptops.md", "Report a lost laptop to the IT service desk within one hour.", 9.0)
LEAVE = page("people/leave.md", "Annual leave is 25 days a year, and unused days carry over.", 3.0)


def frequencies(terms: list[str]) -> tuple[int, dict[str, int]]:
    """A handbook's statistics: its words are in a few passages each; a country and its capital in none."""
    return 40, {t: 3 for t in terms if t not in {"franc", "french", "capit"}}


def test_a_chinese_question_the_english_passage_answers_is_quoted_as_the_closest() -> None:
    sureness, lead = OfflineReasoner(frequencies).sureness("笔记本电脑丢失了要报告吗？", [LAPTOP, LEAVE])
    assert (sureness, lead) == (Sureness.HEDGE, 0)


def test_a_chinese_question_no_passage_covers_is_not_covered() -> None:
    sureness, _ = OfflineReasoner(frequencies).sureness("法国的首都是哪里？", [LEAVE, LAPTOP])
    assert sureness is Sureness.ABSTAIN


def test_a_page_in_the_questions_own_language_does_not_hide_the_english_one_that_covers_it() -> None:
    """A Chinese summary page leads the search but does not answer: the gloss is weighed against the
    English pages only, so the laptop page is quoted as the closest, not "not covered"."""
    summary = page("people/onboarding-zh.md", "入职第一天领取门禁卡，并参加安全培训。", 12.0)
    sureness, lead = OfflineReasoner(frequencies).sureness("笔记本电脑丢失了要报告吗？", [summary, LEAVE, LAPTOP])
    assert (sureness, lead) == (Sureness.HEDGE, 2)
