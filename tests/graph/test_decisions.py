"""The graph's pure decisions, case by case: how a route proposal resolves to a strategy, which text
a clarification answer stands for, and which citation markers survive and how they are renumbered."""

from __future__ import annotations

import logging

import pytest

from threadsage.adapters.reasoner import MAX_OPTION_CHARS, Passage, RouteDecision
from threadsage.graph.context import Policy
from threadsage.graph.nodes.clarify import chosen_text
from threadsage.graph.nodes.compose import SNIPPET_CHARS, validate_citations
from threadsage.graph.nodes.understand import resolve


def doc(path: str, title: str, heading: str = "", text: str = "") -> Passage:
    return Passage(
        id=f"{path}#{heading}",
        path=path,
        source=f"handbook/{path}",
        title=title,
        heading=heading,
        text=text or f"About {title}.",
        score=1.0,
    )


ANNUAL = doc("people/leave.md", "Leave", "Annual leave")
SICK = doc("people/leave.md", "Leave", "Sick leave")
VPN = doc("it/vpn.md", "VPN", "Setup > Linux")
EXPENSES = doc("finance/expenses.md", "Expenses")
EVIDENCE = [ANNUAL, SICK, VPN, EXPENSES]  # three documents; the first two sections share one
LONG = doc("people/travel.md", "T" * 90)  # a title too long for a button

WHICH = "Which of these do you mean?"
MORE = "Could you say a bit more about what you need?"
USED_UP = " (clarification rounds used up: best effort)"


def proposal(intent: str, confidence: float, **fields: object) -> RouteDecision:
    return RouteDecision.model_validate({"intent": intent, "confidence": confidence, "reasoning": "why", **fields})


Expected = tuple[str, str, list[str], list[str | None]]


def answers(strategy: str) -> Expected:
    return (strategy, "", [], [])


def clarifies(prompt: str, options: list[str], sources: list[str | None]) -> Expected:
    return ("clarify_needed", prompt, options, sources)


# One option per document of EVIDENCE, each pointing at its first passage.
FROM_EVIDENCE = clarifies(
    WHICH, ["Leave › Annual leave", "VPN › Setup › Linux", "Expenses"], [ANNUAL["id"], VPN["id"], EXPENSES["id"]]
)
CUT = "T" * (MAX_OPTION_CHARS - 1) + "…"

