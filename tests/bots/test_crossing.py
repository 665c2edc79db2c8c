"""Escalations across platforms (issue 38): both bots on one chat service, against the fake Slack
Web API and the fake Telegram Bot API over HTTP. A Slack question whose category's experts are a
Telegram group goes there, and the first reply there comes back into the Slack thread, once, and
can be kept as the verified answer by its author; a Telegram question whose experts are a Slack
channel goes there the same way. A category's own place wins over `*`'s whatever its platform;
where the other platform's bot does not run, the question has no experts (logged once)."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.slack_api import action_body
from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers.library import COVERED, GAP, Library, library
from tests.helpers.slack_harness import Harness, as_text, ephemeral_click, next_ts, on_fake_slack
from tests.helpers.telegram_harness import ANN, BOB, TOKEN, bot_settings, running
from threadsage.bots.slack.escalations import ESCALATION_EVENT, RELAY_EVENT
from threadsage.bots.telegram import TelegramBot
from threadsage.delivery.coordination import LocalCoordinator
from threadsage.i18n import say
from threadsage.settings.environment import Settings

SLACK_HELP, SLACK_DOCS, SLACK_EXPERTS = "C0HELPDESK", "C0ASKDOCS", "C0EXPERTS"
TG_HELP = {"id": -1001000000111, "title": "Ask IT", "type": "supergroup"}
TG_EXPERTS = {"id": -1001000000222, "title": "IT experts", "type": "supergroup"}
CARL = {"id": 555000111, "is_bot": False, "first_name": "Carl", "username": "carl", "language_code": "en"}
FORM = "application/x-www-form-urlencoded"
CONSOLE_TOKEN = "console-test-password-4b1d"
ANSWER = "Ask People Ops: 16 weeks, form P-12."


@dataclass
class Both:
    slack: Harness
    telegram: TelegramBot | None
    fake: FakeBotAPI


def telegram_settings(fake: FakeBotAPI) -> dict[str, Any]:
    return {
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_API_URL": fake.url,
        "TELEGRAM_WEBHOOK_URL": None,
        "THREADSAGE_TELEGRAM_ALLOWED": "*",
    }


@asynccontextmanager
async def shelf(tmp_path: Path) -> AsyncIterator[Library]:
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
    with library(tmp_path / "library", settings) as books:
        yield books


@asynccontextmanager
async def both_bots(
    tmp_path: Path, fake: FakeBotAPI, experts: str, telegram: bool = True, **extra: Any
) -> AsyncIterator[Both]:
    """The Slack bot (served, on the fake Slack) and the Telegram bot (polling the fake Bot API) on
    one chat service and one coordinator, as `threadsage run` starts them; `telegram=False`:
    Telegram configured, but its bot not running in this process."""
    help_places = {SLACK_HELP: "answer", SLACK_DOCS: "answer", f"telegram:{TG_HELP['id']}": "answer"}
    options = {
        "THREADSAGE_HELP_CHANNELS": help_places,
        "THREADSAGE_EXPERTS": experts,
        "THREADSAGE_CONSOLE_TOKEN": CONSOLE_TOKEN,
        "THREADSAGE_EMBEDDINGS": "none",
        **telegram_settings(fake),
        **extra,
    }
    coordinator = LocalCoordinator()
    async with shelf(tmp_path) as books, on_fake_slack(tmp_path, books.kb, coordinator=coordinator, **options) as slack:
        slack.fake.names.update({"U222": "Ann Lee", "U900": "Dana Expert", "U901": "Eve Expert"})
        slack.fake.channel_names.update({"ask-it": SLACK_HELP})
        fake.say(TG_EXPERTS, CARL, "Morning all.")  # the bot is in the experts' group
        if not telegram:
            yield Both(slack, None, fake)
            return
        async with TelegramBot(slack.bot.settings, slack.chat, coordinator).running() as bot:
            yield Both(slack, bot, fake)


async def say_in(slack: Harness, text: str, channel: str = SLACK_HELP, user: str = "U222", **fields: object) -> str:
    """A person's message in a Slack channel (kept by the fake, as Slack keeps it); its ts."""
    ts = next_ts()
    event = {"type": "message", "channel": channel, "user": user, "text": text, "ts": ts, "event_ts": ts}
    event |= {"channel_type": "channel", **fields}
    assert await slack.event(slack.fake.person_said(event)) == 200
    return ts


def in_thread(slack: Harness, channel: str, ts: str) -> list[dict]:
    return [m for m in slack.fake.current(channel, ts) if m["ts"] != ts]


def escalations(slack: Harness) -> list[dict]:
    posted = slack.fake.current(SLACK_EXPERTS)
    return [m for m in posted if (m.get("metadata") or {}).get("event_type") == ESCALATION_EVENT]


