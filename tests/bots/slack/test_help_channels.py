"""Help channels and the experts' loop (issue 38), end to end on the fake Slack: a question asked
without a mention is answered in its thread; what is not a question gets nothing; what the
documents do not cover goes to the experts' channel; an expert's first reply comes back to the
asker once and can be kept as the verified answer, which then answers the question again."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from tests.fakes.slack_api import BOT_ID, TEAM, action_body
from tests.helpers.library import COVERED, GAP, library
from tests.helpers.slack_harness import Harness, as_text, ephemeral_click, next_ts, running
from threadsage.bots.slack.help import ESCALATION_EVENT, RELAY_EVENT
from threadsage.bots.slack.places import Place
from threadsage.bots.tokens import Button, ButtonKind, session_digest
from threadsage.chat import turn_ref
from threadsage.i18n import say
from threadsage.settings.environment import Settings

HELP, EXPERTS, OTHER = "C0HELPDESK", "C0EXPERTS", "C0RANDOM"
FORM = "application/x-www-form-urlencoded"
TOKEN = "console-test-password-4b1d"


@asynccontextmanager
async def help_desk(tmp_path: Path, experts: bool = True, database_url: str = "") -> AsyncIterator[Harness]:
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
    with library(tmp_path / "library", settings) as shelf:
        options = {"THREADSAGE_HELP_CHANNELS": {HELP: "answer"}, "THREADSAGE_CONSOLE_TOKEN": TOKEN}
        if experts:
            options["THREADSAGE_EXPERTS"] = f"*={EXPERTS}"
        async with running(tmp_path, shelf.kb, database_url, **options) as slack:
            yield slack


async def console(slack: Harness, path: str) -> str:
    async with slack.http.get(f"{slack.url}{path}", headers={"Authorization": f"Bearer {TOKEN}"}) as response:
        assert response.status == 200, await response.text()
        return await response.text()


async def say_in(slack: Harness, text: str, channel: str = HELP, user: str = "U222", **fields: object) -> str:
    """A person's message in a channel (kept by the fake, as Slack keeps it); its ts."""
    ts = next_ts()
    event = {"type": "message", "channel": channel, "user": user, "text": text, "ts": ts, "event_ts": ts}
    event |= {"channel_type": "channel", **fields}
    assert await slack.event(slack.fake.person_said(event)) == 200
    return ts


def in_thread(slack: Harness, channel: str, ts: str) -> list[dict]:
    return [m for m in slack.fake.current(channel, ts) if m["ts"] != ts]


def escalations(slack: Harness) -> list[dict]:
    return [m for m in slack.fake.current(EXPERTS) if (m.get("metadata") or {}).get("event_type") == ESCALATION_EVENT]


def ephemerals(slack: Harness, user: str) -> list[dict]:
    return [m for m in slack.fake.of("chat.postEphemeral") if m.get("user") == user]


async def test_a_question_in_a_help_channel_is_answered_in_its_thread_without_a_mention(tmp_path: Path) -> None:
    async with help_desk(tmp_path, experts=False) as slack:
        ts = await say_in(slack, COVERED)
        await slack.settle()
        [answer] = in_thread(slack, HELP, ts)
        assert "business class" in as_text(answer) and answer["metadata"]["event_type"] == "threadsage_reply"
        assert say("escalate_button") not in as_text(answer)  # no experts to ask
        uncovered = await say_in(slack, GAP, user="U333")  # without experts: "not covered", as anywhere
        await slack.settle()
        [reply] = in_thread(slack, HELP, uncovered)
        assert say("not_found") in as_text(reply) or "documents" in as_text(reply)


async def test_what_is_not_a_question_gets_nothing_not_even_a_reaction(tmp_path: Path) -> None:
    async with help_desk(tmp_path) as slack:
        await say_in(slack, "Deploy is done, thanks all!")
        await say_in(slack, "good morning team")
        await say_in(slack, "lunch?")
        await say_in(slack, COVERED, subtype="bot_message", bot_id=BOT_ID, user="U0BOTS")  # another bot
        await say_in(slack, "", subtype="channel_join")
        await say_in(slack, COVERED, channel=OTHER)  # not a help channel: only mentions there
        await slack.settle()
        assert slack.fake.posted() == [] and slack.fake.of("reactions.add") == []


