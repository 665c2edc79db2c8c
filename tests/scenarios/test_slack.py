"""The Slack bot end to end: signed HTTP events into the real bolt app served by uvicorn, the
real slack_sdk client against a fake Slack Web API, a real chat service behind them
(tests/helpers/slack_harness.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.slack_api import TEAM, FakeSlack, FakeSocketMode, event_body, signed_headers
from tests.helpers.locations import HANDBOOK
from tests.helpers.slack_harness import (
    AMBIGUOUS,
    CHANNEL,
    OTHER_ORG,
    SECRET,
    TRAVEL,
    Harness,
    as_text,
    dm_message,
    mention_event,
    next_ts,
    running,
    thread_messages,
    thread_reply,
)
from threadsage.adapters.knowledge import open_knowledge_base
from threadsage.app.runtime import open_chat_service
from threadsage.bots.slack import SlackBot
from threadsage.bots.tokens import Signer, load_secret
from threadsage.chat import APOLOGY, NOT_YOURS, STALE, turn_ref
from threadsage.delivery.coordination import LocalCoordinator
from threadsage.i18n import say
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings


async def test_mention_is_answered_in_a_thread_with_sources_and_feedback(slack: Harness) -> None:
    ts = await slack.mention("Which cabin class may I book for a flight of 6 hours or more?")
    await slack.settle()
    [answer] = thread_messages(slack.fake, ts)
    assert answer["channel"] == CHANNEL
    blocks = answer["blocks"]
    assert "premium economy" in as_text(answer).lower()
    assert any(
        b["type"] == "context"
        and "*Sources:*" in b["elements"][0]["text"]
        and "finance/travel.md" in b["elements"][0]["text"]
        for b in blocks
    )
    feedback = blocks[-1]  # Slack's own feedback buttons
    assert feedback["type"] == "context_actions" and [e["type"] for e in feedback["elements"]] == ["feedback_buttons"]
    [buttons] = feedback["elements"]
    assert (buttons["positive_button"]["text"]["text"], buttons["negative_button"]["text"]["text"]) == ("👍", "👎")
    assert answer["text"] and answer["metadata"]["event_payload"]["turn"] == f"{CHANNEL}:{ts}"
    reactions = [(name, p["name"], p["timestamp"]) for name, p in slack.fake.calls if name.startswith("reactions.")]
    assert reactions == [("reactions.add", "eyes", ts), ("reactions.remove", "eyes", ts)]


async def test_agent_dm_each_question_is_answered_in_its_own_thread_with_its_own_memory(slack: Harness) -> None:
    """Slack's agent messaging (the manifest's agent_view): each top-level DM message is a question of its own."""
    first, second = dm_message(AMBIGUOUS, "D024BE91L"), dm_message("What is the rate limit per API key?", "D024BE91L")
    await slack.event(first)
    await slack.settle()
    [ask] = slack.fake.posted()
    assert ask["thread_ts"] == first["ts"] and "Which one do you mean?" in as_text(ask)
    await slack.event(second)  # not taken as the answer to the clarification pending in the first thread
    await slack.settle()
    reply = slack.fake.posted()[-1]
    assert reply["thread_ts"] == second["ts"] and "engineering/api-style-guide.md" in as_text(reply)
    await slack.event(dm_message("and what happens when it is exceeded?", "D024BE91L", thread_ts=second["ts"]))
    await slack.settle()
    follow_up = slack.fake.posted()[-1]
    assert follow_up["thread_ts"] == second["ts"] and "api-style-guide" in as_text(follow_up)  # the thread's memory


async def test_dm_is_answered_in_the_dm_and_a_dm_thread_is_its_own_session(classic_slack: Harness) -> None:
    slack = classic_slack  # an app still on assistant_view: the DM's top level is one conversation
    ts = next_ts()
    dm = {
        "type": "message",
        "channel": "D024BE91L",
        "user": "U2147483697",
        "text": AMBIGUOUS,
        "ts": ts,
        "event_ts": ts,
        "channel_type": "im",
    }
    await slack.event(dm)
    await slack.settle()
    [ask] = slack.fake.posted()
    assert ask["channel"] == "D024BE91L" and not ask.get("thread_ts")
    assert "Which one do you mean?" in as_text(ask)
    thread_ts = next_ts()
    in_thread = {
        **dm,
        "text": "What is the rate limit per API key?",
        "ts": thread_ts,
        "event_ts": thread_ts,
        "thread_ts": ts,
    }
    await slack.event(in_thread)
    await slack.settle()
    reply = slack.fake.posted()[-1]
    assert reply["thread_ts"] == ts and "engineering/api-style-guide.md" in as_text(reply)  # a question of its own


async def test_follow_up_in_the_thread_needs_no_mention(slack: Harness) -> None:
    ts = await slack.mention("What is the rate limit per API key for the Tidewater API?")
    await slack.settle()
    await slack.event(thread_reply("and what happens when it is exceeded?", ts))
    await slack.settle()
    replies = thread_messages(slack.fake, ts)
    assert len(replies) == 2 and "engineering/api-style-guide.md" in as_text(replies[1])
    # chatter in a thread the bot is not in, edits and bot messages are ignored
    other = next_ts()
    await slack.event(
        {"type": "message", "channel": CHANNEL, "user": "U222", "text": "lunch?", "ts": next_ts(), "thread_ts": other}
    )
    await slack.event(
        {"type": "message", "subtype": "message_changed", "channel": CHANNEL, "ts": next_ts(), "thread_ts": ts}
    )
    await slack.event(
        {
            "type": "message",
            "channel": CHANNEL,
            "bot_id": "B999",
            "user": "U999",
            "text": "beep",
            "ts": next_ts(),
            "thread_ts": ts,
        }
    )
    await slack.event(
        {"type": "message", "channel": CHANNEL, "user": "U222", "text": "top-level chatter", "ts": next_ts()}
    )
    await slack.settle()
    assert len(slack.fake.posted()) == 2


async def test_clarify_click_updates_the_question_and_answers_in_the_thread(slack: Harness) -> None:
    ts = await slack.mention(AMBIGUOUS)
    await slack.settle()
    [ask] = thread_messages(slack.fake, ts)
    actions = next(b for b in ask["blocks"] if b["type"] == "actions")
    labels = [e["text"]["text"] for e in actions["elements"]]
    assert len(labels) == 2 and all(len(label) <= 75 for label in labels)
    assert all(len(e["value"]) < 40 for e in actions["elements"])
    assert "reply in this thread" in as_text(ask)
    vpn = next(i for i, label in enumerate(labels) if "VPN" in label)
    assert await slack.click(ask, vpn) == 200
    await slack.settle()
    [update] = slack.fake.of("chat.update")
    assert update["ts"] == ask["ts"] and update["channel"] == CHANNEL
    assert not any(b["type"] == "actions" for b in update["blocks"])
    assert "chose: *VPN access" in as_text(update)
    answer = thread_messages(slack.fake, ts)[-1]
    assert "Gatekeeper" in as_text(answer) and "it/vpn.md" in as_text(answer)


async def test_someone_elses_click_a_double_click_and_a_forged_value(slack: Harness) -> None:
    ts = await slack.mention(AMBIGUOUS, user="U222")
    await slack.settle()
    [ask] = thread_messages(slack.fake, ts)
    await slack.click(ask, 0, user="U333")
    await slack.settle()
    assert [(e["user"], e["text"]) for e in slack.fake.of("chat.postEphemeral")] == [("U333", NOT_YOURS)]
    assert slack.fake.of("chat.update") == [] and len(thread_messages(slack.fake, ts)) == 1

    await slack.click(ask, 1, value=ask["blocks"][1]["elements"][1]["value"][:-2] + "AA")
    await slack.settle()
    assert slack.fake.of("chat.postEphemeral")[-1]["text"] == say("slack_invalid_button")

    await slack.click(ask, 0)
    await slack.click(ask, 1)
    await slack.settle()
    assert len(thread_messages(slack.fake, ts)) == 2  # the clarification and one answer
    assert slack.fake.of("chat.postEphemeral")[-1]["text"] == STALE
    assert len(slack.fake.of("chat.update")) == 1


async def test_a_button_copied_to_another_thread_is_rejected(slack: Harness) -> None:
    ts = await slack.mention(AMBIGUOUS)
    await slack.settle()
    [ask] = thread_messages(slack.fake, ts)
    elsewhere = {**ask, "thread_ts": "1710000999.000001"}
    await slack.click(elsewhere, 0)
    await slack.settle()
    assert slack.fake.of("chat.postEphemeral")[-1]["text"] == say("slack_invalid_button")


async def test_retries_and_the_double_delivery_of_a_mention_give_one_answer(slack: Harness) -> None:
    mention = mention_event("What is the rate limit per API key?")
    ts = mention["ts"]
    message = {**mention, "type": "message", "channel_type": "channel"}
    assert await slack.event(mention, "Ev-A") == 200
    assert (
        await slack.event(mention, "Ev-A", **{"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}) == 200
    )
    assert await slack.event(message, "Ev-B") == 200
    await slack.settle()
    assert len(thread_messages(slack.fake, ts)) == 1


async def test_bad_signature_and_stale_timestamp_are_refused(slack: Harness) -> None:
    body = event_body(
        {"type": "app_mention", "user": "U222", "text": "hi", "ts": next_ts(), "channel": CHANNEL}, "Ev-x"
    )
    assert await slack.send(body, {"X-Slack-Signature": "v0=" + "0" * 64}) == 401
    stale = signed_headers(SECRET, body, timestamp=1_600_000_000)
    assert await slack.send(body, stale) == 401
    assert await slack.send(b'{"type": "url_verification", "challenge": "abc"}') == 200
    await slack.settle()
    assert slack.fake.posted() == []


async def test_the_token_is_checked_once_at_start_up_and_not_per_event(slack: Harness) -> None:
    assert len(slack.fake.of("auth.test")) == 1  # before any event
    ts = await slack.mention(AMBIGUOUS)
    await slack.settle()
    [ask] = thread_messages(slack.fake, ts)
    await slack.click(ask, 0)
    follow_ts = next_ts()
    await slack.event({"type": "message", "channel": CHANNEL, "user": "U222", "text": "and the VPN?", "ts": follow_ts,
                       "event_ts": follow_ts, "thread_ts": ts, "channel_type": "channel"})  # fmt: skip
    await slack.settle()
    assert len(thread_messages(slack.fake, ts)) == 3
    assert len(slack.fake.of("auth.test")) == 1


async def test_a_refused_token_fails_at_start_up_in_one_clear_line(tmp_path: Path, handbook_kb) -> None:
    fake = FakeSlack().start()
    fake.revoked.add("xoxb-test")
    with pytest.raises(ValueError, match=r"^Slack refused SLACK_BOT_TOKEN \(invalid_auth\)$"):
        async with running(tmp_path, handbook_kb, fake=fake):
            pass
    fake.stop()


async def test_feedback_votes_are_stored_once_per_person(slack: Harness) -> None:
    ts = await slack.mention("Which cabin class may I book for a flight of 6 hours or more?")
    await slack.settle()
    [answer] = thread_messages(slack.fake, ts)
    await slack.click(answer, 0)
    await slack.click(answer, 1)
    await slack.settle()
    session = f"slack:T111:{CHANNEL}:{ts}"
    assert await slack.chat.feedback.votes(session, turn_ref(f"{CHANNEL}:{ts}")) == {"U222": -1}
    assert [e["text"][:13] for e in slack.fake.of("chat.postEphemeral")] == ["Thanks — your", "Thanks — your"]


async def test_people_from_another_organisation_are_not_answered(slack: Harness) -> None:
    """A channel shared with a partner (Slack Connect): colleagues are answered, the partner's people
    get an ephemeral notice when they address the bot and nothing else; no turn runs for them."""
    ts = await slack.mention(TRAVEL, user_team=TEAM, shared=True)
    clarification_ts = await slack.mention(AMBIGUOUS, user_team=TEAM, shared=True)
    await slack.settle()
    [answer], [ask] = thread_messages(slack.fake, ts), thread_messages(slack.fake, clarification_ts)
    outsider_ts = await slack.mention(TRAVEL, user="UEXT", user_team=OTHER_ORG, shared=True)
    unnamed_ts = await slack.mention(TRAVEL, user="UEXT2", shared=True)  # no team named, in a shared channel
    reply_ts = next_ts()
    await slack.event(
        {
            "type": "message",
            "channel": CHANNEL,
            "user": "UEXT",
            "user_team": OTHER_ORG,
            "team": OTHER_ORG,
            "text": "and for 5 hours?",
            "ts": reply_ts,
            "thread_ts": ts,
            "channel_type": "channel",
        },
        shared=True,
    )
    dm = {
        "type": "message",
        "channel": "D0EXT",
        "user": "UEXT",
        "user_team": OTHER_ORG,
        "text": TRAVEL,
        "ts": next_ts(),
        "channel_type": "im",
    }
    await slack.event(dm, shared=True)
    await slack.click(ask, 0, user="UEXT", user_team=OTHER_ORG)
    await slack.click(answer, 0, user="UEXT", user_team=OTHER_ORG)
    await slack.settle()
    notices = [(e["channel"], e["user"], e["text"]) for e in slack.fake.of("chat.postEphemeral")]
    external = say("slack_external")
    assert sorted(notices) == sorted(
        [(CHANNEL, "UEXT", external)] * 3 + [(CHANNEL, "UEXT2", external), ("D0EXT", "UEXT", external)]
    )
    assert sorted(m["thread_ts"] for m in slack.fake.posted()) == sorted(
        [ts, clarification_ts]
    )  # nothing more was posted
    assert slack.fake.of("chat.update") == []
    assert await slack.chat.feedback.votes(f"slack:{TEAM}:{CHANNEL}:{ts}", turn_ref(f"{CHANNEL}:{ts}")) == {}
    for session in (f"{CHANNEL}:{outsider_ts}", f"{CHANNEL}:{unnamed_ts}", "D0EXT:-"):  # no turn ran for them
        assert not await slack.chat.has_conversation(f"slack:{TEAM}:{session}")
    assert {p["timestamp"] for name, p in slack.fake.calls if name == "reactions.add"} == {ts, clarification_ts}


async def test_slack_allow_external_answers_other_organisations_too(tmp_path: Path, handbook_kb) -> None:
    fake = FakeSlack().start()
    async with running(tmp_path, handbook_kb, fake=fake, THREADSAGE_SLACK_ALLOW_EXTERNAL=True) as slack:
        ts = await slack.mention(TRAVEL, user="UEXT", user_team=OTHER_ORG, shared=True)
        await slack.settle()
        [answer] = thread_messages(fake, ts)
        assert "finance/travel.md" in as_text(answer) and fake.of("chat.postEphemeral") == []
    fake.stop()


async def test_slack_rate_limit_is_retried_after_retry_after(slack: Harness) -> None:
    slack.fake.rate_limit_next("chat.postMessage")
    ts = await slack.mention("What is the rate limit per API key?")
    await slack.settle()
    assert [name for name, _ in slack.fake.calls if name.startswith("chat.postMessage")] == [
        "chat.postMessage#429",
        "chat.postMessage",
    ]
    assert len(thread_messages(slack.fake, ts)) == 1


async def test_a_reaction_lost_on_the_way_does_not_cost_the_answer(slack: Harness) -> None:
    """👀 is a courtesy: a connection closed on reactions.add (as a burst of 200 met once) is
    retried once, then given up, and the question is answered all the same."""
    slack.fake.drop_next("reactions.add", times=2)
    ts = await slack.mention("Which cabin class may I book for a flight of 6 hours or more?")
    await slack.settle()
    assert [name for name, _ in slack.fake.calls if name.startswith("reactions.add")] == ["reactions.add#dropped"] * 2
    [answer] = thread_messages(slack.fake, ts)
    assert "premium economy" in as_text(answer).lower()


async def test_an_answer_slack_refuses_is_followed_by_an_apology_not_silence(slack: Harness) -> None:
    """In one process as through the queue: a turn that fails after the brain answered (here Slack
    refuses the answer's message) ends with an apology in the thread."""
    slack.fake.refuse_next("chat.postMessage", "invalid_blocks")
    ts = await slack.mention("Which cabin class may I book for a flight of 6 hours or more?")
    await slack.settle()
    assert [name for name, _ in slack.fake.calls if name.startswith("chat.postMessage")] == [
        "chat.postMessage#invalid_blocks",
        "chat.postMessage",
    ]
    [apology] = thread_messages(slack.fake, ts)
    assert apology["text"] == say("apology")


async def test_an_answer_lost_on_the_way_is_followed_by_an_apology_not_silence(slack: Harness) -> None:
    """In one process as through the queue: a turn that fails after the brain answered (the
    answer's connection closed, twice) ends with an apology in the thread."""
    slack.fake.drop_next("chat.postMessage", times=2)
    ts = await slack.mention("Which cabin class may I book for a flight of 6 hours or more?")
    await slack.settle()
    assert [name for name, _ in slack.fake.calls if name.startswith("chat.postMessage")] == [
        "chat.postMessage#dropped",
        "chat.postMessage#dropped",
        "chat.postMessage",
    ]
    [apology] = thread_messages(slack.fake, ts)
    assert apology["text"] == say("apology")


async def test_a_failing_brain_gets_an_apology_in_the_thread(tmp_path: Path) -> None:
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path / "kb", _env_file=None)
    kb = open_knowledge_base(settings)
    Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([HANDBOOK / "it"])
    async with running(tmp_path, kb) as slack:
        kb.close()
        ts = await slack.mention("What is the VPN password rotation?")
        await slack.settle()
        assert [m["text"] for m in thread_messages(slack.fake, ts)] == [APOLOGY]
    slack.fake.stop()


