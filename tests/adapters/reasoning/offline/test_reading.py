"""The offline reader's decisions (issue 34): what the meaning adds to the words — a question in
a person's own words is read rather than refused, the passage shown is one place around its
closest sentence, short questions two documents answer alike are asked back, and a question in two
parts gets the place of each."""

from __future__ import annotations

from threadsage.adapters.reasoner import Passage
from threadsage.adapters.reasoning.offline.confidence import Signals, Sureness
from threadsage.adapters.reasoning.offline.reading import (
    CLOSE_ENOUGH,
    EXCERPT_CHARS,
    PLAUSIBLE,
    Reading,
    closest_place,
    kinds,
    parts,
    read,
    readings,
    window,
)
from threadsage.support.text import term_set


def passage(path: str, title: str, heading: str, text: str, score: float = 1.0) -> Passage:
    return Passage(id=path + heading, path=path, source=path, title=title, heading=heading, text=text, score=score)


LAPTOPS = passage(
    "it/laptops.md", "Laptops and equipment", "Replacement", "Company laptops are replaced every three years."
)
PAY = passage("finance/pay.md", "Expenses", "Payment", "Approved claims are paid with your salary on the 25th.")
WORDS_REFUSE = Signals(coverage=0.0, unknown=1.0, margin=1.0)  # what the words alone say of a paraphrase


def test_a_question_sharing_no_word_with_its_answer_is_read_not_refused() -> None:
    reading = read("When is my expense money paid back?", [LAPTOPS, PAY], WORDS_REFUSE)
    assert WORDS_REFUSE.sureness() is Sureness.ABSTAIN
    assert reading.sureness is not Sureness.ABSTAIN and reading.lead == 1 and reading.by_meaning
    assert reading.closest_sentence == "Approved claims are paid with your salary on the 25th."


def test_nothing_close_in_words_or_meaning_is_not_covered() -> None:
    reading = read("Can I bring my dog to work?", [LAPTOPS, PAY], WORDS_REFUSE)
    assert reading.sureness is Sureness.ABSTAIN


def test_a_passage_read_somewhat_close_is_quoted_unless_most_of_the_question_is_unknown_words() -> None:
    """Closer than CLOSE_ENOUGH but not PLAUSIBLE: quoted as the closest passage when the documents
    use most of the question's words (a person's own wording of something they cover), "not
    covered" when most of it is in words no document uses (something they never mention)."""
    access = passage("office/access.md", "Access", "Cards", "Access cards are handled by the facilities desk.")
    evidence = [access, LAPTOPS, PAY]
    question = "The door will not open with my card. Who helps?"
    partly_known = read(question, evidence, Signals(coverage=0.1, unknown=0.4, margin=1.0))
    assert (partly_known.sureness, partly_known.lead) == (Sureness.HEDGE, 0)
    assert CLOSE_ENOUGH <= partly_known.near[0].best < PLAUSIBLE  # the band this is about
    mostly_unknown = read(question, evidence, Signals(coverage=0.1, unknown=0.8, margin=1.0))
    assert mostly_unknown.sureness is Sureness.ABSTAIN


def test_words_sure_on_incidental_terms_of_a_question_about_something_unmentioned_are_not_covered() -> None:
    """The words hold "bring" and "office"; "dog", a good part of the question, no document uses,
    and the passage the words chose reads far from the question: not covered."""
    office = passage("office/hours.md", "Office", "Opening hours", "The office opens at 8; bring your badge.")
    evidence = [office, LAPTOPS, PAY]
    question = "Can I bring my dog to the office?"
    topic_unknown = read(question, evidence, Signals(coverage=0.8, unknown=0.35, margin=2.0))
    assert topic_unknown.near[0].best < CLOSE_ENOUGH  # the band this is about
    assert topic_unknown.sureness is Sureness.ABSTAIN
    all_known = read(question, evidence, Signals(coverage=0.8, unknown=0.0, margin=2.0))
    assert all_known.sureness is Sureness.ANSWER  # the same words, with nothing unknown, stand


def test_a_sure_reading_of_the_words_stands_when_the_meaning_agrees() -> None:
    sure = Signals(coverage=0.9, unknown=0.0, margin=2.0, lead=0)
    reading = read("How often are company laptops replaced?", [LAPTOPS, PAY], sure)
    assert (reading.sureness, reading.lead, reading.by_meaning) == (Sureness.ANSWER, 0, False)