async def test_an_uncovered_question_goes_to_the_experts_and_their_first_reply_comes_back_once(
    tmp_path: Path,
) -> None:
    async with help_desk(tmp_path) as slack:
        ts = await say_in(slack, GAP)
        await slack.settle()
        assert in_thread(slack, HELP, ts) == []  # no "not covered" in the help channel
        [told] = ephemerals(slack, "U222")
        assert told["text"] == say("escalated_privately") and told["channel"] == HELP
        [escalation] = escalations(slack)
        shown = as_text(escalation)
        assert GAP in shown and "<@U222>" in shown and f"<#{HELP}>" in shown and f"/archives/{HELP}/p" in shown
        assert escalation["metadata"]["event_payload"] == {"channel": HELP, "ts": ts, "user": "U222", "question": GAP}

        await say_in(
            slack, "Ask People Ops: 16 weeks, form P-12.", channel=EXPERTS, user="U900", thread_ts=escalation["ts"]
        )
        await say_in(slack, "thanks, I'll add it to the wiki", channel=EXPERTS, user="U901", thread_ts=escalation["ts"])
        await slack.settle()
        [relayed] = in_thread(slack, HELP, ts)  # the first reply only
        assert (
            "16 weeks" in relayed["text"]
            and "<@U900>" in relayed["text"]
            and f"/archives/{EXPERTS}/p" in relayed["text"]
        )
        assert relayed["metadata"]["event_type"] == RELAY_EVENT
        [offer] = [m for m in ephemerals(slack, "U900") if "blocks" in m]
        assert offer["channel"] == EXPERTS and offer["thread_ts"] == escalation["ts"]
        assert escalations(slack) == [escalation]  # the relay is no new escalation, nor relayed again


async def test_a_relay_reads_the_escalation_thread_once(tmp_path: Path) -> None:
    """Whether the thread is an escalation and whether the reply came first: one conversations.replies."""
    async with help_desk(tmp_path) as slack:
        ts = await say_in(slack, GAP)
        await slack.settle()
        [escalation] = escalations(slack)
        before = len(slack.fake.of("conversations.replies"))
        await say_in(slack, "Ask People Ops: 16 weeks.", channel=EXPERTS, user="U900", thread_ts=escalation["ts"])
        await slack.settle()
        [relayed] = in_thread(slack, HELP, ts)
        assert "16 weeks" in relayed["text"]
        assert [m["ts"] for m in slack.fake.of("conversations.replies")[before:]] == [escalation["ts"]]


async def test_an_expert_keeps_their_reply_as_the_verified_answer_and_it_answers_the_question_again(
    tmp_path: Path,
) -> None:
    async with help_desk(tmp_path) as slack:
        await say_in(slack, GAP)
        await slack.settle()
        [escalation] = escalations(slack)
        await say_in(
            slack, "Ask People Ops: 16 weeks, form P-12.", channel=EXPERTS, user="U900", thread_ts=escalation["ts"]
        )
        await slack.settle()
        [offer] = [m for m in ephemerals(slack, "U900") if "blocks" in m]
        blocks = json.loads(offer["blocks"]) if isinstance(offer["blocks"], str) else offer["blocks"]
        [button] = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
        assert (
            await slack.send(ephemeral_click(offer, "U901", button["value"], button["action_id"]), content_type=FORM)
            == 200
        )
        assert (
            await slack.send(ephemeral_click(offer, "U900", "1garbage", button["action_id"]), content_type=FORM) == 200
        )
        await slack.settle()
        assert say("expert_not_yours") in [m["text"] for m in ephemerals(slack, "U901")]
        assert say("slack_invalid_button") in [m["text"] for m in ephemerals(slack, "U900")]
        assert slack.chat.loop is not None and await slack.chat.loop.records.verified() == []

        assert (
            await slack.send(ephemeral_click(offer, "U900", button["value"], button["action_id"]), content_type=FORM)
            == 200
        )
        await slack.settle()
        [kept] = await slack.chat.loop.records.verified()
        assert (kept.question, kept.answer, kept.verified_by) == (GAP, "Ask People Ops: 16 weeks, form P-12.", "u900")

        again = await say_in(slack, GAP, user="U444")
        await slack.settle()
        [answer] = in_thread(slack, HELP, again)
        assert "16 weeks" in as_text(answer) and "u900" in as_text(answer)
        assert len(escalations(slack)) == 1  # answered: not escalated again