def ephemerals(slack: Harness, user: str) -> list[dict]:
    return [m for m in slack.fake.of("chat.postEphemeral") if m.get("user") == user]


def links(message: dict) -> list[str]:
    return [e["url"] for e in message.get("entities", []) if e.get("type") == "text_link"]


def buttons(message: dict) -> list[str]:
    return [b["text"] for row in message.get("reply_markup", {}).get("inline_keyboard", []) for b in row]


async def console_rows(slack: Harness) -> list[dict]:
    headers = {"Authorization": f"Bearer {CONSOLE_TOKEN}"}
    async with slack.http.get(f"{slack.url}/console/api/escalations", headers=headers) as response:
        assert response.status == 200, await response.text()
        return list(json.loads(await response.text()))


async def test_a_slack_question_goes_to_telegram_experts_and_their_first_reply_comes_back_once(
    tmp_path: Path, fake: FakeBotAPI
) -> None:
    async with both_bots(tmp_path, fake, f"*=telegram:{TG_EXPERTS['id']}") as both:
        slack = both.slack
        ts = await say_in(slack, GAP)
        await slack.settle()
        assert in_thread(slack, SLACK_HELP, ts) == []  # no "not covered" in the help channel
        assert [m["text"] for m in ephemerals(slack, "U222")] == [say("escalated_privately")]
        [escalation] = fake.sent(TG_EXPERTS["id"])
        shown = escalation["text"]
        assert GAP in shown and "Ann Lee" in shown and "#ask-it" in shown and "U222" not in shown
        assert links(escalation) == [f"https://acme.slack.com/archives/{SLACK_HELP}/p{ts.replace('.', '')}"]
        assert say("tg_escalation_how") in shown  # the documents do not cover it
        assert escalations(slack) == []  # not in a Slack experts' channel

        fake.say(TG_EXPERTS, CARL, ANSWER, reply_to=escalation)
        offer = (await fake.wait_for(lambda: fake.sent(TG_EXPERTS["id"])[1:]))[0]
        fake.say(TG_EXPERTS, BOB, "I'd also mention the intranet form.", reply_to=escalation)  # the second
        await fake.quiet()
        await slack.settle()
        [relayed] = in_thread(slack, SLACK_HELP, ts)  # the first reply only
        assert "16 weeks" in relayed["text"] and "Carl" in relayed["text"]
        assert f"<https://t.me/c/{str(TG_EXPERTS['id'])[4:]}/" in relayed["text"]  # linked to the reply
        assert relayed["metadata"]["event_type"] == RELAY_EVENT
        assert len(fake.sent(TG_EXPERTS["id"])) == 2  # the escalation and the offer: nothing for the second

        assert offer["text"] == say("relay_offer") and buttons(offer) == [f"✅ {say('verify_button')}"]
        query = fake.click(offer, BOB)  # only the expert who replied may save it
        assert (await fake.wait_for(lambda: fake.answers_to(query)))[0].get("text") == say("expert_not_yours")
        query = fake.click(offer, CARL)
        assert (await fake.wait_for(lambda: fake.answers_to(query)))[0].get("text") == say("expert_saved", who="Carl")
        assert slack.chat.loop is not None
        [kept] = await slack.chat.loop.records.verified()
        assert (kept.question, kept.answer, kept.verified_by) == (GAP, ANSWER, "Carl")

        [row] = await console_rows(slack)  # the console's record, as for a Slack escalation
        assert (row["question"], row["experts"], row["expert"]) == (
            GAP,
            f"telegram:{TG_EXPERTS['id']}",
            str(CARL["id"]),
        )

        again = await say_in(slack, GAP, user="U444")  # the expert's answer, not another escalation
        await slack.settle()
        [answer] = in_thread(slack, SLACK_HELP, again)
        assert "16 weeks" in as_text(answer) and len(fake.sent(TG_EXPERTS["id"])) == 2


