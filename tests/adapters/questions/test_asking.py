"""What a help channel answers unasked: messages that ask something, not the channel's chatter."""

from __future__ import annotations

import pytest

from threadsage.adapters.questions.asking import asks_something

ASKS = [
    "How do I reset my VPN password?",
    "Who is the CFO?",
    "When do I get paid?",
    "Does anyone know where the printer drivers are",
    "is the wifi down for anyone else",
    "I need help with my expense claim",
    "Can someone tell me the guest network password",
    "Quick question: what's the limit for hotel nights in Berlin?",
    "The build server keeps failing on my branch? no idea why",
    "请问年假有几天",
    "VPN 连不上了吗",
    "怎么申请报销",
]
CHATTER = [
    "Deploy is done, thanks all!",
    "Heads up: the office is closed tomorrow.",
    "Great job on the release!",
    "Shipping the new build now",
    "good morning team",
    "thanks!",
    "ok?",
    "lunch?",
    "",
    "   ",
    "今天的会取消了。",
]


@pytest.mark.parametrize("text", ASKS)
def test_a_question_or_a_request_asks(text: str) -> None:
    assert asks_something(text)


@pytest.mark.parametrize("text", CHATTER)
def test_statements_small_talk_and_short_replies_do_not(text: str) -> None:
    assert not asks_something(text)
