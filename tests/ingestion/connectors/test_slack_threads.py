"""Resolved Slack threads as a source (issue 38), read from the fake Slack's Web API over HTTP: a
thread its asker marked ✅ is indexed as the question and the accepted answer, cited by its link;
a ✅ from anyone else resolves nothing; secrets are masked; a private channel's threads are for its
members only, a shared channel is refused (fail-closed); a thread no longer resolved leaves the
knowledge base, an edited answer is re-read. Then, through the Slack bot: who reads a private
channel's threads (its members, in a DM or in that channel) and who does not."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from tests.fakes.slack_api import FakeSlack
from tests.helpers.slack_harness import CHANNEL, Harness, as_text, dm_message, running
from tests.helpers.syncing import sync
from threadsage.adapters.knowledge.collection import members_category
from threadsage.delivery.coordination import LocalCoordinator
from threadsage.ingestion.connectors.slack import threads_key
from threadsage.ingestion.service import MARKS_POLL, knowledge_upkeep
from threadsage.ingestion.spec import SourceSpec
from threadsage.settings.environment import Settings

HELP, PRIVATE, SHARED = "C0HELPDESK", "G0PRIVATE1", "C0SHARED01"
LINK = "https://slack.com/archives/C0HELPDESK/p1700000100000100"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    fake = FakeSlack().start()
    fake.private_channels.add(PRIVATE)
    fake.shared.add(SHARED)
    yield fake
    fake.stop()


def said(slack: FakeSlack, ts: str, user: str, text: str, thread: str = "", ticked_by: tuple[str, ...] = ()) -> None:
    message: dict = {"channel": HELP, "ts": ts, "user": user, "text": text}
    if thread:
        message["thread_ts"] = thread
    if ticked_by:
        message["reactions"] = [{"name": "white_check_mark", "users": list(ticked_by), "count": len(ticked_by)}]
    slack.person_said(message)


def help_channel(slack: FakeSlack) -> None:
    said(slack, "1700000100.000100", "U1", "How do I reset the okapi VPN token? <@U0BOT>")
    said(slack, "1700000100.000200", "U2", "Open the portal; the admin password: hunter2", "1700000100.000100", ("U1",))
    said(slack, "1700000200.000100", "U3", "Where is the quokka printer?", ticked_by=("U3",))
    said(slack, "1700000200.000200", "U4", "Second floor, by the kitchen.", "1700000200.000100")
    said(slack, "1700000300.000100", "U5", "Is the wombat room bookable?")
    said(slack, "1700000300.000200", "U6", "Yes, through the calendar.", "1700000300.000100", ("U9",))  # a stranger
    said(slack, "1700000400.000100", "U7", "Anyone at the office today?")


def settings_for(settings: Settings, slack: FakeSlack) -> Settings:
    return settings.model_copy(update={"slack_bot_token": SecretStr("xoxb-test"), "slack_api_url": slack.api_url})


async def test_threads_the_asker_resolved_are_indexed_as_question_and_answer(
    kb, tmp_path: Path, settings: Settings, slack: FakeSlack
) -> None:
    help_channel(slack)
    spec = {"name": "help", "type": "slack", "channels": [HELP, PRIVATE, SHARED], "category": "it"}
    first = await sync(kb, tmp_path, settings_for(settings, slack), **spec)
    assert (first.new, first.error) == (2, "")
    assert dict(first.failures) == {SHARED: "shared with another organisation (Slack Connect): not indexed"}
    [vpn] = kb.search_blocking("reset okapi VPN token", k=1)
    assert (vpn.source, vpn.url, vpn.category) == (LINK, LINK, "it")
    assert "Open the portal" in vpn.text and "hunter2" not in vpn.text and "<@U0BOT>" not in vpn.text
    [printer] = kb.search_blocking("quokka printer", k=1)
    assert "Second floor" in printer.text  # the asker's ✅ on the question: the last reply answers
    assert not [h for h in kb.search_blocking("wombat room bookable", k=5) if "wombat" in h.text]  # a stranger's ✅

    again = await sync(kb, tmp_path, settings_for(settings, slack), **spec)  # within `every`, nothing marked
    assert (again.new, again.changed, again.unchanged, again.removed, again.error) == (0, 0, 0, 0, "")
    calls = len(slack.calls)
    said(slack, "1700000200.000200", "U4", "Third floor now, by the lifts.", "1700000200.000100")  # edited
    slack.people[(HELP, "1700000100.000200")].pop("reactions")  # no longer resolved
    marks = LocalCoordinator()  # what the bot does on the events of both (`bots/slack/resolving`)
    await marks.mark(threads_key(HELP), "1700000200.000100", 60)
    await marks.mark(threads_key(HELP), "1700000100.000100", 60)
    last = await sync(kb, tmp_path, settings_for(settings, slack), marks, **spec)
    assert (last.changed, last.removed) == (1, 1)
    read = [name for name, _ in slack.calls[calls:]]
    assert read.count("conversations.replies") == 2 and "conversations.history" not in read  # those two only
    [printer] = kb.search_blocking("quokka printer", k=1)
    assert "Third floor" in printer.text
    assert not [h for h in kb.search_blocking("okapi VPN token", k=5) if h.source == LINK]


async def test_a_full_sync_reads_again_only_the_threads_whose_question_shows_a_change(
    kb, tmp_path: Path, settings: Settings, slack: FakeSlack
) -> None:
    help_channel(slack)
    spec = {"name": "help", "type": "slack", "channels": [HELP], "category": "it", "every": "1s"}
    first = await sync(kb, tmp_path, settings_for(settings, slack), **spec)
    assert first.new == 2
    said(slack, "1700000300.000100", "U5", "Is the wombat room bookable?", ticked_by=("U5",))  # now resolved
    await asyncio.sleep(1.1)
    calls = len(slack.calls)
    second = await sync(kb, tmp_path, settings_for(settings, slack), **spec)
    assert (second.new, second.unchanged, second.removed) == (1, 2, 0)
    read = [(name, params.get("ts")) for name, params in slack.calls[calls:] if name == "conversations.replies"]
    assert read == [("conversations.replies", "1700000300.000100")]
    [room] = kb.search_blocking("wombat room bookable", k=1)
    assert "through the calendar" in room.text


async def test_an_experts_tick_resolves_a_thread_the_answerers_own_does_not(
    kb, tmp_path: Path, settings: Settings, slack: FakeSlack
) -> None:
    said(slack, "1700000600.000100", "U1", "How do I order a standing desk?")
    said(slack, "1700000600.000200", "U7", "File a facilities ticket.", "1700000600.000100", ("U8",))  # an expert's ✅
    said(slack, "1700000700.000100", "U1", "Who approves travel to Lisbon?")
    said(
        slack, "1700000700.000200", "U9", "Your manager, then finance.", "1700000700.000100", ("U9",)
    )  # the answerer's own
    slack.members["C0EXPERTS"] = ["U8"]
    experts = settings_for(settings, slack).model_copy(update={"experts": "it=C0EXPERTS"})
    status = await sync(kb, tmp_path, experts, name="help", type="slack", channels=[HELP], category="it")
    assert status.new == 1
    [desk] = kb.search_blocking("standing desk order", k=1)
    assert "facilities ticket" in desk.text
    assert not [h for h in kb.search_blocking("travel Lisbon approves", k=5) if "Lisbon" in h.text]


async def test_a_slack_source_without_the_bots_token_says_so(kb, tmp_path: Path, settings: Settings) -> None:
    status = await sync(kb, tmp_path, settings, name="help", type="slack", channels=[HELP])
    assert "SLACK_BOT_TOKEN" in status.error


def test_a_slack_source_names_channel_ids() -> None:
    with pytest.raises(ValueError, match="a slack source needs channels"):
        SourceSpec(name="help", type="slack")
    with pytest.raises(ValueError, match="Slack channel ids"):
        SourceSpec(name="help", type="slack", channels=("#help",))


def private_thread(slack: FakeSlack) -> None:
    root = {"channel": PRIVATE, "ts": "1700000500.000100", "user": "U1", "text": "What is the wombat budget code?"}
    slack.person_said(root)
    reaction = [{"name": "white_check_mark", "users": ["U1"], "count": 1}]
    slack.person_said(
        {"channel": PRIVATE, "ts": "1700000500.000200", "user": "U2", "text": "Budget code 4471, ask finance.",
         "thread_ts": root["ts"], "reactions": reaction}
    )  # fmt: skip
    slack.members[PRIVATE] = ["U1", "U2"]


async def test_a_private_channels_threads_are_read_by_its_members_only_in_a_dm_or_there(
    kb, tmp_path: Path, settings: Settings, slack: FakeSlack
) -> None:
    private_thread(slack)
    status = await sync(kb, tmp_path, settings_for(settings, slack), name="secret", type="slack", channels=[PRIVATE])
    assert (status.new, status.failures) == (1, [])
    [hit] = kb.search_blocking("wombat budget code", k=1)
    assert hit.category == members_category(PRIVATE)
    async with running(tmp_path, kb, fake=slack) as bot:
        member_dm = await ask_in_dm(bot, "U1", "What is the wombat budget code?")
        stranger_dm = await ask_in_dm(bot, "U3", "What is the wombat budget code?")
        public = await bot.mention("What is the wombat budget code?", user="U1")
        await bot.settle()
        in_public = [as_text(m) for m in bot.fake.current(CHANNEL, public) if m["ts"] != public]
        coverage = await bot.chat.documents_by_category()
    assert "4471" in member_dm and "4471" not in stranger_dm
    assert in_public and not any("4471" in text for text in in_public)  # another channel: not even a member
    assert members_category(PRIVATE) not in coverage  # its name is never listed


async def ask_in_dm(bot: Harness, user: str, text: str) -> str:
    channel = f"D0{user}"
    event = dm_message(text, channel, user=user)
    assert await bot.event(event) == 200
    await bot.settle()
    return " ".join(as_text(m) for m in bot.fake.current(channel) if m["ts"] != event["ts"])


async def test_the_running_upkeep_reads_a_marked_thread_within_seconds(
    kb, tmp_path: Path, settings: Settings, slack: FakeSlack
) -> None:
    help_channel(slack)
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n  - {{name: help, type: slack, channels: [{HELP}], category: it, every: 1h}}\n")
    marks = LocalCoordinator()
    running = settings_for(settings, slack).model_copy(update={"sources": sources})
    async with knowledge_upkeep(running, kb, marks=marks):
        await until(lambda: bool(kb.search_blocking("quokka printer", k=1)), 10)  # the first, full sync
        said(slack, "1700000300.000100", "U5", "Is the wombat room bookable?", ticked_by=("U5",))
        started = time.monotonic()
        await marks.mark(threads_key(HELP), "1700000300.000100", 60)  # the bot saw the ✅
        await until(lambda: any("calendar" in h.text for h in kb.search_blocking("wombat room bookable", k=3)), 10)
        assert time.monotonic() - started < MARKS_POLL + 3


async def until(condition: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within {seconds} s"
        await asyncio.sleep(0.1)
