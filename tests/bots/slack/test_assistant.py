"""Slack's AI panel through the real bolt app and its `Assistant` middleware: the panel's events as
Slack's documentation shows them, the thread's messages as `message.im` events in the DM thread,
the assistant.threads.* calls read back from the fake Web API."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from redis.asyncio import Redis

from tests.fakes.slack_api import TEAM, FakeSlack, assistant_thread, message_changed
from tests.helpers.slack_harness import (
    AMBIGUOUS,
    OTHER_ORG,
    Harness,
    as_text,
    dm_message,
    next_ts,
    on_fake_slack,
    running,
)
from threadsage.bots.replies import STEPS
from threadsage.bots.slack.sending import PLACEHOLDER_EVENT
from threadsage.chat import Step
from threadsage.delivery.redis_coordination import RedisCoordinator
from threadsage.i18n import say

DM = "D222"
ENGINEERING = "C0ENG"  # mapped to the engineering documents
ELSEWHERE = "C0ELSE"  # in no map: the defaults
RATE_LIMIT = "What is the rate limit per API key?"
STYLE_GUIDE = "API style guide"  # the cited document
SCOPED = {"THREADSAGE_CHANNEL_CATEGORIES": {ENGINEERING: ["engineering"]}, "THREADSAGE_DEFAULT_CATEGORIES": ["it"]}
REDIS_URL = "redis://127.0.0.1:6379/0"


@asynccontextmanager
async def panel(tmp_path: Path, kb, **overrides) -> AsyncIterator[Harness]:
    async with on_fake_slack(tmp_path, kb, **{**SCOPED, **overrides}) as slack:
        yield slack


async def open_panel(slack: Harness, context: dict | None = None, kind: str = "assistant_thread_started") -> str:
    """The person opens the panel (or moves with it open): the thread's ts."""
    thread_ts = next_ts()
    assert await slack.event(assistant_thread(kind, "U222", DM, thread_ts, context)) == 200
    await slack.settle()
    return thread_ts


async def ask_in(slack: Harness, thread_ts: str, text: str) -> dict:
    event = dm_message(text, DM, thread_ts=thread_ts)
    assert await slack.event(event) == 200
    await slack.settle()
    return event


def answers(slack: Harness, thread_ts: str) -> list[dict]:
    return [m for m in slack.fake.current(DM, thread_ts) if m["ts"] != thread_ts]


def viewing(channel: str, team: str = TEAM) -> dict:
    return {"channel_id": channel, "team_id": team, "enterprise_id": None}


async def test_a_new_thread_is_greeted_and_offered_at_most_four_prompts_from_what_it_may_read(
    tmp_path: Path, categorised_kb
) -> None:
    async with panel(tmp_path, categorised_kb) as slack:
        await ask_in(slack, "", "Wie geht's? " + RATE_LIMIT)  # a question asked before, in the DM itself
        thread_ts = await open_panel(slack, viewing(ENGINEERING))
        redelivered = assistant_thread("assistant_thread_started", "U222", DM, thread_ts, viewing(ENGINEERING))
        await slack.event(redelivered)
        await slack.settle()
        [greeting] = answers(slack, thread_ts)
        [offered] = slack.fake.of("assistant.threads.setSuggestedPrompts")
    assert greeting["text"] == say("assistant_greeting") and greeting["thread_ts"] == thread_ts
    prompts = offered["prompts"]
    assert (offered["channel_id"], offered["thread_ts"]) == (DM, thread_ts) and 1 < len(prompts) <= 4
    assert prompts[0]["message"].endswith(RATE_LIMIT)  # the person's own question first
    # then the categories the channel in view may read, and no other
    categories = [p["message"] for p in prompts[1:]]
    assert categories == [say("assistant_prompt_category", category="engineering")]


async def test_the_greeting_is_in_the_persons_slack_locale(tmp_path: Path, categorised_kb) -> None:
    async with panel(tmp_path, categorised_kb) as slack:
        slack.fake.locales["U222"] = "zh-CN"
        thread_ts = await open_panel(slack)
        [greeting] = answers(slack, thread_ts)
        [prompts] = [p for name, p in slack.fake.calls if name == "assistant.threads.setSuggestedPrompts"]
    assert greeting["text"] == say("assistant_greeting", "zh") and prompts["title"] == say("assistant_prompts", "zh")
    assert ("users.info", {"user": "U222", "include_locale": "1"}) in [  # as slack_sdk sends True
        (name, {k: v for k, v in p.items() if k in ("user", "include_locale")}) for name, p in slack.fake.calls
    ]


async def test_without_a_locale_the_greeting_is_in_the_language_last_asked_in(tmp_path: Path, categorised_kb) -> None:
    async with panel(tmp_path, categorised_kb) as slack:
        await ask_in(slack, "", "VPN 密码怎么重置？")
        slack.fake.refuse_next("users.info", "missing_scope")  # an app installed before users:read
        thread_ts = await open_panel(slack)
        [greeting] = answers(slack, thread_ts)
    assert greeting["text"] == say("assistant_greeting", "zh")


