"""The offline back-end on documents nobody tuned it for (issue 24): answer, hedge or abstain by
the rarity of the question's terms; asking back when two documents answer differently; short
closings as small talk. The documents are written here; none is from an evaluation set."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.helpers.conversation import Conversation, only, service
from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.adapters.questions.ambiguity import alternatives
from threadsage.adapters.questions.small_talk import is_small_talk, reply_key
from threadsage.adapters.reasoner import Passage
from threadsage.adapters.reasoning.offline.back_end import OfflineReasoner
from threadsage.adapters.reasoning.offline.confidence import Sureness, signals
from threadsage.chat import ReplyKind
from threadsage.i18n import say
from threadsage.ingestion.pipeline import Ingestor
from threadsage.support.text import term_set


def page(path: str, title: str, text: str, score: float, heading: str = "") -> Passage:
    return Passage(id=path, path=path, source=path, title=title, heading=heading, text=text, score=score)


# A knowledge base of 1,000 chunks where "policy", "staff" and "office" are everywhere and the rest is rare.
COMMON = {"polici": 900, "staff": 800, "offic": 700}


def frequencies(terms: Sequence[str]) -> tuple[int, dict[str, int]]:
    return 1000, {t: COMMON.get(t, 3) for t in terms if t not in {"franc", "capit"}}


BIKE = page(
    "facilities/bikes.md",
    "Bicycle storage",
    "Staff may keep a bicycle in the basement cage. The cage code changes every quarter.",
    9.0,
)
PARKING = page("facilities/parking.md", "Parking", "Staff park in the north office lot from 7am.", 4.0)


def test_the_rare_terms_decide_not_the_common_ones() -> None:
    # Two of three words are missing, but they are the commonest: the rare one is held.
    held_rare = signals(term_set("bicycle policy staff office"), [BIKE, PARKING], frequencies)
    assert held_rare.sureness() is Sureness.ANSWER, held_rare
    # The common words are held, the rare ones not: by word count half, by weight little.
    held_common = signals(term_set("staff office kayak paddle"), [BIKE, PARKING], frequencies)
    assert held_common.sureness() is not Sureness.ANSWER, held_common


def test_a_question_about_what_no_document_mentions_is_not_answered() -> None:
    found = signals(term_set("What is the capital of France?"), [BIKE, PARKING], frequencies)
    assert found.unknown > 0.4 and found.sureness() is Sureness.ABSTAIN, found


def test_a_misspelt_word_counts_as_the_word() -> None:
    found = signals(term_set("Where can I keep my bicylce?"), [BIKE, PARKING], frequencies)
    assert found.unknown == 0 and found.sureness() is Sureness.ANSWER, found


async def test_unsure_the_closest_passage_is_quoted_as_possibly_not_answering() -> None:
    reasoner = OfflineReasoner(frequencies)
    close = [BIKE, {**PARKING, "score": 8.0}]  # no document stands out either
    question = "Is there a bicycle repair kit and a pump?"  # one rare term of four is held
    assert reasoner.sureness(question, close)[0] is Sureness.HEDGE
    answer = await reasoner.extract(question, close)
    assert answer.startswith(say("closest_passage", label="Bicycle storage")) and "[1]" in answer, answer
    chinese = await reasoner.extract("有没有 bicycle 的修理工具和打气筒？", close)
    # An English passage for a Chinese question: quoted as the closest, saying it is in another language.
    assert chinese.startswith(say("closest_in_other_language", "zh", label="Bicycle storage")), chinese


PLAN_A = page("plans/silver.md", "Silver health plan", "The yearly deductible is $1,500 per person.", 10.0)
PLAN_B = page("plans/gold.md", "Gold health plan", "The yearly deductible is $2,500 per person.", 9.6)
MORE_A = page("plans/silver.md", "Silver health plan", "Once the yearly deductible is met, the plan pays 80%.", 8.0)
MORE_B = page("plans/gold.md", "Gold health plan", "After the yearly deductible the plan pays 90% per person.", 7.9)
GYM = page("perks/gym.md", "Gym membership", "The gym subsidy is $40 a month.", 3.0)


def test_two_documents_answering_with_different_figures_are_asked_about() -> None:
    evidence = [PLAN_A, PLAN_B, MORE_A, MORE_B, GYM]  # search finds the question in the two plans, again and again
    options = alternatives(term_set("What is the yearly deductible?"), evidence)
    assert [p["path"] for p in options] == ["plans/silver.md", "plans/gold.md"]


def test_a_question_naming_one_side_or_getting_the_same_figure_is_not_asked_about() -> None:
    evidence = [PLAN_B, PLAN_A, MORE_B, MORE_A, GYM]
    assert alternatives(term_set("What is the yearly deductible on the gold plan?"), evidence) == []
    same = page("plans/gold.md", "Gold health plan", "The yearly deductible is $1,500 per person.", 9.6)
    assert alternatives(term_set("What is the yearly deductible?"), [PLAN_A, same, MORE_A, MORE_B, GYM]) == []
    far = page("plans/gold.md", "Gold health plan", "Deductible: see the yearly summary, $2,500.", 5.0)
    assert alternatives(term_set("What is the yearly deductible?"), [PLAN_A, far, MORE_A, MORE_B, GYM]) == []


def test_one_passage_each_among_unrelated_hits_is_not_asked_about() -> None:
    """Two documents that each hold the question's words once, among hits of other documents, are
    two topics that share words more often than two readings of the question."""
    others = [page(f"misc/{n}.md", f"Note {n}", "The yearly review of travel per person.", 7.0) for n in range(3)]
    assert alternatives(term_set("What is the yearly deductible?"), [PLAN_A, PLAN_B, *others]) == []


@pytest.mark.parametrize(
    ("message", "key"),
    [
        ("Ok, that's all for now — bye!", "chat_bye"),
        ("好的，就这些，再见！", "chat_bye"),
        ("Great, thanks for the help", "chat_thanks"),
        ("多谢，没有别的问题了", "chat_thanks"),
    ],
)
def test_closings_are_small_talk(message: str, key: str) -> None:
    assert is_small_talk(message) and reply_key(message) == key


@pytest.mark.parametrize(
    "message",
    ["Thanks — and how many days of sick leave do contractors get?", "Goodbye process for leavers: what to return?"],
)
def test_a_question_with_a_closing_word_is_still_a_question(message: str) -> None:
    assert not is_small_talk(message)


def test_wishes_are_small_talk_and_a_hope_about_a_policy_is_a_question() -> None:
    assert is_small_talk("Hi! Hope your weekend was good 🙂")
    assert not is_small_talk("I hope the parking policy covers visitors?")


async def test_a_goodbye_gets_a_goodbye_not_the_refusal(tmp_path: Path, handbook_kb) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        bye = only(await Conversation(chat).say("Ok, that's all for now — bye!"))
        zh = only(await Conversation(chat, "t:zh").say("好的，就这些，再见！"))
    assert (bye.route, bye.text) == ("direct_reply", say("chat_bye"))
    assert (zh.route, zh.text) == ("direct_reply", say("chat_bye", "zh"))


async def test_a_new_question_typed_while_a_clarification_waits_is_answered_as_one(tmp_path: Path, handbook_kb) -> None:
    """Typed while the bot waits for a pick, a question naming none of the options is answered for
    itself (it was appended to the waiting question, which it did not answer); words of an option
    still pick it."""
    async with service(tmp_path, "", handbook_kb) as chat:
        talk = Conversation(chat)
        assert only(await talk.say("How do I reset my password?")).kind is ReplyKind.CLARIFICATION
        reply = only(await talk.say("What do I do when my laptop is stolen on a business trip?"))
        assert reply.kind is ReplyKind.ANSWER and "it/laptops.md" in [c["path"] for c in reply.citations]
        ask = only(await talk.say("How do I reset my password?"))
        vpn = next(c.label for c in ask.choices if "VPN" in c.label)
        picked = only(await talk.say(f"the {vpn.split(' › ')[0]} one"))
        assert picked.kind is ReplyKind.ANSWER and "it/vpn.md" in [c["path"] for c in picked.citations]


async def test_a_typed_answer_naming_no_option_gets_an_answer_not_the_same_buttons_again(
    tmp_path: Path, handbook_kb
) -> None:
    async with service(tmp_path, "", handbook_kb) as chat:
        talk = Conversation(chat)
        asked = only(await talk.say("How many days of leave do I get a year?"))
        assert asked.kind is ReplyKind.CLARIFICATION
        reply = only(await talk.say("As an employee"))
        assert reply.kind is ReplyKind.ANSWER and reply.citations, (reply.kind, reply.text[:200])


CARE = page(
    "people/care.md",
    "Care leave",
    "You may take care leave to look after a sick relative. Care leave is paid at 70 %.\n\nTell HR by e-mail.",
    9.0,
    heading="Who may take it",
)
STUDY = page("people/study.md", "Study leave", "Study leave for a relative's exam is not granted.", 8.5)


async def test_a_short_section_all_the_chosen_sentences_come_from_is_quoted_whole() -> None:
    reasoner = OfflineReasoner(frequencies)
    question = "Can I take care leave for a sick relative?"
    answer = await reasoner.extract(question, [CARE])
    assert answer.startswith(say("from_section", label="Care leave › Who may take it")), answer
    assert "Tell HR by e-mail." in answer and answer.endswith("[1]")  # what the words alone did not choose
    both = "Is care leave or study leave granted for a relative?"
    mixed = await reasoner.extract(both, [CARE, STUDY])  # sentences of two places: listed as before
    assert mixed.startswith(say("from_documents")) and "[2]" in mixed and "Tell HR" not in mixed, mixed


async def test_statements_of_one_section_are_asked_back_and_the_pick_quotes_its_own(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    """A long leave section states each case's days in the same words, a paragraph each: the short
    question is asked back with the cases, and the button picked is answered with its own."""
    docs = tmp_path / "docs"
    docs.mkdir()
    rules = "\n\n".join(
        f"Rule {n}: requests are entered in the planning tool and approved by a lead." for n in range(12)
    )
    (docs / "leave.md").write_text(
        "# Leave\n\nIf you work full time, you get 25 days of leave a year.\n\n"
        "Leave is booked in the planning tool.\n\n"
        f"If you work part time, you get 15 days of leave a year.\n\n{rules}\n"
    )
    (docs / "lunch.md").write_text("# Lunch\n\nLunch is served at noon in the canteen.\n")
    assert Ingestor(kb, 1200, 150).ingest_paths([docs]).ok
    async with service(tmp_path, "", kb) as chat:
        talk = Conversation(chat)
        ask = only(await talk.say("How many days of leave do I get?"))
        assert [c.label for c in ask.choices] == ["If you work full time", "If you work part time"], ask.text
        picked = only(await talk.click(ask.interrupt_id, 1))
    assert picked.kind is ReplyKind.ANSWER and "15 days" in picked.text and "25 days" not in picked.text, picked.text