def test_a_chinese_question_is_left_to_the_words() -> None:
    reading = read("报销的钱什么时候发？", [LAPTOPS, PAY], WORDS_REFUSE)
    assert reading == Reading(Sureness.ABSTAIN, 0)


def test_a_short_section_is_shown_whole() -> None:
    text = "Intro line.\n\n- one\n- two"
    assert window(text, "two") == text


def test_a_long_section_is_shown_from_the_paragraph_of_its_closest_sentence() -> None:
    filler = "\n\n".join(f"Paragraph {n} says something long enough to matter here. " * 3 for n in range(12))
    text = f"{filler}\n\nThe hotel limit in Lisbon\nis 150 euros a night.\n\nAfter it, more text."
    shown = window(text, "The hotel limit in Lisbon is 150 euros a night.")
    assert shown.startswith("The hotel limit in Lisbon\nis 150 euros a night.") and "After it" in shown
    assert len(shown) <= EXCERPT_CHARS


def test_a_paragraph_right_under_a_heading_is_shown_with_the_heading_that_names_it() -> None:
    filler = "\n\n".join(f"### Term {n}\nIt means something long enough to matter here. " * 3 for n in range(12))
    text = f"{filler}\n\n### Flagpole\nOur feature-flag service, for switching features on or off.\n\n### Next"
    assert window(text, "Our feature-flag service, for switching features on or off.").startswith("### Flagpole\n")


def test_a_table_row_is_shown_with_its_header_and_a_code_fence_is_closed() -> None:
    rows = "\n".join(f"| city {n} | {n * 10} |" for n in range(60))
    table = f"Limits per city:\n| City | Limit |\n|---|---|\n{rows}"
    assert window(table, "city 40 | 400").startswith("Limits per city:\n| City | Limit |")
    code = "```\n" + "\n".join(f"run step {n}" for n in range(200)) + "\n```"
    assert window(code, "run step 3").endswith("```")


def test_a_short_question_two_documents_answer_alike_is_asked_back() -> None:
    employees = passage(
        "people/leave-employees.md",
        "Leave for employees",
        "Annual leave",
        "Employees get 25 days of paid annual leave a year.",
    )
    contractors = passage(
        "people/leave-contractors.md",
        "Leave for contractors",
        "Annual leave",
        "Contractors get 12 days of paid annual leave a year.",
    )
    evidence = [employees, contractors, LAPTOPS]
    question = "How much leave do I get?"
    reading = read(question, evidence, Signals(coverage=0.8, unknown=0.0, margin=1.0))
    assert sorted(readings(question, evidence, reading)) == [0, 1]
    named = "How much leave do contractors get?"  # names one reading
    assert readings(named, evidence, read(named, evidence, Signals(0.8, 0.0, 1.0))) == []


LEAVE_KINDS = [
    passage("people/leave.md", "Leave", "Kinds of leave > Study leave", "Study leave: up to 2 weeks a year, paid."),
    passage("people/leave.md", "Leave", "Kinds of leave > Unpaid leave", "Unpaid leave: up to 8 weeks a year."),
    passage("people/leave.md", "Leave", "Kinds of leave > Jury leave", "Jury leave: as long as the court needs."),
]


def test_a_short_question_naming_what_several_sections_of_a_page_are_kinds_of_is_asked_back() -> None:
    question = "How much leave may I take?"
    reading = read(question, LEAVE_KINDS, Signals(coverage=0.8, unknown=0.0, margin=1.0))
    # Study and unpaid leave say how much; jury leave reads too far from it to be one.
    assert sorted(readings(question, LEAVE_KINDS, reading)) == [0, 1]
    named = "How much unpaid leave may I take?"  # names its kind: one heading holds more of it
    assert kinds(term_set(named), LEAVE_KINDS) == []


def test_a_heading_word_the_other_sections_also_hold_names_no_kind() -> None:
    """ "Care" is in one heading only, but the other section speaks of care too: the question names
    no kind by it, and each section is a reading."""
    care = [
        passage("people/leave.md", "Leave", "Emergency care leave", "For a few days of care you keep 80% of your pay."),
        passage("people/leave.md", "Leave", "Extended leave", "Extended care of a seriously ill relative is unpaid."),
    ]
    assert kinds(term_set("Is care leave paid?"), care) == [0, 1]
    # A word of one heading that the other does not hold at all names its kind.
    assert kinds(term_set("Is emergency care leave paid?"), care) == []


