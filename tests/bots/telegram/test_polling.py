"""Long polling into the turn queue (`threadsage run` with Redis), against the fake Bot API: an
update is confirmed to Telegram only once the queue holds it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers.telegram_harness import ANN, GROUP, TOKEN, mention
from threadsage.bots.telegram import build_application
from threadsage.bots.telegram.polling import poll_into
from threadsage.delivery.jobs import Job
from threadsage.settings.environment import Settings


async def test_an_update_is_confirmed_only_once_the_queue_holds_it(tmp_path: Path) -> None:
    fake = await FakeBotAPI(TOKEN).start()
    settings = Settings(
        THREADSAGE_DATA_DIR=tmp_path, TELEGRAM_BOT_TOKEN=TOKEN, TELEGRAM_API_URL=fake.url, _env_file=None
    )
    queued: list[Job] = []
    redis_away = asyncio.Event()
    redis_away.set()

    async def put(job: Job) -> None:
        if redis_away.is_set():
            raise ConnectionError("Redis is away")
        queued.append(job)

    def offsets() -> list[str | None]:
        return [call.get("offset") for call in fake.calls_of("getUpdates")]

    try:
        async with build_application(settings, polling=False).bot as bot:
            message = fake.say(GROUP, ANN, mention("What is the rate limit per API key?"))
            polling = asyncio.create_task(poll_into(bot, put))
            await fake.wait_for(lambda: len(offsets()) >= 2)  # fetched, not queued, fetched again
            assert offsets()[:2] == [None, None]  # nothing confirmed meanwhile
            redis_away.clear()
            await fake.wait_for(lambda: queued)
            update_id = queued[0].payload["update_id"]
            await fake.wait_for(lambda: str(update_id + 1) in offsets())  # confirmed once queued
            polling.cancel()
    finally:
        await fake.stop()
    [job] = queued
    assert (job.platform, job.kind, job.order_key) == ("telegram", "update", f"telegram:{GROUP['id']}")
    assert job.payload["message"]["message_id"] == message["message_id"]
