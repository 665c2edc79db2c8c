"""Which passage leads the answer/hedge/abstain decision: among passages tied for the top score,
the one that holds the most of the question — not whichever a float put first."""

from __future__ import annotations

from threadsage.adapters.reasoner import Passage
from threadsage.adapters.reasoning.offline.confidence import Sureness, signals
from threadsage.support.text import term_set


def page(path: str, text: str, score: float, source: str | None = None) -> Passage:
    return Passage(id=path, path=path, source=source or path, title="", heading="", text=text, score=score)


LEARNING = page("people/benefits.md", "The learning budget is 1,000 euros a year.", 4.661516189575195)
FILE = page("note.md", "The Heron budget is 48,000 euros.", 4.661516189575194, "attachment:note.md")
OTHER = page("it/vpn.md", "Connect to the VPN before opening the wiki.", 2.0)


def frequencies(terms: list[str]) -> tuple[int, dict[str, int]]:
    return 100, {t: 5 for t in terms if t != "heron"}  # "heron": only the attached file has it


def test_a_tie_is_led_by_the_passage_that_holds_the_question() -> None:
    found = signals(term_set("What is the Heron budget?"), [LEARNING, FILE, OTHER], frequencies)
    assert found.lead == 1 and found.coverage == 1.0 and found.sureness() is Sureness.ANSWER, found


def test_a_clear_lead_in_score_is_kept() -> None:
    ahead = {**LEARNING, "score": 9.0}
    found = signals(term_set("What is the Heron budget?"), [ahead, FILE, OTHER], frequencies)
    assert found.lead == 0 and found.coverage < 1.0, found