async def test_still_need_help_sends_an_answer_and_its_question_to_the_experts(tmp_path: Path) -> None:
    async with help_desk(tmp_path) as slack:
        ts = await say_in(slack, COVERED)
        await slack.settle()
        [answer] = in_thread(slack, HELP, ts)
        [button, _] = [e for b in answer["blocks"] if b["type"] == "actions" for e in b["elements"]]
        assert button["text"]["text"] == say("escalate_button")  # then "Resolved" (test_resolved_threads)
        message = {**answer, "thread_ts": ts}
        forged = slack.bot.signer.sign(  # a token of another thread
            Button(ButtonKind.ESCALATE, session_digest(Place(TEAM, HELP, "1.1", False).session), turn_ref("x"), 0)
        )
        for value in (forged, button["value"], button["value"]):
            body = action_body(message, HELP, "U222", "escalate", value, button["text"]["text"], next_ts())
            assert await slack.send(body, content_type=FORM) == 200
            await slack.settle()
        [escalation] = escalations(slack)
        assert COVERED in as_text(escalation) and "business class" in as_text(escalation)  # the bot's attempt
        told = [m["text"] for m in ephemerals(slack, "U222")]
        assert told == [say("slack_invalid_button"), say("escalated_click"), say("escalated_already")]


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str:
    return "" if request.param == "sqlite" else request.getfixturevalue("pg_url")


async def test_the_console_shows_escalations_open_and_answered(tmp_path: Path, database_url: str) -> None:
    async with help_desk(tmp_path, database_url=database_url) as slack:
        await say_in(slack, GAP)
        await say_in(slack, "How do I book a meeting room?", user="U333")
        await slack.settle()
        [first] = [m for m in escalations(slack) if m["metadata"]["event_payload"]["question"] == GAP]
        await say_in(slack, "Ask People Ops: 16 weeks.", channel=EXPERTS, user="U900", thread_ts=first["ts"])
        await slack.settle()
        rows = json.loads(await console(slack, "/console/api/escalations"))
        assert {(r["question"], r["experts"], r.get("expert")) for r in rows} == {
            (GAP, EXPERTS, "U900"),
            ("How do I book a meeting room?", EXPERTS, None),
        }
        assert "user_id" not in rows[0]  # people only with the console's people filter
        page = await console(slack, "/console/escalations")
        assert "1 open · 1 answered" in page and "answered by U900" in page and GAP in page


DRAFTS = "C0ASKPEOPLE"


def review_click(slack: Harness, draft: dict, user: str, value: str, action_id: str) -> bytes:
    return action_body(draft, EXPERTS, user, action_id, value, "button", next_ts())


def draft_buttons(draft: dict) -> dict[str, dict]:
    return {e["action_id"]: e for b in draft["blocks"] if b["type"] == "actions" for e in b["elements"]}


