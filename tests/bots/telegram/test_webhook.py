"""The webhook's answers to what is not an Update: 400 for any garbage that carries the secret,
403 without it, never a 500 (Telegram would re-deliver it, holding back the chat's later updates)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from threadsage.bots.telegram import TelegramWebhook
from threadsage.delivery.jobs import Job
from threadsage.http.server import create_app
from threadsage.settings.environment import Settings

SECRET = "s3cret_Token-1"
GOOD = {"X-Telegram-Bot-Api-Secret-Token": SECRET, "Content-Type": "application/json"}
MESSAGE = {"message_id": 5, "date": 1710000000, "chat": {"id": 42, "type": "private"}, "text": "hi"}


@pytest.fixture
async def webhook(tmp_path: Path):
    settings = Settings(
        THREADSAGE_DATA_DIR=tmp_path,
        TELEGRAM_WEBHOOK_URL="https://bot.example/telegram/webhook",
        TELEGRAM_WEBHOOK_SECRET=SECRET,
        _env_file=None,
    )
    queued: list[Job] = []

    async def dispatch(job: Job) -> None:
        queued.append(job)

    app = create_app([TelegramWebhook(settings, dispatch).route()])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bot") as client:
        yield client, queued


GARBAGE = [
    b"{not json",
    b"\xff\xfe",
    b"[1]",
    b"{}",
    b'{"update_id": "one"}',
    *(
        json.dumps({"update_id": 1, **fields}).encode()
        for fields in (
            {"message": "hi"},
            {"message": []},
            {"message": {}},
            {"message": {**MESSAGE, "date": 1e30}},
            {"message": {**MESSAGE, "from": "me"}},
            {"message": {**MESSAGE, "entities": "bold"}},
            {"message": {**MESSAGE, "reply_to_message": 5}},
            {"message": {**MESSAGE, "chat": {"id": 42}}},
            {"callback_query": {"id": "1"}},
        )
    ),
]


@pytest.mark.parametrize("body", GARBAGE, ids=range(len(GARBAGE)))
async def test_garbage_with_the_secret_is_a_400(webhook, body: bytes) -> None:
    client, queued = webhook
    assert (await client.post("/telegram/webhook", content=body, headers=GOOD)).status_code == 400
    assert queued == []


async def test_an_update_in_another_content_type_is_a_400_and_without_the_secret_a_403(webhook) -> None:
    client, queued = webhook
    update = json.dumps({"update_id": 7, "message": MESSAGE}).encode()
    for content_type in ("text/plain", "application/x-www-form-urlencoded", ""):
        response = await client.post(
            "/telegram/webhook", content=update, headers={**GOOD, "Content-Type": content_type}
        )
        assert response.status_code == 400, content_type
    for secret in ("", "wrong"):
        headers = {**GOOD, "X-Telegram-Bot-Api-Secret-Token": secret}
        assert (await client.post("/telegram/webhook", content=update, headers=headers)).status_code == 403
    assert (
        await client.post("/telegram/webhook", content=b"{not json", headers={"Content-Type": "application/json"})
    ).status_code == 403
    assert queued == []
    response = await client.post(
        "/telegram/webhook", content=update, headers={**GOOD, "Content-Type": "application/json; charset=utf-8"}
    )
    assert response.status_code == 200
    assert [(job.kind, job.payload["update_id"], job.order_key) for job in queued] == [("update", 7, "telegram:42")]