# (proposal, evidence, rounds so far, policy) → (strategy, prompt, options, ids of the options' passages)
RESOLVE_CASES = [
    pytest.param(proposal("FACT_LOOKUP", 0.9), EVIDENCE, 0, Policy(), answers("fast_retrieval"),
                 id="confident fact lookup answers fast"),
    pytest.param(proposal("CHIT_CHAT", 0.9), EVIDENCE, 0, Policy(), answers("direct_reply"), id="chit-chat"),
    pytest.param(proposal("HOW_TO", 0.9), EVIDENCE, 0, Policy(), answers("standard_retrieval"), id="how-to"),
    pytest.param(proposal("COMPARISON", 0.9), EVIDENCE, 0, Policy(), answers("deep_search"), id="comparison"),
    pytest.param(proposal("CODE_SEARCH", 0.9), EVIDENCE, 0, Policy(), answers("code_search"), id="code search"),
    pytest.param(proposal("UNKNOWN", 0.9), EVIDENCE, 0, Policy(), answers("fallback"), id="unknown"),
    pytest.param(proposal("HOW_TO", 0.6), EVIDENCE, 0, Policy(), answers("standard_retrieval"),
                 id="confidence at the threshold does not clarify"),
    pytest.param(proposal("HOW_TO", 0.59), EVIDENCE, 0, Policy(), FROM_EVIDENCE,
                 id="low confidence clarifies with one option per document of the evidence"),
    pytest.param(proposal("HOW_TO", 0.95, clarify=True, clarify_prompt=" Which leave? ",
                          clarify_options=["Annual leave", "Sick leave"]), EVIDENCE, 0, Policy(),
                 clarifies("Which leave?", ["Annual leave", "Sick leave"], [None, None]),
                 id="explicit clarify keeps the router's prompt and options"),
    pytest.param(proposal("HOW_TO", 0.95, clarify=True, clarify_options=["Leave › Sick leave", "VPN"]),
                 EVIDENCE, 0, Policy(), clarifies(WHICH, ["Leave › Sick leave", "VPN"], [SICK["id"], VPN["id"]]),
                 id="options that name a passage point at it"),
    pytest.param(proposal("HOW_TO", 0.95, clarify=True, clarify_options=["Only this"]), EVIDENCE, 0, Policy(),
                 FROM_EVIDENCE, id="a single router option is replaced by the evidence's"),
    pytest.param(proposal("HOW_TO", 0.95, clarify=True, clarify_options=[
                     "  Annual   leave ", "annual LEAVE", "", "Sick leave", "Unpaid leave", "Other"]),
                 [], 0, Policy(), clarifies(WHICH, ["Annual leave", "Sick leave", "Unpaid leave"], [None] * 3),
                 id="options are trimmed, deduplicated ignoring case, blanks dropped, three at most"),
    pytest.param(proposal("HOW_TO", 0.95, clarify=True, clarify_options=["x" * 100, "Short"]), [], 0, Policy(),
                 clarifies(WHICH, ["x" * (MAX_OPTION_CHARS - 1) + "…", "Short"], [None, None]),
                 id="a long option is cut to a button's length"),
    pytest.param(proposal("HOW_TO", 0.2), [LONG, EXPENSES], 0, Policy(),
                 clarifies(WHICH, [CUT, "Expenses"], [LONG["id"], EXPENSES["id"]]),
                 id="a cut label still points at its passage"),
    pytest.param(proposal("UNKNOWN", 0.2), [], 0, Policy(), clarifies(MORE, [], []),
                 id="no evidence and no options: ask for more, no buttons"),
    pytest.param(proposal("HOW_TO", 0.2), [ANNUAL, SICK], 0, Policy(), clarifies(MORE, [], []),
                 id="sections of one document are no choice"),
    pytest.param(proposal("HOW_TO", 0.2, clarify_prompt="Which office?"), [], 0, Policy(),
                 clarifies("Which office?", [], []), id="the router's prompt stands without options"),
    pytest.param(proposal("FACT_LOOKUP", 0.9, clarify_prompt="Which?", clarify_options=["A", "B"]), EVIDENCE, 0,
                 Policy(), clarifies("Which?", ["A", "B"], [None, None]),
                 id="the router's options clarify whatever flag it set"),
    pytest.param(proposal("HOW_TO", 0.3), EVIDENCE, 1, Policy(), FROM_EVIDENCE, id="one round left still clarifies"),
    pytest.param(proposal("HOW_TO", 0.3), EVIDENCE, 2, Policy(), answers("standard_retrieval"),
                 id="rounds used up: best effort with the intent's strategy"),
    pytest.param(proposal("FACT_LOOKUP", 0.3, clarify=True), EVIDENCE, 2, Policy(), answers("fast_retrieval"),
                 id="rounds used up: a fact lookup stays fast"),
    pytest.param(proposal("UNKNOWN", 0.1), EVIDENCE, 2, Policy(), answers("standard_retrieval"),
                 id="rounds used up: fallback searches instead"),
    pytest.param(proposal("CHIT_CHAT", 0.9, clarify=True), EVIDENCE, 3, Policy(), answers("standard_retrieval"),
                 id="rounds used up: chit-chat searches instead"),
    pytest.param(proposal("HOW_TO", 0.8), EVIDENCE, 0, Policy(clarify_threshold=0.9), FROM_EVIDENCE,
                 id="a stricter threshold clarifies sooner"),
    pytest.param(proposal("UNKNOWN", 0.1), EVIDENCE, 0, Policy(max_clarify_rounds=0), answers("standard_retrieval"),
                 id="no rounds allowed: never clarifies"),
]  # fmt: skip


