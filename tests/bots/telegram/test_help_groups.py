"""Telegram help groups and their experts (issue 38), through python-telegram-bot and the fake Bot
API: a question asked without a mention is answered; chatter gets nothing; what the documents do
not cover goes to the experts' group, whose first reply comes back to the asker once and can be
kept as the verified answer by its author alone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers.library import COVERED, GAP, library
from tests.helpers.telegram_harness import ANN, BOB, bot_settings, private, running
from threadsage.bots.telegram import TelegramBot
from threadsage.i18n import say
from threadsage.settings.environment import Settings

HELP = {"id": -1001000000111, "title": "Ask IT", "type": "supergroup"}
EXPERTS = {"id": -1001000000222, "title": "IT experts", "type": "supergroup"}
CARL = {"id": 555000111, "is_bot": False, "first_name": "Carl", "username": "carl", "language_code": "en"}


@asynccontextmanager
async def help_group(tmp_path: Path, fake: FakeBotAPI) -> AsyncIterator[TelegramBot]:
    kb_settings = Settings(THREADSAGE_DATA_DIR=tmp_path / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
    with library(tmp_path / "library", kb_settings) as shelf:
        settings = bot_settings(
            tmp_path,
            fake,
            THREADSAGE_HELP_CHANNELS={f"telegram:{HELP['id']}": "answer"},
            THREADSAGE_EXPERTS=f"*=telegram:{EXPERTS['id']}",
        )
        async with running(settings, shelf.kb) as bot:
            fake.say(EXPERTS, CARL, "Morning all.")  # the bot is in the experts' group (not a help group: ignored)
            yield bot


def sent(fake: FakeBotAPI, chat: dict) -> list[dict]:
    return fake.sent(chat["id"])


async def test_a_help_groups_question_is_answered_without_a_mention_and_chatter_gets_nothing(
    tmp_path: Path, fake: FakeBotAPI
) -> None:
    async with help_group(tmp_path, fake):
        fake.say(HELP, BOB, "good morning everyone")
        fake.say(HELP, BOB, "Deploy is done, thanks all!")
        question = fake.say(HELP, ANN, COVERED)
        [answer] = await fake.wait_for(lambda: sent(fake, HELP) or None)
        await fake.quiet()
        assert sent(fake, HELP) == [answer] and sent(fake, EXPERTS) == []
        assert "business class" in answer["text"] and answer["reply_to_message"]["message_id"] == question["message_id"]


async def test_an_uncovered_question_goes_to_the_experts_whose_first_reply_comes_back(
    tmp_path: Path, fake: FakeBotAPI
) -> None:
    async with help_group(tmp_path, fake) as bot:
        question = fake.say(HELP, ANN, GAP)
        [escalation] = await fake.wait_for(lambda: sent(fake, EXPERTS) or None)
        [told] = await fake.wait_for(lambda: sent(fake, HELP) or None)
        assert told["text"] == say("tg_escalated") and told["reply_to_message"]["message_id"] == question["message_id"]
        assert GAP in escalation["text"] and "Ann" in escalation["text"] and "Ask IT" in escalation["text"]

        fake.say(EXPERTS, CARL, "Ask People Ops: 16 weeks, form P-12.", reply_to=escalation)
        relayed, offer = await fake.wait_for(
            lambda: (
                len(sent(fake, HELP)) == 2
                and len(sent(fake, EXPERTS)) == 2
                and (sent(fake, HELP)[1], sent(fake, EXPERTS)[1])
            )
        )
        assert "16 weeks" in relayed["text"] and "Carl" in relayed["text"]
        assert relayed["reply_to_message"]["message_id"] == question["message_id"]
        fake.say(EXPERTS, BOB, "I'd also mention the intranet form.", reply_to=escalation)  # the second: not relayed
        await fake.quiet()
        assert len(sent(fake, HELP)) == 2 and len(sent(fake, EXPERTS)) == 2

        query = fake.click(offer, BOB)  # only the expert who replied may save it
        await fake.wait_for(lambda: fake.answers_to(query))
        assert fake.answers_to(query)[0].get("text") == say("expert_not_yours")
        query = fake.click(offer, CARL)
        await fake.wait_for(lambda: fake.answers_to(query))
        assert fake.answers_to(query)[0].get("text") == say("expert_saved", who="Carl")
        assert bot.chat.loop is not None
        [kept] = await bot.chat.loop.records.verified()
        assert (kept.question, kept.answer, kept.verified_by) == (GAP, "Ask People Ops: 16 weeks, form P-12.", "Carl")

        fake.say(HELP, BOB, GAP)  # asked again: the expert's answer, not another escalation
        await fake.wait_for(lambda: len(sent(fake, HELP)) == 3)
        assert "16 weeks" in sent(fake, HELP)[2]["text"] and len(sent(fake, EXPERTS)) == 2


def buttons(message: dict) -> list[str]:
    return [b["text"] for row in message.get("reply_markup", {}).get("inline_keyboard", []) for b in row]


async def test_still_need_help_sends_a_groups_answer_and_its_question_to_the_experts(
    tmp_path: Path, fake: FakeBotAPI
) -> None:
    async with help_group(tmp_path, fake):
        fake.say(HELP, ANN, COVERED)
        [answer] = await fake.wait_for(lambda: sent(fake, HELP) or None)
        assert buttons(answer) == ["👍", "👎", say("escalate_button")]
        fake.say(private(ANN), ANN, COVERED)
        [mine] = await fake.wait_for(lambda: fake.sent(ANN["id"]) or None)
        assert buttons(mine) == ["👍", "👎"]  # a private chat's answer quotes no question to send on

        toasts = []
        for _ in range(2):
            query = fake.click(answer, BOB, option=2)
            [toast] = await fake.wait_for(lambda: fake.answers_to(query))  # noqa: B023 - awaited at once
            toasts.append(toast.get("text"))
        assert toasts == [say("escalated_click"), say("escalated_already")]
        [escalation] = sent(fake, EXPERTS)
        assert COVERED in escalation["text"] and "business class" in escalation["text"]  # the bot's attempt
