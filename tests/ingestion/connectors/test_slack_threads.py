"""Resolved Slack threads as a source (issue 38), read from the fake Slack's Web API over HTTP: a
thread its asker marked ✅ is indexed as the question and the accepted answer, cited by its link;
a ✅ from anyone else resolves nothing; secrets are masked; a private channel's threads are for its
members only, a shared channel is refused (fail-closed); a thread no longer resolved leaves the
knowledge base, an edited answer is re-read. Then, through the Slack bot: who reads a private
channel's threads (its members, in a DM or in that channel) and who does not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from tests.fakes.slack_api import FakeSlack
from tests.helpers.slack_harness import CHANNEL, Harness, as_text, dm_message, running
from tests.helpers.syncing import sync
from threadsage.adapters.knowledge.collection import members_category
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

    again = await sync(kb, tmp_path, settings_for(settings, slack), **spec)
    assert (again.new, again.changed, again.unchanged, again.removed) == (0, 0, 2, 0)
    said(slack, "1700000200.000200", "U4", "Third floor now, by the lifts.", "1700000200.000100")  # edited
    slack.people[(HELP, "1700000100.000200")].pop("reactions")  # no longer resolved
    last = await sync(kb, tmp_path, settings_for(settings, slack), **spec)
    assert (last.changed, last.removed) == (1, 1)
    [printer] = kb.search_blocking("quokka printer", k=1)
    assert "Third floor" in printer.text
    assert not [h for h in kb.search_blocking("okapi VPN token", k=5) if h.source == LINK]


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