async def test_a_restart_between_the_clarification_and_the_click_still_resumes(
    tmp_path: Path, handbook_kb, pg_url: str
) -> None:
    fake = FakeSlack().start()
    async with running(tmp_path, handbook_kb, pg_url, fake) as first:
        ts = await first.mention(AMBIGUOUS)
        await first.settle()
        [ask] = thread_messages(fake, ts)
    async with running(tmp_path, handbook_kb, pg_url, fake) as second:  # a new bot, service and graph
        email = next(i for i, e in enumerate(ask["blocks"][1]["elements"]) if "mail" in e["text"]["text"].lower())
        await second.click(ask, email)
        await second.settle()
        answer = thread_messages(fake, ts)[-1]
        assert "it/email.md" in as_text(answer)
    fake.stop()


async def test_socket_mode_acks_envelopes_and_answers(tmp_path: Path, handbook_kb) -> None:
    from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler

    fake = FakeSlack().start()
    socket = await FakeSocketMode().start()
    fake.socket_url = socket.url
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path / "data", SLACK_BOT_TOKEN="xoxb-test", SLACK_APP_TOKEN="xapp-test",
                        SLACK_API_URL=fake.api_url, OPENAI_API_KEY=None, DATABASE_URL=None, _env_file=None)  # fmt: skip
    coordinator = LocalCoordinator()
    async with (
        open_chat_service(settings, handbook_kb, coordinator) as chat,
        SlackBot(
            settings, chat, coordinator, Signer(load_secret(settings, settings.data_dir)), receive=False
        ).running() as bot,
    ):
        handler = AsyncSocketModeHandler(bot.app, app_token="xapp-test", web_client=bot.client)
        await handler.connect_async()
        try:
            mention = mention_event("What is the rate limit per API key?")
            ts = mention["ts"]
            body = event_body(mention, "Ev-socket")
            await socket.send_event(body, "env-1")
            await socket.send_event(body, "env-2", retry_attempt=1)
            await fake.wait_for("chat.postMessage")
            await bot.tasks.drain(30)
            assert {a["envelope_id"] for a in socket.acks} >= {"env-1", "env-2"}
            assert len(thread_messages(fake, ts)) == 1
            assert fake.of("apps.connections.open")[0]["authorization"] == "Bearer xapp-test"
        finally:
            await handler.close_async()
            await socket.stop()
            fake.stop()