async def test_a_draft_channels_answer_goes_to_the_experts_who_post_it_or_discard_it(tmp_path: Path) -> None:
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
    with library(tmp_path / "library", settings) as shelf:
        options = {"THREADSAGE_HELP_CHANNELS": {DRAFTS: "draft"}, "THREADSAGE_EXPERTS": f"*={EXPERTS}"}
        async with running(tmp_path, shelf.kb, **options) as slack:
            posted_ts = await say_in(slack, COVERED, channel=DRAFTS)
            discarded_ts = await say_in(
                slack, "Which class for flights of six hours or more?", channel=DRAFTS, user="U333"
            )
            await slack.settle()
            assert in_thread(slack, DRAFTS, posted_ts) == [] and in_thread(slack, DRAFTS, discarded_ts) == []
            assert [m["text"] for m in ephemerals(slack, "U222")] == [say("drafted_privately")]
            drafts = {m["metadata"]["event_payload"]["ts"]: m for m in escalations(slack)}
            draft = drafts[posted_ts]
            assert "business class" in as_text(draft) and set(draft_buttons(draft)) == {"draft_post", "draft_discard"}

            post = draft_buttons(draft)["draft_post"]
            forged = draft_buttons(drafts[discarded_ts])["draft_post"]["value"]  # another question's button
            for value in (forged, post["value"], post["value"]):
                assert (
                    await slack.send(review_click(slack, draft, "U900", value, "draft_post"), content_type=FORM) == 200
                )
                await slack.settle()
            [answer] = in_thread(slack, DRAFTS, posted_ts)  # posted once, as any answer is
            assert "business class" in as_text(answer) and answer["metadata"]["event_type"] == "threadsage_reply"
            assert "travel.md" in as_text(answer)
            told = [m["text"] for m in ephemerals(slack, "U900")]
            assert told == [say("slack_invalid_button"), say("draft_answered_already")]
            [marked] = [m for m in escalations(slack) if m["ts"] == draft["ts"]]
            assert "Posted as is by <@U900>" in as_text(marked) and not draft_buttons(marked)

            other = drafts[discarded_ts]
            discard = draft_buttons(other)["draft_discard"]["value"]
            assert (
                await slack.send(review_click(slack, other, "U901", discard, "draft_discard"), content_type=FORM) == 200
            )
            await slack.settle()
            assert in_thread(slack, DRAFTS, discarded_ts) == []
            [marked] = [m for m in escalations(slack) if m["ts"] == other["ts"]]
            assert "Discarded by <@U901>" in as_text(marked)
            await say_in(
                slack,
                "Business class, and book it through TripDesk.",
                channel=EXPERTS,
                user="U901",
                thread_ts=other["ts"],
            )
            await slack.settle()
            [relayed] = in_thread(slack, DRAFTS, discarded_ts)  # the expert's own version
            assert "TripDesk" in relayed["text"] and "<@U901>" in relayed["text"]


def test_a_draft_channel_needs_experts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THREADSAGE_HELP_CHANNELS", json.dumps({DRAFTS: "draft"}))
    with pytest.raises(ValueError, match="a `draft` channel's answers go to THREADSAGE_EXPERTS"):
        Settings(_env_file=None)
    monkeypatch.setenv("THREADSAGE_EXPERTS", f"*={EXPERTS},people=telegram:-100999")
    monkeypatch.setenv("THREADSAGE_HELP_CHANNELS", json.dumps({"telegram:-100123": "answer", f"#{HELP}": "answer"}))
    settings = Settings(_env_file=None)
    assert settings.help_channels == {"telegram:-100123": "answer", HELP: "answer"}
    assert settings.experts_for("people") == "telegram:-100999"  # the category's place, whatever its platform
    assert settings.experts_for("it") == EXPERTS  # else `*`'s
    assert settings.experts_on("people", "slack") is None and settings.experts_on("it", "slack") == EXPERTS
    monkeypatch.setenv("THREADSAGE_HELP_CHANNELS", json.dumps({HELP: "answer"}))
    monkeypatch.setenv("THREADSAGE_EXPERTS", "people")
    with pytest.raises(ValueError, match="is not category=place"):
        Settings(_env_file=None)


async def test_the_experts_own_threads_and_top_level_talk_are_left_alone(tmp_path: Path) -> None:
    async with help_desk(tmp_path) as slack:
        root = await say_in(slack, "Who is on call this weekend?", channel=EXPERTS, user="U900")  # not a help channel
        await say_in(slack, "Me, until Sunday night.", channel=EXPERTS, user="U901", thread_ts=root)
        await slack.settle()
        assert slack.fake.posted() == [] and slack.fake.of("chat.postEphemeral") == []
