"""`/ask`, the "Ask threadsage" message shortcut and starting over, through the real bolt app:
commands, shortcuts and clicks on ephemeral messages signed and form-encoded as Slack sends them,
answers read back from the response_urls (private first) and the fake Web API."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl

from tests.fakes.slack_api import BOT_USER, FakeSlack, command_body
from tests.helpers.conversation import delivering
from tests.helpers.slack_harness import (
    AMBIGUOUS,
    CHANNEL,
    OTHER_ORG,
    Harness,
    as_text,
    dm_message,
    running,
    user_message,
)
from threadsage.delivery.current import Delivery
from threadsage.delivery.jobs import Job
from threadsage.i18n import say
from threadsage.memory.sessions import session_key

RATE_LIMIT = "What is the rate limit per API key?"
DM = "D222"  # the fake's DM with U222 (conversations.open)


def private_answer(slack: Harness, name: str) -> dict:
    """The one private message a response_url was sent."""
    [message] = slack.private(name)
    assert message.get("response_type", "ephemeral") == "ephemeral"
    return message


def action_ids(message: dict) -> list[str]:
    return [e["action_id"] for b in message["blocks"] if b["type"] == "actions" for e in b["elements"]]


async def test_ask_answers_privately_where_it_was_asked_with_share_and_dm_buttons(slack: Harness) -> None:
    acknowledged, name = await slack.ask(RATE_LIMIT)
    await slack.settle()
    assert acknowledged == say("slack_answering_privately")
    answer = private_answer(slack, name)
    assert "engineering/api-style-guide.md" in as_text(answer)
    assert action_ids(answer) == ["private:share", "private:move"]
    assert answer["blocks"][-2]["type"] == "context_actions"  # votes, as under any answer
    assert slack.fake.posted() == [] and slack.fake.of("conversations.open") == []  # nothing public, no DM


async def test_a_private_clarification_is_clicked_and_answered_privately(slack: Harness) -> None:
    _, name = await slack.ask(AMBIGUOUS)
    await slack.settle()
    clarification = private_answer(slack, name)
    option = next(
        e
        for b in clarification["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
        if "VPN" in e["text"]["text"]
    )
    click = await slack.click_private(clarification, option["action_id"])
    await slack.settle()
    chose, answer = slack.private(click)
    assert chose["replace_original"] is True and "VPN" in chose["text"]
    assert "it/vpn.md" in as_text(answer) and action_ids(answer) == ["private:share", "private:move"]
    assert slack.fake.posted() == []


async def test_ask_alone_explains_itself_and_posts_nothing(slack: Harness) -> None:
    acknowledged, _ = await slack.ask("   ")
    await slack.settle()
    assert say("slack_ask_usage") in acknowledged and slack.fake.posted() == []


async def test_where_the_bot_is_no_member_the_private_answer_still_arrives(slack: Harness) -> None:
    slack.fake.not_member.add(CHANNEL)
    _, name = await slack.ask(f"-p {RATE_LIMIT}")  # -p as before: private
    await slack.settle()
    assert "engineering/api-style-guide.md" in as_text(private_answer(slack, name))


async def test_an_asked_question_pings_nobody(slack: Harness) -> None:
    _, name = await slack.ask(
        "&lt;!channel&gt; what is the rate limit per API key?"
    )  # Slack escapes & < > in command text
    await slack.settle()
    assert "<!channel>" not in as_text(private_answer(slack, name)) and slack.fake.posted() == []


async def test_ask_from_another_organisation_gets_the_notice_and_costs_no_turn(slack: Harness) -> None:
    """A Slack Connect partner typing /ask in the shared channel: told privately (in the
    acknowledgement, which only they see, in their language), nothing posted, no turn run."""
    acknowledged, response_url = await slack.ask(RATE_LIMIT, user="UEXT", team=OTHER_ORG)
    private, _ = await slack.ask("-p 每个 API 密钥的速率限制是多少？", user="UEXT", team=OTHER_ORG)
    await slack.settle()
    assert (acknowledged, private) == (say("slack_external"), say("slack_external", "zh"))
    assert slack.responses(response_url) == []
    assert [name for name, _ in slack.fake.calls if name.startswith(("chat.", "conversations.open"))] == []
    for team in (OTHER_ORG, "T111"):
        assert not await slack.chat.has_conversation(session_key("slack", team, DM, ""))


async def test_ask_from_another_organisation_is_answered_when_allowed(tmp_path: Path, handbook_kb) -> None:
    fake = FakeSlack().start()
    async with running(tmp_path, handbook_kb, fake=fake, THREADSAGE_SLACK_ALLOW_EXTERNAL=True) as slack:
        acknowledged, name = await slack.ask(RATE_LIMIT, user="UEXT", team=OTHER_ORG)
        await slack.settle()
        assert acknowledged == say("slack_answering_privately")
        assert "engineering/api-style-guide.md" in as_text(private_answer(slack, name))
    fake.stop()


async def test_new_starts_the_dm_conversation_over_typed_or_by_ask(classic_slack: Harness) -> None:
    slack = classic_slack  # under agent messaging every DM question is a conversation of its own
    dm_session = session_key("slack", "T111", DM, "")

    async def dm(text: str) -> None:
        await slack.event(dm_message(text, DM))
        await slack.settle()

    await dm(RATE_LIMIT)
    assert await slack.chat.has_conversation(dm_session)
    _, response_url = await slack.ask("new")
    await slack.settle()
    assert slack.responses(response_url) == [say("new_started")]
    assert not await slack.chat.has_conversation(dm_session)

    await dm(RATE_LIMIT)
    await dm("new")
    assert slack.fake.posted()[-1]["text"] == say("new_started") and not await slack.chat.has_conversation(dm_session)


async def test_a_redelivered_ask_sends_its_private_answer_once(slack: Harness) -> None:
    """The worker that ran the /ask died before acknowledging: the next one sends nothing twice."""
    name = "redelivered"
    command = dict(parse_qsl(command_body(RATE_LIMIT, slack.fake.response_url(name), "trigger-redelivered").decode()))
    job = Job("slack", "command", {"command": command}, "slack-command:trigger-redelivered")
    with delivering(Delivery("job-1", attempt=1, final=False)):
        await slack.bot.perform(job)
    with delivering(Delivery("job-1", attempt=2, final=False)):
        await slack.bot.perform(job)
    assert "engineering/api-style-guide.md" in as_text(private_answer(slack, name))


async def test_the_shortcut_answers_a_message_privately(slack: Harness) -> None:
    message = user_message(f"<@{BOT_USER}> {RATE_LIMIT}")
    name = await slack.shortcut(message, user="U333")
    await slack.settle()
    answer = private_answer(slack, name)
    assert "engineering/api-style-guide.md" in as_text(answer) and action_ids(answer) == [
        "private:share",
        "private:move",
    ]
    assert slack.fake.posted() == []


async def test_the_shortcut_says_why_it_cannot_answer(slack: Harness) -> None:
    empty = await slack.shortcut(user_message(""))
    await slack.settle()
    assert slack.responses(empty) == [say("slack_no_text")]
    assert slack.fake.posted() == []