@pytest.mark.parametrize(("routed", "evidence", "rounds", "policy", "expected"), RESOLVE_CASES)
def test_resolve(
    routed: RouteDecision,
    evidence: list[Passage],
    rounds: int,
    policy: Policy,
    expected: Expected,
) -> None:
    decision = resolve(routed, evidence, policy, rounds)
    sources = [s["id"] if s else None for s in decision["clarify_sources"]]
    assert (decision["strategy"], decision["clarify_prompt"], decision["clarify_options"], sources) == expected
    assert (decision["intent"], decision["confidence"]) == (routed.intent, routed.confidence)
    wanted_to_clarify = routed.clarify or routed.confidence < policy.clarify_threshold
    used_up = wanted_to_clarify and rounds >= policy.max_clarify_rounds
    assert decision["reasoning"] == "why" + (USED_UP if used_up else "")


def test_a_round_answered_by_words_matching_no_option_is_not_asked_again() -> None:
    """The person typed an answer that named no option ("as an employee"): the same buttons again
    would ask the same question twice, so the best effort answers — though rounds are left."""
    offered = FROM_EVIDENCE[2]
    again = resolve(proposal("HOW_TO", 0.3), EVIDENCE, Policy(), 1, unpicked=offered)
    assert again["strategy"] == "standard_retrieval" and again["clarify_options"] == []
    assert again["reasoning"] == "why (offered in the round answered: best effort)"
    # Options the round did not offer are a new question, asked while rounds are left.
    other = resolve(proposal("HOW_TO", 0.3), EVIDENCE, Policy(), 1, unpicked=["Travel", "Payroll"])
    assert other["strategy"] == "clarify_needed" and other["clarify_options"] == offered


OPTIONS = ["Annual leave", "Sick leave", "Parental leave"]

# (resume value, options) → the chosen text, or None for "not an answer" (ValueError)
CHOSEN_CASES = [
    pytest.param({"option": 0}, OPTIONS, "Annual leave", id="first button"),
    pytest.param({"option": 2}, OPTIONS, "Parental leave", id="last button"),
    pytest.param({"option": 1, "text": "ignored"}, OPTIONS, "Sick leave", id="a button wins over text"),
    pytest.param({"option": 3}, OPTIONS, None, id="button past the options"),
    pytest.param({"option": -1}, OPTIONS, None, id="negative button"),
    pytest.param({"option": "1"}, OPTIONS, None, id="a string is not a button"),
    pytest.param({"option": 0}, [], None, id="a button when there are no options"),
    pytest.param({"option": 7, "text": "Sick leave, please"}, OPTIONS, "Sick leave, please",
                 id="an out-of-range button falls back to the text"),
    pytest.param({"option": None, "text": "Sick"}, OPTIONS, "Sick", id="no button, text"),
    pytest.param({"text": "2"}, OPTIONS, "Sick leave", id="a typed digit picks that option"),
    pytest.param({"text": " 3 "}, OPTIONS, "Parental leave", id="a typed digit with spaces"),
    pytest.param({"text": "1"}, OPTIONS, "Annual leave", id="typed 1 is the first option"),
    pytest.param({"text": "0"}, OPTIONS, "0", id="typed 0 is taken as text"),
    pytest.param({"text": "4"}, OPTIONS, "4", id="a typed number past the options is text"),
    pytest.param({"text": "12"}, OPTIONS, "12", id="a two-digit number is text"),
    pytest.param({"text": "2"}, [], "2", id="a typed digit without options is text"),
    pytest.param({"text": "2."}, OPTIONS, "2.", id="a digit with a full stop is text"),
    pytest.param({"text": "²"}, OPTIONS, "²", id="a superscript digit is text, not an option"),
    pytest.param({"text": "①"}, OPTIONS, "①", id="a circled digit is text, not an option"),
    pytest.param({"text": "  the unpaid one  "}, OPTIONS, "the unpaid one", id="words are the answer, trimmed"),
    pytest.param({"text": "   "}, OPTIONS, None, id="blank text"),
    pytest.param({"text": None}, OPTIONS, None, id="no text"),
    pytest.param({}, OPTIONS, None, id="empty resume value"),
    pytest.param("2", OPTIONS, None, id="a bare string is not a resume value"),
    pytest.param(1, OPTIONS, None, id="a bare index is not a resume value"),
    pytest.param(None, OPTIONS, None, id="nothing"),
]  # fmt: skip


@pytest.mark.parametrize(("reply", "options", "expected"), CHOSEN_CASES)
def test_chosen_text(reply: object, options: list[str], expected: str | None) -> None:
    if expected is None:
        with pytest.raises(ValueError, match="not an answer to this clarification"):
            chosen_text(reply, options)
    else:
        assert chosen_text(reply, options) == expected


