"""`/ask@bot -p …` in a group: answered in the person's private chat (once they have started the
bot), the group told where — through the real python-telegram-bot against the fake Bot API."""

from __future__ import annotations

from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers.telegram_harness import ANN, BOB, GROUP, TRAVEL, new_messages, private
from threadsage.bots.telegram import TelegramBot
from threadsage.i18n import say


async def test_ask_p_in_a_group_is_answered_in_the_private_chat_and_the_group_told(
    bot: TelegramBot, fake: FakeBotAPI
) -> None:
    chat = private(ANN)
    fake.say(chat, ANN, "/start")  # Ann started the bot
    started = len(await new_messages(fake, chat, 0))
    fake.say(GROUP, ANN, f"/ask@ask_bot -p {TRAVEL}")
    (told,) = await new_messages(fake, GROUP, 0)
    assert told["text"] == say("tg_answered_privately", name="Ann")
    asked, answer = await new_messages(fake, chat, started, count=2)
    assert asked["text"] == say("tg_asked_in", chat="Support", question=TRAVEL)
    assert "travel" in answer["text"].lower() and answer["reply_markup"]["inline_keyboard"]  # votes
    await fake.quiet()
    assert len(fake.sent(GROUP["id"])) == 1  # the answer itself is not in the group


async def test_ask_p_from_someone_who_never_started_the_bot_says_how(bot: TelegramBot, fake: FakeBotAPI) -> None:
    fake.say(GROUP, BOB, f"/ask@ask_bot -p {TRAVEL}")
    (told,) = await new_messages(fake, GROUP, 0)
    assert told["text"] == say("tg_start_me_first", name="Bob", username="ask_bot")
    await fake.quiet()
    assert len(fake.sent(GROUP["id"])) == 1 and fake.sent(BOB["id"]) == []
