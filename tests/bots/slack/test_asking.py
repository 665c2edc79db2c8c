"""`/ask`, the "Ask threadsage" message shortcut and starting over, through the real bolt app:
commands and shortcuts signed and form-encoded as Slack sends them, answers read back from the
fake Web API and the response_urls."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl

from tests.fakes.slack_api import BOT_USER, FakeSlack, command_body
from tests.support.conversation import delivering
from tests.support.slack_harness import (
    AMBIGUOUS,
    CHANNEL,
    OTHER_ORG,
    Harness,
    as_text,
    dm_message,
    running,
    thread_messages,
    thread_reply,
    user_message,
)
from threadsage.bots.slack.sending import QUESTION_EVENT
from threadsage.delivery.current import Delivery
from threadsage.delivery.jobs import Job
from threadsage.i18n import say
from threadsage.memory.sessions import session_key

RATE_LIMIT = "What is the rate limit per API key?"
DM = "D222"  # the fake's DM with U222 (conversations.open)


async def test_ask_posts_the_question_and_answers_in_its_thread_which_the_bot_then_follows(slack: Harness) -> None:
    slack.fake.hold["chat.postMessage"] = 2  # the question's post answers late: the answer comes after it
    acknowledged, _ = await slack.ask(RATE_LIMIT)
    assert acknowledged == "" and len(slack.fake.posted()) <= 1  # acknowledged before the answer, nothing shown
    slack.fake.hold.clear()
    await slack.settle()
    question, answer = slack.fake.posted()
    assert (question["channel"], question.get("thread_ts"), question["text"]) == (
        CHANNEL,
        None,
        f"<@U222> asked: {RATE_LIMIT}",
    )
    assert question["metadata"]["event_type"] == QUESTION_EVENT
    assert answer["thread_ts"] == question["ts"] and "engineering/api-style-guide.md" in as_text(answer)

    await slack.event(thread_reply("and when it is exceeded?", question["ts"], user="U333"))
    await slack.settle()
    assert len(thread_messages(slack.fake, question["ts"])) == 2  # the answer, then the follow-up's


async def test_clarification_buttons_of_an_asked_question_work_as_for_a_mention(slack: Harness) -> None:
    await slack.ask(AMBIGUOUS)
    await slack.settle()
    question, clarification = slack.fake.posted()
    assert "Which one do you mean?" in as_text(clarification)
    labels = [e["text"]["text"] for e in clarification["blocks"][1]["elements"]]
    await slack.click(clarification, next(i for i, label in enumerate(labels) if "VPN" in label))
    await slack.settle()
    answer = thread_messages(slack.fake, question["ts"])[-1]
    assert "it/vpn.md" in as_text(answer)


async def test_ask_alone_explains_itself_and_posts_nothing(slack: Harness) -> None:
    acknowledged, _ = await slack.ask("   ")
    await slack.settle()
    assert say("slack_ask_usage") in acknowledged and slack.fake.posted() == []


async def test_ask_privately_answers_in_the_askers_dm(slack: Harness) -> None:
    acknowledged, _ = await slack.ask(f"-p {RATE_LIMIT}")
    await slack.settle()
    assert say("slack_answering_privately") in acknowledged
    assert [c["users"] for c in slack.fake.of("conversations.open")] == ["U222"]
    question, answer = slack.fake.posted()
    assert (question["channel"], question["text"]) == (DM, f"You asked in <#{CHANNEL}>: {RATE_LIMIT}")
    assert (answer["channel"], answer["thread_ts"]) == (DM, question["ts"])
    assert "engineering/api-style-guide.md" in as_text(answer)


async def test_where_the_bot_is_no_member_ask_answers_in_the_dm_and_says_so(slack: Harness) -> None:
    slack.fake.not_member.add(CHANNEL)
    _, response_url = await slack.ask(RATE_LIMIT)
    await slack.settle()
    assert slack.responses(response_url) == [say("slack_not_a_member_ask")]
    question, answer = slack.fake.posted()
    assert question["channel"] == DM and answer["thread_ts"] == question["ts"]


async def test_an_asked_question_pings_nobody(slack: Harness) -> None:
    await slack.ask("&lt;!channel&gt; what is the rate limit per API key?")  # Slack escapes & < > in command text
    await slack.settle()
    question = slack.fake.posted()[0]
    assert question["text"] == "<@U222> asked: &lt;!channel&gt; what is the rate limit per API key?"


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
        acknowledged, _ = await slack.ask(RATE_LIMIT, user="UEXT", team=OTHER_ORG)
        await slack.settle()
        _, answer = fake.posted()
        assert acknowledged == "" and "engineering/api-style-guide.md" in as_text(answer)
    fake.stop()


async def test_new_starts_the_dm_conversation_over_typed_or_by_ask(slack: Harness) -> None:
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


async def test_a_redelivered_ask_posts_its_question_and_answer_once(slack: Harness) -> None:
    """The worker that ran the /ask died before acknowledging: the next one finds the question it
    posted (by its metadata) and the answer, and posts neither again."""
    command = dict(parse_qsl(command_body(RATE_LIMIT, slack.fake.response_url("r"), "trigger-redelivered").decode()))
    job = Job("slack", "command", {"command": command}, "slack-command:trigger-redelivered")
    with delivering(Delivery("job-1", attempt=1, final=False)):
        await slack.bot.perform(job)
    with delivering(Delivery("job-1", attempt=2, final=False)):
        await slack.bot.perform(job)
    question, answer = slack.fake.posted()
    assert answer["thread_ts"] == question["ts"]


async def test_the_shortcut_answers_a_message_in_its_thread(slack: Harness) -> None:
    message = user_message(f"<@{BOT_USER}> {RATE_LIMIT}")
    await slack.shortcut(message, user="U333")
    await slack.settle()
    [answer] = slack.fake.posted()
    assert (answer["channel"], answer["thread_ts"]) == (CHANNEL, message["ts"])
    assert "engineering/api-style-guide.md" in as_text(answer)
    # in a thread: answered in that thread, the message's text being the question
    in_thread = user_message("Which cabin class may I book for a flight of 6 hours or more?", thread_ts=message["ts"])
    await slack.shortcut(in_thread)
    await slack.settle()
    assert slack.fake.posted()[-1]["thread_ts"] == message["ts"] and "finance/travel.md" in as_text(
        slack.fake.posted()[-1]
    )


async def test_the_shortcut_says_why_it_cannot_answer(slack: Harness) -> None:
    empty = await slack.shortcut(user_message(""))
    slack.fake.not_member.add("C999")
    elsewhere = await slack.shortcut(user_message(RATE_LIMIT), channel="C999")
    await slack.settle()
    assert slack.responses(empty) == [say("slack_no_text")]
    assert slack.responses(elsewhere) == [say("slack_not_a_member")]
    assert slack.fake.posted() == []
