"""The drafts of a streamed answer: what a draft shows of a partial reply, the pace at which drafts
go out (a clock of the test's own), and a draft that cannot grow withdrawn first."""

from __future__ import annotations

from langchain_core.messages import AIMessageChunk

from threadsage.adapters.reasoning.llm.calls import WORDS
from threadsage.graph.drafts import Drafts, readable, words_in


def test_a_draft_leaves_out_citation_markers_and_holds_back_half_written_ones() -> None:
    assert readable("Premium economy [1] is allowed [2][3].") == "Premium economy is allowed."
    assert readable("Premium economy [1") == "Premium economy"
    assert readable("See [the policy](") == "See [the policy]("


def test_the_words_of_a_partial_structured_reply_are_its_field_only() -> None:
    assert words_in('{"answer": "Premium econ', "answer") == "Premium econ"
    assert words_in('{"used": [1], "answ', "answer") == ""
    assert words_in('```json\n{"answer": "Yes', "answer") == "Yes"
    assert words_in('{"answer": "Yes."}\n\nThis JSON object answers', "answer") == "Yes."
    assert words_in("Plain words from a server that ignored tool_choice", "answer").startswith("Plain")
    assert words_in('{"not": "json for a text call', "") == '{"not": "json for a text call'


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def chunk(text: str, message_id: str = "run-1", last: bool = False, arguments: bool = False) -> AIMessageChunk:
    if arguments:
        calls = [{"name": None, "args": text, "id": None, "index": 0, "type": "tool_call_chunk"}]
        return AIMessageChunk(
            content="", id=message_id, tool_call_chunks=calls, chunk_position="last" if last else None
        )
    return AIMessageChunk(content=text, id=message_id, chunk_position="last" if last else None)


def test_the_first_words_go_at_once_then_at_most_one_draft_an_interval_and_the_last_at_the_end() -> None:
    shown: list[str] = []
    clock = Clock()
    drafts = Drafts(shown.append, interval=0.2, clock=clock)
    meta = {WORDS: "answer"}
    for n, piece in enumerate(['{"answer": "One', " two", " three", " four", " five", ' six."}']):
        clock.now = n * 0.05  # 20 tokens a second
        drafts.token(chunk(piece, arguments=True), meta)
    assert shown == ["One", "One two three four five"]
    drafts.token(chunk("", last=True, arguments=True), meta)
    assert shown[-1] == "One two three four five six."


def test_calls_not_for_the_person_are_ignored_and_a_new_call_withdraws_first() -> None:
    shown: list[str] = []
    drafts = Drafts(shown.append, interval=0.0)
    drafts.token(chunk("routing thoughts"), {})  # no WORDS: a router's tokens
    assert shown == []
    drafts.token(chunk("Hello the", last=True), {WORDS: ""})
    drafts.token(chunk("Hi", message_id="run-2", last=True), {WORDS: ""})  # a retry writes anew
    assert shown == ["Hello the", "", "Hi"]
    drafts.withdraw()
    drafts.withdraw()  # once is enough
    assert shown == ["Hello the", "", "Hi", ""]


def test_text_in_content_blocks_counts_and_other_blocks_do_not() -> None:
    """Anthropic's chunks carry lists of blocks: text blocks are words, a tool's JSON delta is not."""
    shown: list[str] = []
    drafts = Drafts(shown.append, interval=0.0)
    blocks = [{"type": "text", "text": "Hello", "index": 0}, {"type": "input_json_delta", "partial_json": "{"}]
    drafts.token(AIMessageChunk(content=blocks, id="run-1"), {WORDS: ""})
    assert shown == ["Hello"]
