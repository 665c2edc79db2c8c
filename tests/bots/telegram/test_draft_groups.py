"""Telegram `draft` help groups (issue 38), through python-telegram-bot and the fake Bot API: every
answer goes to the experts' group as a draft under "Post as is" and "Discard"; the group is told it
went there; only a click in the experts' group decides, once; a discarded draft waits for an
expert's reply; what the documents do not cover is escalated as in an `answer` group."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers.library import COVERED, GAP, Library, library
from tests.helpers.telegram_harness import ANN, BOB, bot_settings, mention, running
from threadsage.bots.telegram import TelegramBot
from threadsage.i18n import say
from threadsage.settings.environment import Settings

HELP = {"id": -1001000000333, "title": "Ask Travel", "type": "supergroup"}
EXPERTS = {"id": -1001000000444, "title": "Travel experts", "type": "supergroup"}
CARL = {"id": 555000111, "is_bot": False, "first_name": "Carl", "username": "carl", "language_code": "en"}
DORA = {"id": 555000222, "is_bot": False, "first_name": "Dora", "username": "dora", "language_code": "en"}
ALSO_COVERED = "Which class for flights of six hours or more?"
REDIS = "redis://127.0.0.1:6379/0"


@asynccontextmanager
async def shelf(tmp_path: Path) -> AsyncIterator[Library]:
    kb_settings = Settings(THREADSAGE_DATA_DIR=tmp_path / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
    with library(tmp_path / "library", kb_settings) as books:
        yield books


def draft_settings(tmp_path: Path, fake: FakeBotAPI, **extra: Any) -> Settings:
    return bot_settings(
        tmp_path,
        fake,
        THREADSAGE_HELP_CHANNELS={f"telegram:{HELP['id']}": "draft"},
        THREADSAGE_EXPERTS=f"*=telegram:{EXPERTS['id']}",
        **extra,
    )


@asynccontextmanager
async def draft_group(tmp_path: Path, fake: FakeBotAPI) -> AsyncIterator[TelegramBot]:
    async with shelf(tmp_path) as books, running(draft_settings(tmp_path, fake), books.kb) as bot:
        fake.say(EXPERTS, CARL, "Morning all.")  # the bot is in the experts' group
        yield bot


def sent(fake: FakeBotAPI, chat: dict) -> list[dict]:
    return fake.sent(chat["id"])


def buttons(message: dict) -> list[str]:
    return [b["text"] for row in message.get("reply_markup", {}).get("inline_keyboard", []) for b in row]


def data(message: dict) -> dict[str, str]:
    """A message's buttons' callback data by label, kept: a decided draft loses its buttons."""
    return {b["text"]: b["callback_data"] for row in message["reply_markup"]["inline_keyboard"] for b in row}


async def toast(fake: FakeBotAPI, message: dict, user: dict, data: str) -> str | None:
    """A click with `data` on `message`: what the bot's answer to the callback query says."""
    query = fake.click(message, user, data=data)
    [answered] = await fake.wait_for(lambda: fake.answers_to(query))
    return answered.get("text")


async def drafted(fake: FakeBotAPI, question: dict, drafts_before: int = 0) -> tuple[dict, dict]:
    """The draft the experts got for `question`, and the notice in the help group."""
    draft = await fake.wait_for(lambda: len(sent(fake, EXPERTS)) > drafts_before and sent(fake, EXPERTS)[-1])

    def replies() -> list[dict]:
        return [m for m in sent(fake, HELP) if m["reply_to_message"]["message_id"] == question["message_id"]]

    [notice] = await fake.wait_for(replies)
    return draft, notice


async def test_a_draft_goes_to_the_experts_and_post_as_is_sends_it_once_as_a_reply_to_the_question(
    tmp_path: Path, fake: FakeBotAPI
) -> None:
    async with draft_group(tmp_path, fake):
        question = fake.say(HELP, ANN, COVERED)
        draft, notice = await drafted(fake, question)
        await fake.quiet()
        assert sent(fake, HELP) == [notice] and notice["text"] == say("tg_drafted")  # no answer in the group
        assert COVERED in draft["text"] and "Ann" in draft["text"] and "Ask Travel" in draft["text"]
        assert "business class" in draft["text"] and "travel.md" in draft["text"]  # the draft, with its sources
        assert say("tg_draft_how") in draft["text"]
        link = f"https://t.me/c/1000000333/{question['message_id']}"
        assert any(e.get("url") == link for e in draft["entities"])
        assert buttons(draft) == [say("draft_post"), say("draft_discard")]
        post, discard = data(draft).values()

        assert await toast(fake, draft, CARL, post) == say("draft_posted", expert="Carl")
        [_, answer] = await fake.wait_for(lambda: len(sent(fake, HELP)) == 2 and sent(fake, HELP))
        assert answer["reply_to_message"]["message_id"] == question["message_id"]
        assert "business class" in answer["text"] and "travel.md" in answer["text"]  # as any answer
        assert buttons(answer) == ["👍", "👎", say("escalate_button")]
        await fake.wait_for(lambda: "reply_markup" not in draft)  # marked after the toast
        assert "reply_markup" not in draft and draft["text"].endswith(say("draft_posted", expert="Carl"))

        assert await toast(fake, draft, DORA, post) == say("draft_answered_already")  # a second press
        assert await toast(fake, draft, DORA, discard) == say("draft_answered_already")
        fake.say(EXPERTS, DORA, "Business class, booked through TripDesk.", reply_to=draft)  # one answer goes back
        await fake.quiet()
        assert len(sent(fake, HELP)) == 2 and len(sent(fake, EXPERTS)) == 1


