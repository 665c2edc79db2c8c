"""A private answer's buttons (`/ask`, the shortcut): "Share in channel" and "Continue in a DM",
clicked on the ephemeral message as Slack sends such clicks, through the real bolt app."""

from __future__ import annotations

import json
import urllib.parse

from tests.fakes.slack_api import BOT_USER, ephemeral_action_body
from tests.helpers.conversation import delivering
from tests.helpers.slack_harness import (
    CHANNEL,
    Harness,
    as_text,
    dm_message,
    next_ts,
    thread_messages,
    thread_reply,
    user_message,
)
from threadsage.bots.slack.places import Place
from threadsage.bots.tokens import Button, ButtonKind, session_digest
from threadsage.chat import turn_ref
from threadsage.delivery.current import Delivery
from threadsage.delivery.jobs import Job
from threadsage.i18n import say

RATE_LIMIT = "What is the rate limit per API key?"
DM = "D222"  # the fake's DM with U222 (conversations.open)
PRIVATE = Place("T111", CHANNEL, "", False, private_for="U222")


async def asked_privately(slack: Harness, question: str = RATE_LIMIT) -> dict:
    _, name = await slack.ask(question)
    await slack.settle()
    [answer] = slack.private(name)
    return answer


async def test_shared_the_answer_is_a_normal_answer_in_the_channel_attributed_to_the_asker(slack: Harness) -> None:
    answer = await asked_privately(slack)
    click = await slack.click_private(answer, "private:share")
    await slack.settle()
    lead, shared = slack.fake.posted()
    assert (lead["channel"], lead.get("thread_ts")) == (CHANNEL, None)
    assert lead["text"] == say("slack_shared_by", user="U222", question=RATE_LIMIT)
    assert shared["thread_ts"] == lead["ts"] and "engineering/api-style-guide.md" in as_text(shared)
    assert shared["blocks"][-1]["type"] == "context_actions"
    [done] = slack.responses(click)
    assert done.startswith(f"Shared in <#{CHANNEL}>: https://acme.slack.com/archives/{CHANNEL}/p")

    # its thread continues the conversation, for anyone there
    await slack.event(thread_reply("and when it is exceeded?", lead["ts"], user="U333"))
    await slack.settle()
    assert len(thread_messages(slack.fake, lead["ts"])) == 2

    # votes on the shared copy count for the answer that was asked privately
    await slack.click(shared, 0, user="U333")
    await slack.settle()
    assert await slack.chat.feedback.votes(PRIVATE.session, turn_ref(f"command:trigger-{_name_of(slack)}")) == {
        "U333": 1
    }


async def test_a_second_click_posts_nothing_more_and_links_to_the_copy(slack: Harness) -> None:
    answer = await asked_privately(slack)
    first = await slack.click_private(answer, "private:share")
    await slack.settle()
    second = await slack.click_private(answer, "private:share")
    await slack.settle()
    assert len(slack.fake.posted()) == 2
    link = slack.responses(first)[0].rsplit(" ", 1)[-1]
    assert slack.responses(second) == [say("slack_already_shared", link=link)]


async def test_a_redelivered_share_posts_once(slack: Harness) -> None:
    """The worker that shared died before acknowledging: the next one finds the lead line (by its
    metadata) and the answer under it, and posts neither again."""
    answer = await asked_privately(slack)
    button = next(e for b in answer["blocks"] if b["type"] == "actions" for e in b["elements"])
    body = _click_payload(slack, button["value"], "private:share")
    job = Job("slack", "share", {"body": body, "action": body["actions"][0]}, PRIVATE.session)
    for attempt in (1, 2):
        with delivering(Delivery("job-share", attempt=attempt, final=False)):
            await slack.bot.perform(job)
    lead, shared = slack.fake.posted()
    assert shared["thread_ts"] == lead["ts"]


async def test_continued_in_a_dm_the_conversation_moves_there(slack: Harness) -> None:
    answer = await asked_privately(slack)
    click = await slack.click_private(answer, "private:move")
    await slack.settle()
    assert [c["users"] for c in slack.fake.of("conversations.open")] == ["U222"]
    lead, moved = slack.fake.posted()
    assert (lead["channel"], lead["text"]) == (DM, f"You asked in <#{CHANNEL}>: {RATE_LIMIT}")
    assert (moved["channel"], moved["thread_ts"]) == (DM, lead["ts"]) and "api-style-guide" in as_text(moved)
    assert slack.responses(click)[0].startswith("We continue in our direct message: https://")
    in_dm = Place("T111", DM, lead["ts"], True)
    assert await slack.chat.has_conversation(in_dm.session)
    assert not await slack.chat.has_conversation(PRIVATE.session)  # moved, not copied

    await slack.event(dm_message("and when it is exceeded?", DM, thread_ts=lead["ts"]))
    await slack.settle()
    assert len([m for m in slack.fake.posted() if m.get("thread_ts") == lead["ts"]]) == 2


async def test_the_shortcuts_answer_is_shared_in_the_messages_thread(slack: Harness) -> None:
    message = user_message(f"<@{BOT_USER}> {RATE_LIMIT}")
    name = await slack.shortcut(message, user="U222")
    await slack.settle()
    [answer] = slack.private(name)
    await slack.click_private(answer, "private:share")
    await slack.settle()
    lead, shared = slack.fake.posted()
    assert lead["thread_ts"] == shared["thread_ts"] == message["ts"]


async def test_forged_and_stale_buttons_are_told_so(slack: Harness) -> None:
    answer = await asked_privately(slack)
    forged = await slack.click_private(answer, "private:share", value="1forged")
    never_kept = slack.bot.signer.sign(Button(ButtonKind.SHARE, session_digest(PRIVATE.session), "deadbeef", 0))
    stale = await slack.click_private(answer, "private:share", value=never_kept)
    elsewhere = await slack.click_private(answer, "private:share", user="U333")  # another person's answer
    await slack.settle()
    assert slack.responses(forged) == [say("slack_invalid_button")]
    assert slack.responses(stale) == [say("slack_share_stale")]
    assert slack.responses(elsewhere) == [say("slack_invalid_button")]
    assert slack.fake.posted() == []


async def test_sharing_where_the_bot_is_no_member_says_how(slack: Harness) -> None:
    answer = await asked_privately(slack)
    slack.fake.not_member.add(CHANNEL)
    click = await slack.click_private(answer, "private:share")
    await slack.settle()
    assert slack.responses(click) == [say("slack_not_a_member")]


def _name_of(slack: Harness) -> str:
    """The response_url name of the harness's first /ask (its trigger id is made from it)."""
    return next(c["url"] for c in slack.fake.of("response_url"))


def _click_payload(slack: Harness, value: str, action_id: str) -> dict:
    raw = ephemeral_action_body(CHANNEL, "U222", action_id, value, "Share", slack.fake.response_url("r"), next_ts())
    return json.loads(urllib.parse.unquote(raw.decode().removeprefix("payload=")))