async def test_a_telegram_question_goes_to_slack_experts_and_their_first_reply_comes_back_once(
    tmp_path: Path, fake: FakeBotAPI
) -> None:
    async with both_bots(tmp_path, fake, f"*={SLACK_EXPERTS}") as both:
        slack = both.slack
        question = fake.say(TG_HELP, ANN, GAP)
        [told] = await fake.wait_for(lambda: fake.sent(TG_HELP["id"]))
        assert told["text"] == say("tg_escalated") and told["reply_to_message"]["message_id"] == question["message_id"]
        await slack.settle()
        [escalation] = escalations(slack)
        shown = as_text(escalation)
        assert GAP in shown and "Ann" in shown and "Ask IT" in shown
        assert f"https://t.me/c/{str(TG_HELP['id'])[4:]}/{question['message_id']}" in shown  # the question's link
        assert escalation["metadata"]["event_payload"] == {"platform": "telegram", "question": GAP}

        await say_in(slack, ANSWER, channel=SLACK_EXPERTS, user="U900", thread_ts=escalation["ts"])
        await say_in(
            slack, "thanks, I'll add it to the wiki", channel=SLACK_EXPERTS, user="U901", thread_ts=escalation["ts"]
        )
        await slack.settle()
        await fake.quiet()
        [_, relayed] = fake.sent(TG_HELP["id"])  # the first reply only, as a reply to the question
        assert relayed["text"] == f"Dana Expert answered:\n\n{ANSWER}"  # named, as Telegram relays are
        assert relayed["reply_to_message"]["message_id"] == question["message_id"]
        assert fake.sent(TG_EXPERTS["id"]) == [] and escalations(slack) == [escalation]

        [offer] = [m for m in ephemerals(slack, "U900") if "blocks" in m]  # Slack's "Save as verified answer"
        assert offer["channel"] == SLACK_EXPERTS and offer["thread_ts"] == escalation["ts"]
        blocks = json.loads(offer["blocks"]) if isinstance(offer["blocks"], str) else offer["blocks"]
        [button] = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
        for user in ("U901", "U900"):
            click = ephemeral_click(offer, user, button["value"], button["action_id"])
            assert await slack.send(click, content_type=FORM) == 200
            await slack.settle()
        assert say("expert_not_yours") in [m["text"] for m in ephemerals(slack, "U901")]
        assert slack.chat.loop is not None
        [kept] = await slack.chat.loop.records.verified()
        assert (kept.question, kept.answer, kept.verified_by) == (GAP, ANSWER, "u900")

        [row] = await console_rows(slack)
        assert (row["question"], row["experts"], row["expert"]) == (GAP, SLACK_EXPERTS, "U900")

        fake.say(TG_HELP, BOB, GAP)  # asked again: the expert's answer, not another escalation
        await fake.wait_for(lambda: len(fake.sent(TG_HELP["id"])) == 3)
        assert "16 weeks" in fake.sent(TG_HELP["id"])[2]["text"]
        await slack.settle()
        assert len(escalations(slack)) == 1


async def test_still_need_help_crosses_with_the_bots_attempt_and_its_sources(tmp_path: Path, fake: FakeBotAPI) -> None:
    experts = f"docs=telegram:{TG_EXPERTS['id']},*={SLACK_EXPERTS}"
    categories = {"THREADSAGE_CHANNEL_CATEGORIES": {SLACK_HELP: ["docs"], str(TG_HELP["id"]): ["hr", "docs"]}}
    async with both_bots(tmp_path, fake, experts, **categories) as both:
        slack = both.slack
        ts = await say_in(slack, COVERED)  # a Slack help channel of `docs`: its experts are on Telegram
        await slack.settle()
        [answer] = in_thread(slack, SLACK_HELP, ts)
        [button, _] = [e for b in answer["blocks"] if b["type"] == "actions" for e in b["elements"]]
        assert button["text"]["text"] == say("escalate_button")
        body = answer_click(answer, ts, button)
        assert await slack.send(body, content_type=FORM) == 200
        await slack.settle()
        [escalation] = fake.sent(TG_EXPERTS["id"])
        assert COVERED in escalation["text"] and "business class" in escalation["text"]  # the bot's attempt…
        assert "travel.md" in escalation["text"]  # …with its sources
        assert await slack.send(body, content_type=FORM) == 200  # pressed again: once
        await slack.settle()
        told = [m["text"] for m in ephemerals(slack, "U222")]
        assert told == [say("escalated_click"), say("escalated_already")] and len(fake.sent(TG_EXPERTS["id"])) == 1

        fake.say(TG_HELP, ANN, COVERED)  # a Telegram group of `hr`: `*`'s experts, in Slack
        [group_answer] = await fake.wait_for(lambda: fake.sent(TG_HELP["id"]))
        assert say("escalate_button") in buttons(group_answer)
        query = fake.click(group_answer, BOB, option=buttons(group_answer).index(say("escalate_button")))
        [toast] = await fake.wait_for(lambda: fake.answers_to(query))
        assert toast.get("text") == say("escalated_click")
        await slack.settle()
        [slack_escalation] = escalations(slack)
        assert COVERED in as_text(slack_escalation) and "business class" in as_text(slack_escalation)
        assert slack_escalation["metadata"]["event_payload"]["platform"] == "telegram"


def answer_click(answer: dict, thread_ts: str, button: dict) -> bytes:
    """A click on a button of the bot's answer in a thread, as Slack sends it."""
    message = {**answer, "thread_ts": thread_ts}
    return action_body(message, answer["channel"], "U222", button["action_id"], button["value"], "b", next_ts())


