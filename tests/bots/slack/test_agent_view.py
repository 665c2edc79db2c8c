"""Slack's agent messaging experience (the manifest's `features.agent_view`), through the real bolt
app, its events as docs.slack.dev shows them: opening the Messages tab (`app_home_opened`, tab
"messages") greets once a week in the person's locale with suggested prompts; `app_context_changed`
says which channel the person views, and each top-level DM question is answered in its own thread,
reading what a question in that channel would (fail-closed); a file sent alone waits for its question."""

from __future__ import annotations

from pathlib import Path

from tests.bots.slack.test_assistant import DM, ELSEWHERE, ENGINEERING, RATE_LIMIT, STYLE_GUIDE, panel
from tests.fakes.slack_api import app_context_changed, home_opened, viewed
from tests.helpers.slack_harness import OTHER_ORG, Harness, as_text, dm_message, file_share
from threadsage.i18n import say


async def opened(slack: Harness, viewing: str | None = None) -> None:
    assert await slack.event(home_opened("U222", "messages", viewing)) == 200
    await slack.settle()


async def asked(slack: Harness, text: str, **fields: str) -> dict:
    """A top-level DM question (or one in a thread, with `thread_ts`); the bot's last reply."""
    event = dm_message(text, DM, **fields)
    assert await slack.event(event) == 200
    await slack.settle()
    reply = slack.fake.posted()[-1]
    assert reply["channel"] == DM and reply["thread_ts"] == fields.get("thread_ts", event["ts"])
    return reply


async def test_the_messages_tab_greets_once_a_week_in_the_locale_with_prompts(tmp_path: Path, categorised_kb) -> None:
    async with panel(tmp_path, categorised_kb) as slack:
        slack.fake.locales["U222"] = "zh-CN"
        await opened(slack, ENGINEERING)
        await opened(slack)  # opened again the same week: no second greeting
        [greeting] = slack.fake.posted()
        [offered] = slack.fake.of("assistant.threads.setSuggestedPrompts")
    assert greeting["channel"] == DM and not greeting.get("thread_ts")
    assert greeting["text"] == say("agent_greeting", "zh")
    # On the latest message of the DM: a thread_ts would make Slack drop them under agent_view.
    assert (
        offered["channel_id"] == DM
        and "thread_ts" not in offered
        and offered["title"] == say("assistant_prompts", "zh")
    )
    assert [p["message"] for p in offered["prompts"]] == [
        say("assistant_prompt_category", "zh", category="engineering")
    ]


async def test_the_home_tab_is_not_greeted(tmp_path: Path, categorised_kb) -> None:
    async with panel(tmp_path, categorised_kb) as slack:
        assert await slack.event(home_opened("U222", "home")) == 200
        await slack.settle()
        assert slack.fake.posted() == [] and slack.fake.of("views.publish")


async def test_each_question_reads_what_the_channel_in_view_reads_in_its_own_thread(
    tmp_path: Path, categorised_kb
) -> None:
    async with panel(tmp_path, categorised_kb) as slack:
        await slack.event(app_context_changed("U222", ENGINEERING))
        in_engineering = await asked(slack, RATE_LIMIT)
        follow_up = await asked(slack, "And " + RATE_LIMIT.lower(), thread_ts=in_engineering["thread_ts"])
        await slack.event(app_context_changed("U222", ELSEWHERE))
        elsewhere = await asked(slack, RATE_LIMIT)
        shared = app_context_changed("U222", None) | {"context": viewed(ENGINEERING)}
        shared["context"]["entities"][0]["team_id"] = OTHER_ORG  # the mapped id, another organisation's channel
        await slack.event(shared)
        external = await asked(slack, RATE_LIMIT)
        await slack.event(app_context_changed("U222", None))  # nothing in view: what a DM reads
        nothing = await asked(slack, RATE_LIMIT)
    assert STYLE_GUIDE in as_text(in_engineering)
    assert STYLE_GUIDE in as_text(follow_up)  # the thread keeps the channel it was asked beside
    assert STYLE_GUIDE not in as_text(elsewhere)  # an unmapped channel: only the defaults
    assert STYLE_GUIDE not in as_text(external)
    assert STYLE_GUIDE not in as_text(nothing)


async def test_a_file_sent_alone_waits_for_the_next_question(tmp_path: Path, categorised_kb) -> None:
    async with panel(tmp_path, categorised_kb) as slack:
        note = slack.fake.upload("note.md", b"# Heron\n\nThe Heron budget is 48,000 euros.\n", "text/markdown")
        alone = file_share("", [note], DM)
        assert await slack.event(alone) == 200
        await slack.settle()
        question = dm_message("What is the Heron budget?", DM)
        assert await slack.event(question) == 200
        await slack.settle()
        reply = slack.fake.posted()[-1]
        later = await asked(slack, "What is the Heron budget?")  # the next one is a question of its own
    assert reply["thread_ts"] == alone["ts"] and "48,000 euros" in as_text(reply)
    assert "48,000 euros" not in as_text(later)
