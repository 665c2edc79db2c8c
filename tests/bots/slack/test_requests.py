"""What reaches POST /slack/events besides good questions: forged and malformed requests, event
types nobody listens to, other bots, messages with files or broadcast from a thread. Each gets the
status Slack expects (never a 404 or 500, which Slack retries) and nothing lands in the logs."""

from __future__ import annotations

import json
import logging
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.slack_api import BOT_USER, FakeSlack, event_body, signed_headers
from tests.helpers.slack_harness import CHANNEL, SECRET, Harness, as_text, dm_message, next_ts, running, thread_messages

QUESTION = "What is the rate limit per API key?"
DM = "D024BE91L"


def dm(text: str, **fields: str) -> dict[str, Any]:
    return dm_message(text, DM, **fields)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"{not json", "application/json"),
        (b"[1, 2]", "application/json"),
        (b'"a string"', "application/json"),
        (b"{}", "application/json"),
        (b"", "application/json"),
        (
            json.dumps({"type": "event_callback", "team_id": "T111", "event": "app_mention"}).encode(),
            "application/json",
        ),
        (
            json.dumps({"type": "event_callback", "team_id": "T111", "event": {"text": "no type"}}).encode(),
            "application/json",
        ),
        (b"payload=%7Bnot+json", "application/x-www-form-urlencoded"),
        (b"payload=%5B%5D", "application/x-www-form-urlencoded"),
        (b"no form at all", "application/x-www-form-urlencoded"),
    ],
    ids=[
        "not-json",
        "array",
        "string",
        "empty-object",
        "empty",
        "event-a-string",
        "event-no-type",
        "payload-not-json",
        "payload-array",
        "not-a-form",
    ],
)
async def test_a_signed_body_that_is_no_slack_payload_is_a_400_and_unsigned_a_401(
    slack: Harness, body: bytes, content_type: str
) -> None:
    assert await slack.send(body, content_type=content_type) == 400
    unsigned = {"X-Slack-Signature": "v0=" + "0" * 64}
    assert await slack.send(body, unsigned, content_type=content_type) == 401
    assert await slack.send(body, {"X-Slack-Request-Timestamp": "soon"}, content_type=content_type) == 401
    await slack.settle()
    assert slack.fake.posted() == []


async def test_a_body_that_is_not_utf8_cannot_be_verified(slack: Harness) -> None:
    assert await slack.send(b'{"type": "event_callback", "event": "\xff"}') == 401