A = doc("a.md", "Alpha", "One")
B = doc("b.md", "Beta")
C = doc("c.md", "Gamma", "Three > Four")
DOCS = [A, B, C]

# (answer, passages) → (answer as shown, paths of the citations in their new order)
CITATION_CASES = [
    pytest.param("No sources here.", DOCS, "No sources here.", [], id="no markers"),
    pytest.param("Leave is 25 days [1].", DOCS, "Leave is 25 days [1].", ["a.md"], id="one marker"),
    pytest.param("First [2], then [1].", DOCS, "First [1], then [2].", ["b.md", "a.md"],
                 id="renumbered in order of first use"),
    pytest.param("Twice [3] and again [3].", DOCS, "Twice [1] and again [1].", ["c.md"], id="repeats cite once"),
    pytest.param("Adjacent [1][3].", DOCS, "Adjacent [1][2].", ["a.md", "c.md"], id="adjacent markers"),
    pytest.param("Nowhere [4].", DOCS, "Nowhere.", [], id="a marker past the passages is dropped"),
    pytest.param("Zero [0] is not a passage.", DOCS, "Zero is not a passage.", [], id="marker 0 is dropped"),
    pytest.param("Mixed [1] and [5] sources [3].", DOCS, "Mixed [1] and sources [2].", ["a.md", "c.md"],
                 id="dropping one renumbers the rest"),
    pytest.param("Kept [2], dropped [9] , kept [1].", DOCS, "Kept [1], dropped, kept [2].", ["b.md", "a.md"],
                 id="no space is left before punctuation"),
    pytest.param("Padded [02].", DOCS, "Padded [1].", ["b.md"], id="a zero-padded marker"),
    pytest.param("Four digits [1000] stay.", DOCS, "Four digits [1000] stay.", [], id="four digits are not a marker"),
    pytest.param("Words [a] and [ 1 ] stay.", DOCS, "Words [a] and [ 1 ] stay.", [],
                 id="only bare numbers are markers"),
    pytest.param("Hi [1].", [], "Hi.", [], id="no passages: every marker points nowhere"),
    pytest.param("  Padded answer [1]  ", DOCS, "Padded answer [1]", ["a.md"], id="the answer is trimmed"),
    pytest.param("Ends on a bad marker [7]", DOCS, "Ends on a bad marker", [], id="a trailing dropped marker"),
    pytest.param("", DOCS, "", [], id="empty answer"),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "passages", "expected_text", "expected_paths"), CITATION_CASES)
def test_validate_citations(
    answer: str, passages: list[Passage], expected_text: str, expected_paths: list[str]
) -> None:
    text, citations = validate_citations(answer, passages)
    assert text == expected_text
    assert [c["path"] for c in citations] == expected_paths
    assert [c["number"] for c in citations] == list(range(1, len(expected_paths) + 1))


def test_a_citation_carries_its_passage_with_a_flat_short_snippet() -> None:
    long = doc("long.md", "Long", "Part > Section", "word\n\n  " * 100)
    short = doc("short.md", "Short", "", "Two\tlines\nof text.") | {"url": "https://handbook.example.com/short.md"}
    _, citations = validate_citations("See [2] and [1].", [long, short])
    assert citations[0] == {
        "number": 1,
        "title": "Short",
        "heading": "",
        "source": "handbook/short.md",
        "path": "short.md",
        "snippet": "Two lines of text.",
        "url": "https://handbook.example.com/short.md",
    }
    snippet = citations[1]["snippet"]
    assert citations[1]["url"] == ""  # a passage without a link (or saved before links) cites its path
    assert (citations[1]["number"], citations[1]["heading"]) == (2, "Part > Section")
    assert len(snippet) == SNIPPET_CHARS and snippet.endswith("word…") and "  " not in snippet


def test_dropped_markers_are_logged_once_each(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="threadsage.graph.nodes.compose"):
        validate_citations("A [9], B [1], C [9], D [4].", DOCS)
    assert [r.getMessage() for r in caplog.records] == ["removed citations that point nowhere: [4, 9]"]