def test_steps_and_parts_of_a_section_are_not_kinds_of_it() -> None:
    steps = [
        passage("it/passwords.md", "Passwords", "Rules > 1. Use a manager", "Use the password manager."),
        passage("it/passwords.md", "Passwords", "Rules > 2. Use unique passwords", "Never reuse a password."),
    ]
    assert kinds(term_set("Which password manager should I use?"), steps) == []
    parts = [
        passage("people/leave.md", "Leave", "Parental leave", "Parents get leave."),
        passage("people/leave.md", "Leave", "Parental leave > Partner leave", "Partners get one week."),
    ]
    assert kinds(term_set("How much leave do I get?"), parts) == []


def test_a_question_in_two_parts_gets_the_place_of_each_part() -> None:
    question = "How often are laptops replaced, and when are expense claims paid back?"
    first, second = parts(question)
    assert closest_place(second, [LAPTOPS, PAY]) == (1, "Approved claims are paid with your salary on the 25th.")
    assert closest_place(first, [LAPTOPS, PAY]) == (0, "Company laptops are replaced every three years.")
    assert parts("How often are laptops replaced?") == []
    assert closest_place("Is there a choir I can sing in?", [LAPTOPS, PAY]) is None


def test_a_second_part_may_begin_with_a_preposition() -> None:
    assert parts("Which desk do new staff get, and on which floor is the printer?")[1] == (
        "on which floor is the printer?"
    )
    assert parts("Where do I send it, and by which hour must it arrive?")[1] == "by which hour must it arrive?"
    assert parts("Is the canteen open, and if not, which café is?")[1] == "which café is?"
    assert parts("Tea and biscuits are served on which floor?") == []


TRIP = passage(
    "travel/trips.md",
    "Travel",
    "Booking",
    "Business trips are booked through the travel desk, and the costs are claimed afterwards.",
)


def test_a_sure_reading_on_few_of_the_questions_words_yields_to_a_clearly_closer_meaning() -> None:
    # The words found "travel" and "spent" in the booking page; the meaning reads the payment page closer.
    question = "When is money I spent on travel paid back to me?"
    weak = read(question, [TRIP, PAY], Signals(coverage=0.3, unknown=0.0, margin=2.0, lead=0))
    assert (weak.lead, weak.by_meaning) == (1, True)
    # Holding most of the question, the words keep their lead unless the meaning is far closer.
    strong = read(question, [TRIP, PAY], Signals(coverage=0.9, unknown=0.0, margin=2.0, lead=0))
    assert (strong.lead, strong.by_meaning) == (0, False)


MEALS = [
    passage("finance/meals-oslo.md", "Expenses – Oslo office", "Meals", "Claim up to 50 euros a day for meals."),
    passage("finance/meals-lima.md", "Expenses – Lima office", "Meals", "Claim up to 40 euros a day for meals."),
    LAPTOPS,
]


def test_one_section_of_parallel_documents_is_asked_back_though_the_question_is_long() -> None:
    # Longer than a short question, but the same section of two offices' policies reads alike.
    question = "How much am I allowed to claim for meals each day on a business trip?"
    reading = read(question, MEALS, Signals(coverage=0.8, unknown=0.0, margin=1.0))
    assert sorted(readings(question, MEALS, reading)) == [0, 1]
    named = "How much am I allowed to claim for meals each day on a business trip from Lima?"
    assert readings(named, MEALS, read(named, MEALS, Signals(0.8, 0.0, 1.0))) == []
    # A question in two parts is answered part by part, not asked back.
    two = "What may I claim for meals each day, and how often are laptops replaced?"
    assert readings(two, MEALS, read(two, MEALS, Signals(0.8, 0.0, 1.0))) == []


def test_a_sentence_far_down_a_long_list_is_shown_from_its_own_line() -> None:
    items = "\n".join(f"- Item {n} is one of the things this list names at length." for n in range(40))
    text = f"The list:\n{items}"
    shown = window(text, "Item 35 is one of the things this list names at length.")
    assert shown.startswith("- Item 35 ") and len(shown) <= EXCERPT_CHARS