async def test_an_event_type_nobody_listens_to_is_acknowledged(
    slack: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    ts = next_ts()
    assert (
        await slack.event(
            {
                "type": "reaction_added",
                "user": "U222",
                "reaction": "eyes",
                "item": {"type": "message", "channel": CHANNEL, "ts": ts},
                "event_ts": ts,
            }
        )
        == 200
    )
    assert (
        await slack.event({"type": "app_home_opened", "user": "U222", "channel": DM, "tab": "home", "event_ts": ts})
        == 200
    )
    await slack.settle()
    assert slack.fake.posted() == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_an_interaction_nobody_handles_is_refused_not_lost(slack: Harness) -> None:
    payload = {
        "type": "block_actions",
        "user": {"id": "U222"},
        "team": {"id": "T111"},
        "actions": [{"action_id": "elsewhere", "value": "x"}],
    }
    body = ("payload=" + urllib.parse.quote(json.dumps(payload))).encode()
    assert await slack.send(body, content_type="application/x-www-form-urlencoded") == 400


async def test_the_url_verification_handshake_still_works(slack: Harness) -> None:
    assert await slack.send(b'{"type": "url_verification", "challenge": "abc", "token": "t"}') == 200


async def test_other_bots_are_not_answered(slack: Harness) -> None:
    ts = next_ts()
    mention = {
        "type": "app_mention",
        "user": "U0OTHER",
        "bot_id": "B0OTHER",
        "text": f"<@{BOT_USER}> {QUESTION}",
        "ts": ts,
        "channel": CHANNEL,
        "event_ts": ts,
    }
    assert await slack.event(mention) == 200
    assert await slack.event({**mention, "type": "message", "channel_type": "channel"}) == 200
    legacy = {
        "type": "message",
        "subtype": "bot_message",
        "bot_id": "B0HOOK",
        "username": "hook",
        "text": f"<@{BOT_USER}> {QUESTION}",
        "ts": next_ts(),
        "channel": DM,
        "channel_type": "im",
    }
    assert await slack.event(legacy) == 200
    assert await slack.event({**dm(QUESTION), "bot_id": "B0OTHER"}) == 200
    await slack.settle()
    assert slack.fake.posted() == []


async def test_an_event_without_a_user_is_ignored_cleanly(slack: Harness, caplog: pytest.LogCaptureFixture) -> None:
    ts = next_ts()
    assert (
        await slack.event(
            {"type": "app_mention", "text": f"<@{BOT_USER}> {QUESTION}", "ts": ts, "channel": CHANNEL, "event_ts": ts}
        )
        == 200
    )
    assert await slack.event({key: value for key, value in dm(QUESTION).items() if key != "user"}) == 200
    await slack.settle()
    assert slack.fake.posted() == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_a_message_with_a_file_is_a_question(slack: Harness) -> None:
    shared = dm(QUESTION, subtype="file_share")
    shared["files"] = [{"id": "F1", "name": "screenshot.png", "mimetype": "image/png"}]  # type: ignore[assignment]
    assert await slack.event(shared) == 200
    await slack.settle()
    answer, problem = slack.fake.posted()  # the file is not on Slack: said so after the answer
    assert answer["channel"] == DM and "engineering/api-style-guide.md" in as_text(answer)
    assert problem["text"] == "I couldn't download “screenshot.png” — please try sending it again."


async def test_a_thread_reply_also_sent_to_the_channel_is_a_question(slack: Harness) -> None:
    root = await slack.mention("What is the rate limit per API key for the Tidewater API?")
    await slack.settle()
    ts = next_ts()
    broadcast = {
        "type": "message",
        "subtype": "thread_broadcast",
        "channel": CHANNEL,
        "user": "U222",
        "text": "and what happens when it is exceeded?",
        "ts": ts,
        "event_ts": ts,
        "thread_ts": root,
        "channel_type": "channel",
    }
    assert await slack.event(broadcast) == 200
    await slack.settle()
    assert len(thread_messages(slack.fake, root)) == 2


async def test_an_unsigned_big_body_stays_out_of_the_logs(tmp_path: Path, handbook_kb, configure) -> None:
    logs = configure(THREADSAGE_LOG_LEVEL="INFO", THREADSAGE_LOG_FORMAT="json")
    fake = FakeSlack().start()
    async with running(tmp_path, handbook_kb, fake=fake) as slack:
        marker = "forged-" * 100_000  # 700 kB, under the 1 MiB ceiling
        body = ("payload=" + urllib.parse.quote(json.dumps({"type": "block_actions", "text": marker}))).encode()
        stale = signed_headers(SECRET, body, timestamp=1_600_000_000)
        assert await slack.send(body, stale, content_type="application/x-www-form-urlencoded") == 401
        assert (
            await slack.send(
                body, {"X-Slack-Signature": "v0=" + "0" * 64}, content_type="application/x-www-form-urlencoded"
            )
            == 401
        )
        event = event_body(
            {"type": "app_mention", "user": "U222", "text": marker, "ts": next_ts(), "channel": CHANNEL}, "Ev-big"
        )
        assert await slack.send(event, {"X-Slack-Signature": "v0=" + "0" * 64}) == 401
    fake.stop()
    assert "forged-forged" not in logs.getvalue()
    assert len(logs.getvalue()) < 10_000
    bolt = [name for name in logging.root.manager.loggerDict if name.startswith("slack_bolt")]
    assert bolt and not any(logging.getLogger(name).isEnabledFor(logging.INFO) for name in bolt)