async def test_a_discarded_draft_is_not_sent_and_an_experts_reply_goes_instead(
    tmp_path: Path, fake: FakeBotAPI
) -> None:
    async with draft_group(tmp_path, fake):
        question = fake.say(HELP, ANN, ALSO_COVERED)
        draft, notice = await drafted(fake, question)
        post, discard = data(draft).values()

        told = say("tg_draft_discarded", expert="Carl")
        assert await toast(fake, draft, CARL, discard) == told
        await fake.wait_for(lambda: "reply_markup" not in draft)  # marked after the toast
        assert "reply_markup" not in draft and draft["text"].endswith(told)
        assert await toast(fake, draft, DORA, post) == say("tg_draft_discarded_already")
        await fake.quiet()
        assert sent(fake, HELP) == [notice]

        fake.say(EXPERTS, CARL, "Business class, booked through TripDesk.", reply_to=draft)
        relayed = await fake.wait_for(lambda: len(sent(fake, HELP)) == 2 and sent(fake, HELP)[1])
        assert "TripDesk" in relayed["text"] and "Carl" in relayed["text"]
        assert relayed["reply_to_message"]["message_id"] == question["message_id"]
        await fake.wait_for(lambda: len(sent(fake, EXPERTS)) == 2)  # "Save as verified answer", as for any reply
        assert sent(fake, EXPERTS)[1]["text"] == say("relay_offer")


async def test_only_a_click_in_the_experts_group_on_the_drafts_own_buttons_decides(
    tmp_path: Path, fake: FakeBotAPI
) -> None:
    async with draft_group(tmp_path, fake):
        question = fake.say(HELP, ANN, COVERED)
        draft, notice = await drafted(fake, question)
        other_question = fake.say(HELP, BOB, mention(ALSO_COVERED))  # a mention in a draft group: drafted too
        other, _ = await drafted(fake, other_question, drafts_before=1)
        post = data(draft)[say("draft_post")]

        # The draft's own data, on the bot's message in the help group (the question's reply chain).
        assert await toast(fake, notice, ANN, post) == say("tg_draft_experts_only")
        forged = post[:-4] + ("AAAA" if not post.endswith("AAAA") else "BBBB")
        assert await toast(fake, draft, CARL, forged) == say("tg_invalid_button")
        assert await toast(fake, draft, CARL, "1" + "A" * 30) == say("tg_invalid_button")
        assert await toast(fake, draft, CARL, data(other)[say("draft_post")]) == say("tg_invalid_button")  # another's
        await fake.quiet()
        assert [m["text"] for m in sent(fake, HELP)] == [say("tg_drafted")] * 2  # nothing posted
        assert buttons(draft) == buttons(other) == [say("draft_post"), say("draft_discard")]  # nothing decided

        assert await toast(fake, draft, CARL, post) == say("draft_posted", expert="Carl")  # the right one still works
        await fake.wait_for(lambda: len(sent(fake, HELP)) == 3)


async def test_a_question_the_documents_do_not_cover_is_escalated_without_a_draft(
    tmp_path: Path, fake: FakeBotAPI
) -> None:
    async with draft_group(tmp_path, fake):
        question = fake.say(HELP, ANN, GAP)
        escalation, told = await drafted(fake, question)
        assert told["text"] == say("tg_escalated")
        assert GAP in escalation["text"] and "reply_markup" not in escalation
        assert escalation["text"].startswith("❓ Ann asked in Ask Travel")
        fake.say(EXPERTS, CARL, "Ask People Ops: 16 weeks, form P-12.", reply_to=escalation)
        relayed = await fake.wait_for(lambda: len(sent(fake, HELP)) == 2 and sent(fake, HELP)[1])
        assert "16 weeks" in relayed["text"] and relayed["reply_to_message"]["message_id"] == question["message_id"]


async def test_a_draft_whose_question_was_deleted_is_not_posted_and_the_expert_is_told(
    tmp_path: Path, fake: FakeBotAPI
) -> None:
    async with draft_group(tmp_path, fake):
        question = fake.say(HELP, ANN, COVERED)
        draft, notice = await drafted(fake, question)
        post = data(draft)[say("draft_post")]
        fake.delete(question)
        assert await toast(fake, draft, CARL, post) == say("tg_draft_gone")
        await fake.wait_for(lambda: "reply_markup" not in draft)  # marked after the toast
        assert "reply_markup" not in draft and draft["text"].endswith(say("tg_draft_gone"))
        assert await toast(fake, draft, CARL, post) == say("tg_draft_gone")
        await fake.quiet()
        assert sent(fake, HELP) == [notice]


async def test_the_draft_outlives_the_process_that_made_it_through_redis(tmp_path: Path, fake: FakeBotAPI) -> None:
    prefix = f"test-{uuid.uuid4().hex[:10]}:"
    settings = draft_settings(tmp_path, fake, REDIS_URL=REDIS, THREADSAGE_REDIS_PREFIX=prefix)
    try:
        async with shelf(tmp_path) as books:
            async with running(settings, books.kb):
                fake.say(EXPERTS, CARL, "Morning all.")
                question = fake.say(HELP, ANN, COVERED)
                draft, _ = await drafted(fake, question)
                await fake.quiet()
            async with running(settings, books.kb):  # another process, the same Redis
                post = data(draft)[say("draft_post")]
                assert await toast(fake, draft, CARL, post) == say("draft_posted", expert="Carl")
                answer = await fake.wait_for(lambda: len(sent(fake, HELP)) == 2 and sent(fake, HELP)[1])
                assert "business class" in answer["text"]
                assert answer["reply_to_message"]["message_id"] == question["message_id"]
    finally:
        redis = Redis.from_url(REDIS)
        if keys := [key async for key in redis.scan_iter(f"{prefix}*")]:
            await redis.delete(*keys)
        await redis.aclose()
