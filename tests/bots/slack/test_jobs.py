"""Slack's jobs: one payload type per kind, whose dict is the turn queue's wire format as the
previous version wrote it (its jobs still in Redis are performed after an upgrade), and a job
that is not one of them is logged and finished by the bot, never raised to the queue."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import ValidationError

from tests.helpers.slack_harness import Harness
from threadsage.bots.slack.jobs import ClickJob, CommandJob, EditJob, HomeJob, MessageJob, ShortcutJob, VoteJob
from threadsage.delivery.jobs import Job

EVENT = {"type": "app_mention", "channel": "C1", "ts": "1710000000.000001", "user": "U1", "text": "<@U0BOT> hi"}
BODY = {"type": "block_actions", "user": {"id": "U1"}, "channel": {"id": "C1"}, "message": {"ts": "1.2"}}
COMMAND = {"command": "/ask", "text": "hi", "channel_id": "C1", "user_id": "U1", "trigger_id": "t1"}
SHORTCUT = {**BODY, "type": "message_action", "trigger_id": "t2", "response_url": "https://hooks/x"}

# Payloads exactly as the version before the types queued them (kind, payload).
PREVIOUS_VERSION = [
    ("message", {"event": EVENT, "place": {"team": "T1", "channel": "C1", "thread_ts": "1.1", "is_dm": False}}),
    ("edit", {"channel": "C1", "ts": "1.1", "text": "new text", "edited_ts": "1.3"}),
    ("command", {"command": COMMAND}),
    ("shortcut", {"body": SHORTCUT}),
    ("home", {"team": "T1", "user": "U1"}),
    ("click", {"body": BODY, "action": {"action_id": "clarify:0", "value": "v"}}),
    ("vote", {"body": BODY, "action": {"action_id": "feedback:up", "value": "v"}}),
]
TYPES = {cls.kind: cls for cls in (MessageJob, EditJob, CommandJob, ShortcutJob, HomeJob, ClickJob, VoteJob)}


@pytest.mark.parametrize(("kind", "payload"), PREVIOUS_VERSION, ids=[kind for kind, _ in PREVIOUS_VERSION])
def test_a_job_queued_by_the_previous_version_reads_back_and_is_written_the_same(
    kind: str, payload: dict[str, Any]
) -> None:
    typed = TYPES[kind].model_validate(payload)
    assert typed.job("key") == Job("slack", kind, payload, "key")


@pytest.mark.parametrize(
    ("kind", "payload", "where"),
    [
        ("message", {"event": EVENT, "place": {"team": "T1"}}, "place.channel"),
        ("message", {"event": {"channel": "C1"}, "place": PREVIOUS_VERSION[0][1]["place"]}, "event"),
        ("command", {"command": {"text": "hi"}}, "command"),
        ("home", {"team": "T1"}, "user"),
        ("click", {"body": {"channel": {"id": "C1"}}, "action": {}}, "body"),
        ("edit", {"channel": "C1", "ts": 1.1, "text": "t", "edited_ts": "1.3"}, "ts"),
    ],
)
def test_a_payload_without_what_its_handler_reads_is_refused(kind: str, payload: dict[str, Any], where: str) -> None:
    with pytest.raises(ValidationError) as refused:
        TYPES[kind].model_validate(payload)
    assert where in {".".join(map(str, error["loc"])) for error in refused.value.errors()}


async def test_the_bot_logs_and_finishes_a_job_it_cannot_do(slack: Harness, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, "threadsage.delivery.jobs"):
        await slack.bot.perform(Job("slack", "reaction_added", {"reaction": "+1"}, "k"))
        await slack.bot.perform(Job("slack", "home", {"team": "T1"}, "k"))  # whose home?
        await slack.bot.give_up(Job("slack", "message", {"event": {"text": "hi"}, "place": {}}, "k"))
    await slack.settle()
    assert slack.fake.posted() == [] and slack.fake.of("views.publish") == []
    assert [record.getMessage().partition(" (")[0] for record in caplog.records] == [
        "slack job of unknown kind 'reaction_added' dropped",
        "slack home job dropped: its payload cannot be read",
        "slack message job dropped: its payload cannot be read",
    ]