async def test_the_channel_in_view_decides_what_the_thread_reads(tmp_path: Path, categorised_kb) -> None:
    async with panel(tmp_path, categorised_kb) as slack:
        thread_ts = await open_panel(slack, viewing(ENGINEERING))
        await ask_in(slack, thread_ts, RATE_LIMIT)
        in_engineering = answers(slack, thread_ts)[-1]
        changed = assistant_thread("assistant_thread_context_changed", "U222", DM, thread_ts, viewing(ELSEWHERE))
        await slack.event(changed)
        await slack.settle()
        await ask_in(slack, thread_ts, "And " + RATE_LIMIT.lower())
        elsewhere = answers(slack, thread_ts)[-1]
        shared = assistant_thread(
            "assistant_thread_context_changed", "U222", DM, thread_ts, viewing(ENGINEERING, OTHER_ORG)
        )
        await slack.event(shared)
        await slack.settle()
        await ask_in(slack, thread_ts, "Once more: " + RATE_LIMIT.lower())
        external = answers(slack, thread_ts)[-1]
    assert STYLE_GUIDE in as_text(in_engineering)
    assert STYLE_GUIDE not in as_text(elsewhere)  # an unmapped channel: only the defaults
    assert STYLE_GUIDE not in as_text(external)  # the mapped id, but another organisation's channel


async def test_steps_show_as_the_threads_status_not_as_a_message_and_the_thread_is_titled(
    tmp_path: Path, categorised_kb
) -> None:
    fake = FakeSlack().start()
    async with running(tmp_path, categorised_kb, fake=fake, progress=True, **SCOPED) as slack:
        thread_ts = await open_panel(slack, viewing(ENGINEERING))
        await ask_in(slack, thread_ts, RATE_LIMIT)
        await ask_in(slack, thread_ts, "and when it is exceeded?")
        calls = slack.fake.of("assistant.threads.setStatus")
        statuses = [c["status"] for c in calls]
        titles = slack.fake.of("assistant.threads.setTitle")
        posted = slack.fake.posted()
    fake.stop()
    assert say(STEPS[Step.SEARCHING]) in statuses
    searching = next(c for c in calls if c["status"] == say(STEPS[Step.SEARCHING]))
    rotating = searching["loading_messages"]  # what Slack rotates through while the step lasts
    assert rotating[0] == say(STEPS[Step.SEARCHING]) and 1 < len(rotating) <= 10
    assert fake.statuses[(DM, thread_ts)] == ""  # cleared by the answer
    assert not [m for m in posted if (m.get("metadata") or {}).get("event_type") == PLACEHOLDER_EVENT]
    assert [(t["channel_id"], t["thread_ts"], t["title"]) for t in titles] == [(DM, thread_ts, RATE_LIMIT)]


async def test_clarification_buttons_work_in_a_panel_thread(tmp_path: Path, categorised_kb) -> None:
    async with panel(tmp_path, categorised_kb, progress=True) as slack:
        thread_ts = await open_panel(slack, viewing(ELSEWHERE))
        await ask_in(slack, thread_ts, AMBIGUOUS)
        clarification = answers(slack, thread_ts)[-1]
        labels = [e["text"]["text"] for e in clarification["blocks"][1]["elements"]]
        calls = len(slack.fake.of("assistant.threads.setStatus"))
        await slack.click({**clarification, "channel": DM}, next(i for i, lbl in enumerate(labels) if "VPN" in lbl))
        await slack.settle()
        answer = answers(slack, thread_ts)[-1]
        clicked_statuses = slack.fake.of("assistant.threads.setStatus")[calls:]
    assert "it/vpn.md" in as_text(answer)
    assert clicked_statuses  # the clicked answer's steps are the thread's status too


async def test_an_edit_in_a_panel_thread_reaches_the_bot(tmp_path: Path, categorised_kb) -> None:
    """bolt's Assistant acknowledges message_changed in DM threads unseen; ours lets it through."""
    async with panel(tmp_path, categorised_kb) as slack:
        thread_ts = await open_panel(slack, viewing(ENGINEERING))
        original = dm_message("What is the rate limit?", DM, thread_ts=thread_ts)
        await slack.event(message_changed(DM, original, RATE_LIMIT, channel_type="im"))
        await slack.settle()
        edit = await slack.bot.coordinator.recall(f"slack-question:{DM}:{original['ts']}:edit")
    assert edit is not None and json.loads(edit)["text"] == RATE_LIMIT


async def test_the_context_outlives_the_process_in_redis(tmp_path: Path, categorised_kb) -> None:
    prefix = f"test-{uuid.uuid4().hex[:10]}:"
    redis = Redis.from_url(REDIS_URL)
    try:
        async with panel(tmp_path / "a", categorised_kb, coordinator=RedisCoordinator(redis, prefix=prefix)) as first:
            thread_ts = await open_panel(first, viewing(ENGINEERING))
        async with panel(tmp_path / "b", categorised_kb, coordinator=RedisCoordinator(redis, prefix=prefix)) as second:
            await ask_in(second, thread_ts, RATE_LIMIT)  # a new process: only Redis knows the thread
            answer = answers(second, thread_ts)[-1]
    finally:
        keys = [key async for key in redis.scan_iter(f"{prefix}*")]
        if keys:
            await redis.delete(*keys)
        await redis.aclose()
    assert STYLE_GUIDE in as_text(answer)
