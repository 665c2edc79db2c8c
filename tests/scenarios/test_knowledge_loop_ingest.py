"""The knowledge loop after `threadsage ingest` (not only after a live sync), with the Telegram bot
on the fake Bot API: an ingest handed to the running bot through its inbox, and an ingest run on
its own against the same stores (the follow-up then waits for the next bot)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers.library import COVERED, GAP, LEAVE, TRAVEL_2, library
from tests.helpers.telegram_harness import ANN, BOB, GROUP, bot_settings, exchange, mention, running
from threadsage.adapters.knowledge import open_knowledge_base
from threadsage.app.follow_ups import send_waiting_follow_ups
from threadsage.chat import ChatService
from threadsage.console.knowledge_loop import LoopData
from threadsage.ingestion.service import knowledge_upkeep


def covered_notes(fake: FakeBotAPI) -> list[dict]:
    return [m for m in fake.sent(GROUP["id"]) if "now covered" in m["text"]]


async def loop_views(chat: ChatService) -> tuple[list[dict], list[dict]]:
    assert chat.loop is not None
    data = LoopData(chat.loop.records)
    return await data.stale(), await data.closed()


async def test_an_ingest_handed_to_the_running_bot_closes_gaps_and_marks_stale_answers(
    tmp_path: Path, fake: FakeBotAPI, cli
) -> None:
    settings = bot_settings(tmp_path, fake)
    with library(tmp_path / "library", settings) as shelf:
        async with running(settings, shelf.kb) as bot, knowledge_upkeep(settings, shelf.kb, bot.chat.knowledge.changed):
            await exchange(fake, GROUP, BOB, mention(COVERED))
            question, _ = await exchange(fake, GROUP, ANN, mention(GAP))
            await asyncio.sleep(0.3)  # the bot has opened its inbox
            (shelf.root / "hr" / "parental-leave.md").write_text(LEAVE)
            result = await asyncio.to_thread(cli, "ingest", str(shelf.root / "hr"), "--category", "hr")
            assert result.exit_code == 0 and "handed to it" in result.output, result.output
            [note] = await fake.wait_for(lambda: covered_notes(fake))
            assert note["reply_to_message"]["message_id"] == question["message_id"] and "eight weeks" in note["text"]

            (shelf.root / "docs" / "travel.md").write_text(TRAVEL_2)
            result = await asyncio.to_thread(cli, "ingest", str(shelf.root / "docs"), "--category", "docs")
            assert result.exit_code == 0, result.output
            stale, closed = await loop_views(bot.chat)
            assert [(s["title"], s["answers"]) for s in stale] == [("Travel", 1)]
            assert [(c["question"], c["follow_up"]) for c in closed] == [(GAP, "sent")]


async def test_an_ingest_on_its_own_runs_the_loop_and_the_next_bot_sends_the_follow_up(
    tmp_path: Path, fake: FakeBotAPI, cli
) -> None:
    settings = bot_settings(tmp_path, fake)
    with library(tmp_path / "library", settings) as shelf:
        async with running(settings, shelf.kb):
            await exchange(fake, GROUP, BOB, mention(COVERED))
            question, _ = await exchange(fake, GROUP, ANN, mention(GAP))
    (shelf.root / "hr" / "parental-leave.md").write_text(LEAVE)
    (shelf.root / "docs" / "travel.md").write_text(TRAVEL_2)
    said = {}
    for category in ("hr", "docs"):
        result = await asyncio.to_thread(cli, "ingest", str(shelf.root / category), "--category", category)
        assert result.exit_code == 0 and "handed" not in result.output, result.output
        said[category] = result.output
    assert "1 of 1 gaps closed" in said["hr"] and "follow-ups: 1 waiting" in said["hr"]
    assert "1 answers and 0 verified answers stale" in said["docs"]
    assert covered_notes(fake) == []

    kb = open_knowledge_base(settings)  # the same stores; a bot starts again
    try:
        async with running(settings, kb) as bot:
            stale, closed = await loop_views(bot.chat)
            assert [(s["title"], s["answers"]) for s in stale] == [("Travel", 1)]
            assert [(c["question"], c["follow_up"]) for c in closed] == [(GAP, "waiting")]
            stop = asyncio.Event()
            sending = asyncio.create_task(send_waiting_follow_ups(bot.chat, stop, first=0.01))
            [note] = await fake.wait_for(lambda: covered_notes(fake))
            stop.set()
            await sending
            assert note["reply_to_message"]["message_id"] == question["message_id"] and "eight weeks" in note["text"]
            await bot.chat.knowledge.send_waiting()  # claimed: never a second
            _, closed = await loop_views(bot.chat)
            assert [c["follow_up"] for c in closed] == ["sent"] and len(covered_notes(fake)) == 1
    finally:
        kb.close()