async def test_a_categorys_place_wins_over_stars_whatever_its_platform(tmp_path: Path, fake: FakeBotAPI) -> None:
    experts = f"hr=telegram:{TG_EXPERTS['id']},*={SLACK_EXPERTS}"
    categories = {"THREADSAGE_CHANNEL_CATEGORIES": {SLACK_HELP: ["hr", "docs"], SLACK_DOCS: ["docs"]}}
    async with both_bots(tmp_path, fake, experts, **categories) as both:
        slack = both.slack
        await say_in(slack, GAP)  # `hr`: its own place, in Telegram
        await say_in(slack, "How do I book a meeting room?", channel=SLACK_DOCS, user="U333")  # `docs`: `*`'s
        await slack.settle()
        [to_telegram] = fake.sent(TG_EXPERTS["id"])
        [in_slack] = escalations(slack)  # a same-platform escalation, as before
        assert GAP in to_telegram["text"] and "meeting room" in as_text(in_slack)
        assert in_slack["metadata"]["event_payload"]["channel"] == SLACK_DOCS

        await say_in(slack, "Book it in the intranet.", channel=SLACK_EXPERTS, user="U900", thread_ts=in_slack["ts"])
        await slack.settle()
        [relayed] = [m for m in slack.fake.current(SLACK_DOCS) if m.get("thread_ts")]
        assert "intranet" in relayed["text"] and "<@U900>" in relayed["text"]  # named as Slack relays are


async def test_without_the_other_platforms_bot_a_question_has_no_experts_logged_once(
    tmp_path: Path, fake: FakeBotAPI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "threadsage.chat.escalations")
    async with both_bots(tmp_path, fake, f"*=telegram:{TG_EXPERTS['id']}", telegram=False) as both:
        slack = both.slack
        first = await say_in(slack, GAP)
        second = await say_in(slack, "How do I book a meeting room?", user="U333")
        await slack.settle()
        for ts in (first, second):  # answered "not covered", as without experts
            [reply] = in_thread(slack, SLACK_HELP, ts)
            assert "documents" in as_text(reply) or say("not_found") in as_text(reply)
        assert ephemerals(slack, "U222") == [] and fake.sent(TG_EXPERTS["id"]) == []

        covered = await say_in(slack, COVERED, user="U444")  # Telegram is configured: "Still need help?" shows…
        await slack.settle()
        [answer] = in_thread(slack, SLACK_HELP, covered)
        [button, _] = [e for b in answer["blocks"] if b["type"] == "actions" for e in b["elements"]]
        assert await slack.send(answer_click(answer, covered, button), content_type=FORM) == 200
        await slack.settle()
        assert [m["text"] for m in ephemerals(slack, "U222")] == [say("escalation_nowhere")]  # …but reaches no one
        assert fake.sent(TG_EXPERTS["id"]) == []
        [logged] = [r for r in caplog.records if "no telegram bot runs" in r.getMessage()]
        assert logged.levelno == logging.WARNING


async def test_a_telegram_question_whose_experts_are_in_slack_without_the_slack_bot_has_none(
    tmp_path: Path, fake: FakeBotAPI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "threadsage.chat.escalations")
    settings = bot_settings(
        tmp_path,
        fake,
        THREADSAGE_HELP_CHANNELS={f"telegram:{TG_HELP['id']}": "answer"},
        THREADSAGE_EXPERTS=f"*={SLACK_EXPERTS}",
    )
    async with shelf(tmp_path) as books, running(settings, books.kb):
        fake.say(TG_HELP, ANN, GAP)
        fake.say(TG_HELP, BOB, "How do I book a meeting room?")
        replies = await fake.wait_for(lambda: len(fake.sent(TG_HELP["id"])) == 2 and fake.sent(TG_HELP["id"]))
        assert all(say("tg_escalated") != reply["text"] for reply in replies)  # "not covered", as without experts
        assert all(say("escalate_button") not in buttons(reply) for reply in replies)  # Slack is not configured
        [logged] = [r for r in caplog.records if "no slack bot runs" in r.getMessage()]
        assert logged.levelno == logging.WARNING


async def test_an_experts_reply_after_the_question_was_deleted_is_told_so(tmp_path: Path, fake: FakeBotAPI) -> None:
    async with both_bots(tmp_path, fake, f"*={SLACK_EXPERTS}") as both:
        slack = both.slack
        question = fake.say(TG_HELP, ANN, GAP)
        await fake.wait_for(lambda: fake.sent(TG_HELP["id"]))
        await slack.settle()
        [escalation] = escalations(slack)
        fake.delete(question)
        await say_in(slack, ANSWER, channel=SLACK_EXPERTS, user="U900", thread_ts=escalation["ts"])
        await slack.settle()
        assert len(fake.sent(TG_HELP["id"])) == 1  # nothing relayed
        assert [m["text"] for m in ephemerals(slack, "U900")] == [say("relay_gone")]
