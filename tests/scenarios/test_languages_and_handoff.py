"""Replies that fit the asker, on the platforms' fakes: a Chinese question is answered, noticed and
labelled in Chinese; a question the documents don't cover points to the contact of its category
(a Slack mention only when the operator allows it); a source with a link is a link."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers import telegram_harness
from tests.helpers.locations import HANDBOOK_SITE
from tests.helpers.slack_harness import CHANNEL, Harness, dm_message, running
from tests.helpers.telegram_harness import exchange, private
from threadsage.delivery.jobs import Job
from threadsage.i18n import say

HOTEL_ZH = "出差住酒店的标准是多少？"
NO_DOGS = "Can I bring my dog to the office?"  # nothing in the handbook covers these
NO_DOGS_ZH = "我可以带宠物狗上班吗？"
VPN = "How do I connect to the VPN?"
HANDOFF = "it=#C024BE91L|it-help,people=@S0123ABCD|hr-team,*=#help-desk"
CATEGORIES = ["engineering", "finance", "it", "people"]
LI = {"id": 555666777, "is_bot": False, "first_name": "Li", "username": "lilei", "language_code": "zh-hans"}
ANN = {"id": 123456789, "is_bot": False, "first_name": "Ann", "username": "annlee", "language_code": "en"}
DM = "D222"  # the fake's DM with U222
SLACK_CONTACTS = {"it": "<#C024BE91L>", "people": "<!subteam^S0123ABCD>"}
NAMES = {"it": "#it-help", "people": "@hr-team"}


async def nearest(kb, question: str) -> str:
    """The category of the best hit for a question: whose contact a place reading every category gets."""
    [hit] = await kb.search(question, 1)
    assert hit.category in NAMES  # the handoff map names it: the test shows its own contact, not the default
    return hit.category


def shown(message: dict[str, Any]) -> str:
    """Every text a Slack message shows: its blocks' texts (as written, not JSON-escaped)."""
    texts: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("text"), str):
                texts.append(node["text"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(message.get("blocks", []))
    return "\n".join(texts)


async def slack_answer(slack: Harness, text: str, dm: bool = False) -> dict[str, Any]:
    if dm:
        await slack.event(dm_message(text, DM))
    else:
        await slack.mention(text)
    await slack.settle()
    return slack.fake.posted()[-1]


def slack_bot(tmp_path: Path, kb, **settings: Any):
    scoped = {
        "THREADSAGE_HANDOFF": HANDOFF,
        "THREADSAGE_CHANNEL_CATEGORIES": {CHANNEL: ["it"]},
        "THREADSAGE_DEFAULT_CATEGORIES": CATEGORIES,
    }
    return running(tmp_path, kb, fake=FakeSlack().start(), **(scoped | settings))


# --- Slack ---------------------------------------------------------------------------------


async def test_slack_answers_and_notices_a_chinese_question_in_chinese(tmp_path: Path, categorised_kb) -> None:
    async with slack_bot(tmp_path, categorised_kb, THREADSAGE_RATE_LIMIT_PER_MINUTE=1) as slack:
        answer = await slack_answer(slack, HOTEL_ZH, dm=True)
        assert shown(answer).startswith(say("from_documents", "zh")) and f"*{say('sources', 'zh')}:*" in shown(answer)
        assert "TripDesk" in shown(answer) and "From the documents" not in shown(answer)
        limited = await slack_answer(slack, "那火车票呢？", dm=True)
        assert limited["text"] == say("rate_limited", "zh")
    slack.fake.stop()


async def test_slack_hands_off_to_the_mentioned_contact_of_the_category(tmp_path: Path, categorised_kb) -> None:
    async with slack_bot(tmp_path, categorised_kb, THREADSAGE_HANDOFF_MENTION=True) as slack:
        in_channel = shown(await slack_answer(slack, NO_DOGS))  # the channel reads `it` only
        assert say("refusal") in in_channel and say("handoff", contact="<#C024BE91L>") in in_channel
        in_dm = shown(await slack_answer(slack, NO_DOGS, dm=True))  # every category: the nearest hit's
        assert say("handoff", contact=SLACK_CONTACTS[await nearest(categorised_kb, NO_DOGS)]) in in_dm
        in_chinese = shown(await slack_answer(slack, NO_DOGS_ZH, dm=True))
        contact = SLACK_CONTACTS[await nearest(categorised_kb, NO_DOGS_ZH)]
        # Not covered: refused, or the closest English passage quoted as possibly not answering.
        closest = say("closest_in_other_language", "zh", label="").split("*")[0]  # Slack renders the label
        assert say("refusal", "zh") in in_chinese or in_chinese.startswith(closest)
        assert say("handoff", "zh", contact=contact) in in_chinese
        answered = shown(await slack_answer(slack, VPN))  # covered: no hand-off
        assert "<#C024BE91L>" not in answered and "can help with this" not in answered
    slack.fake.stop()


async def test_slack_names_the_contact_without_mentioning_it_unless_allowed(tmp_path: Path, categorised_kb) -> None:
    async with slack_bot(tmp_path, categorised_kb) as slack:
        in_channel = shown(await slack_answer(slack, NO_DOGS))
        assert say("handoff", contact="#it-help") in in_channel and "<#" not in in_channel
        in_dm = shown(await slack_answer(slack, NO_DOGS, dm=True))
        assert say("handoff", contact=NAMES[await nearest(categorised_kb, NO_DOGS)]) in in_dm and "<!" not in in_dm
    slack.fake.stop()


async def test_slack_sources_link_to_the_published_page(tmp_path: Path, categorised_kb) -> None:
    async with slack_bot(tmp_path, categorised_kb) as slack:
        answer = shown(await slack_answer(slack, VPN))
    slack.fake.stop()
    assert f"<{HANDBOOK_SITE}vpn.md|VPN access with Larkspur Connect" in answer


async def test_without_a_handoff_map_an_uncovered_answer_points_nowhere(slack: Harness) -> None:
    answer = shown(await slack_answer(slack, NO_DOGS))
    assert say("refusal") in answer and "can help with this" not in answer


async def test_slack_buttons_guests_and_give_ups_speak_the_language_of_their_message(
    tmp_path: Path, categorised_kb
) -> None:
    """A click has no text: it speaks the language of the message holding the button. A guest
    from another organisation is told in the language they wrote in; the queue's apology for a
    turn it gave up on is in the question's language."""
    async with slack_bot(tmp_path, categorised_kb) as slack:
        answer = await slack_answer(slack, HOTEL_ZH, dm=True)
        [votes] = next(b for b in answer["blocks"] if b["type"] == "context_actions")["elements"]
        await slack.click(answer, 0)  # 👍
        await slack.click(answer, 1, value=votes["negative_button"]["value"][:-2] + "AA")  # an altered 👎
        await slack.mention("出差可以报销哪些费用？", user="UEXT", user_team="T0OTHERORG")
        await slack.settle()
        said = sorted(e["text"] for e in slack.fake.of("chat.postEphemeral"))
        assert said == sorted(say(key, "zh") for key in ("slack_thanks_up", "slack_invalid_button", "slack_external"))
        event = {"channel": CHANNEL, "ts": "1710000000.999999", "user": "U222", "text": f"<@U0BOT> {HOTEL_ZH}"}
        place = {"team": "T1", "channel": CHANNEL, "thread_ts": event["ts"], "is_dm": False}
        await slack.bot.give_up(Job("slack", "message", {"event": event, "place": place}, "k"))
        assert slack.fake.posted()[-1]["text"] == say("apology", "zh")
    slack.fake.stop()


# --- Telegram ------------------------------------------------------------------------------


async def test_telegram_speaks_chinese_to_a_chinese_question_and_app(
    tmp_path: Path, fake: FakeBotAPI, categorised_kb
) -> None:
    settings = telegram_harness.bot_settings(tmp_path, fake, THREADSAGE_RATE_LIMIT_PER_MINUTE=1)
    async with telegram_harness.running(settings, categorised_kb):
        chat = private(LI)
        _q, help_text = await exchange(fake, chat, LI, "/help")
        assert help_text["text"] == say("tg_help", "zh", username="ask_bot")
        _q, answer = await exchange(fake, chat, LI, HOTEL_ZH)
        assert answer["text"].startswith(say("from_documents", "zh"))
        assert f"\n{say('sources', 'zh')}\n" in answer["text"]
        _q, limited = await exchange(fake, chat, LI, "那火车票呢？")
        assert limited["text"] == say("rate_limited", "zh")
        _q, english = await exchange(fake, private(ANN), ANN, "/help")  # another person, another language
        assert english["text"] == say("tg_help", "en", username="ask_bot")


async def test_telegram_hands_off_by_name_and_links_sources(tmp_path: Path, fake: FakeBotAPI, categorised_kb) -> None:
    settings = telegram_harness.bot_settings(
        tmp_path, fake, THREADSAGE_HANDOFF=HANDOFF, THREADSAGE_HANDOFF_MENTION=True
    )
    async with telegram_harness.running(settings, categorised_kb):
        chat = private(ANN)
        _q, uncovered = await exchange(fake, chat, ANN, NO_DOGS)
        contact = NAMES[await nearest(categorised_kb, NO_DOGS)]
        assert say("handoff", contact=contact) in uncovered["text"] and "<" not in uncovered["text"]
        _q, chinese = await exchange(fake, chat, ANN, NO_DOGS_ZH)
        assert say("handoff", "zh", contact=NAMES[await nearest(categorised_kb, NO_DOGS_ZH)]) in chinese["text"]
        _q, answer = await exchange(fake, chat, ANN, VPN)
    links = [e["url"] for e in answer.get("entities", []) if e["type"] == "text_link"]
    assert f"{HANDBOOK_SITE}vpn.md" in links and "can help with this" not in answer["text"]


async def test_telegram_refuses_clicks_and_apologises_in_the_language_of_the_message(
    tmp_path: Path, fake: FakeBotAPI, categorised_kb, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ann's Telegram is in English: her Chinese question's 👍 is thanked in Chinese (the answer's
    language); a chat not allowed is told in the language of its message, else of the app."""
    async with telegram_harness.running(telegram_harness.bot_settings(tmp_path, fake), categorised_kb) as bot:
        _q, answer = await exchange(fake, private(ANN), ANN, HOTEL_ZH)
        up = fake.click(answer, ANN, option=0)
        await fake.wait_for(lambda: fake.answers_to(up))
        assert fake.answers_to(up)[0]["text"] == say("tg_thanks_up", "zh")

        async def broken(_turn: Any) -> AsyncIterator[Any]:
            raise RuntimeError("boom")
            yield  # an async generator, as the chat service's stream is

        monkeypatch.setattr(bot.chat, "stream", broken)  # the bot's own error handler apologises
        _q, apology = await exchange(fake, private(ANN), ANN, "那火车票呢？")
        assert apology["text"] == say("apology", "zh")
    allowed = telegram_harness.bot_settings(tmp_path, fake, THREADSAGE_TELEGRAM_ALLOWED=str(ANN["id"]))
    async with telegram_harness.running(allowed, categorised_kb):
        _q, started = await exchange(fake, private(LI), LI, "/start")  # no words of its own: Li's app's
        assert started["text"] == say("tg_not_allowed", "zh", user=LI["id"], chat=LI["id"])
        _q, chinese = await exchange(fake, private(ANN | {"id": 4242}), ANN | {"id": 4242}, HOTEL_ZH)
        assert chinese["text"] == say("tg_not_allowed", "zh", user=4242, chat=4242)
