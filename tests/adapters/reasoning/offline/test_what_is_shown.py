"""What the offline reader shows of a passage the words chose a sentence of: the sentence with
the paragraph that holds it, not a lone line that names the topic and leaves out the figure."""

from __future__ import annotations

from threadsage.adapters.reasoner import Passage
from threadsage.adapters.reasoning.offline.back_end import OfflineReasoner
from threadsage.i18n import say


def page(path: str, title: str, text: str, score: float) -> Passage:
    return Passage(id=path, path=path, source=path, title=title, heading="Overview", text=text, score=score)


LUNCH = page("office/lunch.md", "Lunch", "Lunch is served at noon in the canteen.", 2.0)


async def test_a_lone_sentence_the_words_chose_is_shown_in_its_paragraph() -> None:
    # The words choose the sentence naming the swimming pool; the figure is in the sentence beside it.
    filler = "\n\n".join(f"Perk {n} is described here at some length for the staff." * 3 for n in range(12))
    fitness = page(
        "people/perks.md",
        "Perks",
        f"{filler}\n\nEach of us has a fitness allowance of 40 euros a month. The allowance covers "
        f"swimming pool passes and climbing halls.\n\nAfter it, other perks.",
        9.0,
    )
    answer = await OfflineReasoner().extract("Is my swimming pool pass covered?", [fitness, LUNCH])
    assert "40 euros a month" in answer and "swimming pool passes" in answer, answer


async def test_a_question_for_an_amount_that_the_page_does_not_give_gets_the_closest_passage() -> None:
    """The page speaks of trainees' leave without its figure: quoted as the answer, it would read as
    one; it is shown as the closest passage, which may not answer."""
    vague = page("people/trainees.md", "Trainees", "Trainees get a limited number of one-off leave days.", 3.0)
    question = "How many leave days do trainees get?"
    unsure = await OfflineReasoner().extract(question, [vague, LUNCH])
    assert unsure.startswith(say("closest_passage", label="Trainees › Overview")) and "[1]" in unsure, unsure
    figured = page("people/trainees.md", "Trainees", "Trainees get 12 leave days a year.", 3.0)
    assert "12 leave days" in await OfflineReasoner().extract(question, [figured, LUNCH])


SHORT_TERM = {
    **page("people/leave.md", "Leave", "Short-term leave is paid at 70% of your salary for up to ten days.", 5.0),
    "id": "short",
    "heading": "Short-term leave",
}
LONG_TERM = {
    **page("people/leave.md", "Leave", "During long-term leave you are not paid; it lasts up to six months.", 4.0),
    "id": "long",
    "heading": "Long-term leave",
}


async def test_a_follow_up_naming_another_section_of_the_topic_is_answered_from_it() -> None:
    """ "Long" is what the follow-up changes: the section named by it and by the topic answers, not the
    short-term section that the question before and its words lead to."""
    question = "And for long-term leave? (after: How much pay do I get on short-term leave?)"
    answer = await OfflineReasoner().extract(question, [SHORT_TERM, LONG_TERM, LUNCH])
    assert "not paid" in answer and "70%" not in answer, answer


async def test_a_follow_up_word_naming_a_section_off_the_topic_does_not_lead_there() -> None:
    """ "CFO" names a finance section, but that section is not about chat channels, the topic."""
    channels = page("team/chat.md", "Chat", "The CEO's channel is #ceo-desk; the CFO's channel is #cfo-desk.", 5.0)
    approvals = {
        **page("finance/approvals.md", "Finance", "Send approvals to the CFO by e-mail.", 4.0),
        "heading": "CFO approvals",
    }
    question = "And for the CFO? (after: What is the chat channel for the CEO?)"
    answer = await OfflineReasoner().extract(question, [channels, approvals])
    assert "#cfo-desk" in answer, answer
