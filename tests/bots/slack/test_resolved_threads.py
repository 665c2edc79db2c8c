"""Resolved threads kept current (issue 38), end to end on the fake Slack: the bot's "Resolved"
button, pressed by the asker, makes its answer a document of the Slack source (pressed by anyone
else, nothing); a ✅ added, a question deleted and a channel deleted reach the source through
Slack's events within one sync, which reads only the threads the events named."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from tests.bots.slack.test_help_channels import EXPERTS, HELP, ephemerals, in_thread, say_in
from tests.fakes.slack_api import action_body
from tests.helpers.library import COVERED, library
from tests.helpers.slack_harness import Harness, next_ts, running
from tests.helpers.syncing import sync
from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.bots.slack.blocks import RESOLVE_ACTION
from threadsage.i18n import say
from threadsage.ingestion.connectors.slack import RESOLVED_EVENT
from threadsage.ingestion.state import SourceStatus
from threadsage.settings.environment import Settings

FORM = "application/x-www-form-urlencoded"
SOURCE = {"name": "help-threads", "type": "slack", "channels": [HELP], "category": "it"}


@asynccontextmanager
async def help_desk(tmp_path: Path) -> AsyncIterator[tuple[Harness, KnowledgeBase]]:
    """A help channel with experts, on the fake Slack, and the knowledge base its source syncs into."""
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
    with library(tmp_path / "library", settings) as shelf:
        options = {"THREADSAGE_HELP_CHANNELS": {HELP: "answer"}, "THREADSAGE_EXPERTS": f"*={EXPERTS}"}
        async with running(tmp_path, shelf.kb, **options) as slack:
            yield slack, shelf.kb


async def synced(slack: Harness, kb: KnowledgeBase, tmp_path: Path) -> SourceStatus:
    """One sync of the help channel's source, as the upkeep does, reading the marks the bot left."""
    return await sync(kb, tmp_path, slack.bot.settings, slack.bot.coordinator, **SOURCE)


async def press(slack: Harness, answer: dict, thread: str, user: str) -> None:
    [button] = [
        e for b in answer["blocks"] if b["type"] == "actions" for e in b["elements"] if e["action_id"] == RESOLVE_ACTION
    ]
    body = action_body(
        {**answer, "thread_ts": thread}, HELP, user, RESOLVE_ACTION, button["value"], "Resolved", next_ts()
    )
    assert await slack.send(body, content_type=FORM) == 200
    await slack.settle()


async def test_resolved_pressed_by_the_asker_makes_the_answer_knowledge_pressed_by_a_stranger_nothing(
    tmp_path: Path,
) -> None:
    async with help_desk(tmp_path) as (slack, kb):
        slack.fake.members[EXPERTS] = ["U700"]
        assert (await synced(slack, kb, tmp_path)).new == 0  # the first, full sync: nothing resolved yet
        ts = await say_in(slack, COVERED, user="U222")
        await slack.settle()
        [answer] = in_thread(slack, HELP, ts)
        labels = [e["text"]["text"] for b in answer["blocks"] if b["type"] == "actions" for e in b["elements"]]
        assert labels == [say("escalate_button"), say("resolve_button")]

        await press(slack, answer, ts, "U999")  # neither the asker nor an expert
        assert [m["text"] for m in ephemerals(slack, "U999")] == [say("resolve_not_yours")]
        assert (await synced(slack, kb, tmp_path)).new == 0

        await press(slack, answer, ts, "U222")
        await press(slack, answer, ts, "U700")  # an expert may too; recorded once
        assert [m["text"] for m in ephemerals(slack, "U700")] == [say("resolved_already")]
        [record] = [m for m in in_thread(slack, HELP, ts) if m["ts"] != answer["ts"]]
        assert record["metadata"]["event_type"] == RESOLVED_EVENT
        assert record["metadata"]["event_payload"] == {"by": "U222", "answer_ts": answer["ts"]}

        calls = len(slack.fake.calls)
        status = await synced(slack, kb, tmp_path)
        assert (status.new, status.error) == (1, "")
        assert "conversations.history" not in [name for name, _ in slack.fake.calls[calls:]]  # the marked thread only
        [hit] = kb.search_blocking(COVERED, k=1)
        assert hit.source.startswith(f"https://slack.com/archives/{HELP}/p") and "business class" in hit.text


async def test_a_tick_a_deleted_question_and_a_deleted_channel_reach_the_source_through_events(
    tmp_path: Path,
) -> None:
    async with help_desk(tmp_path) as (slack, kb):
        root, reply = next_ts(), next_ts()
        slack.fake.person_said({"channel": HELP, "ts": root, "user": "U1", "text": "Who signs the okapi forms?"})
        slack.fake.person_said(
            {"channel": HELP, "ts": reply, "user": "U2", "text": "The okapi desk signs them.", "thread_ts": root}
        )
        assert (await synced(slack, kb, tmp_path)).new == 0

        slack.fake.people[(HELP, reply)]["reactions"] = [{"name": "white_check_mark", "users": ["U1"], "count": 1}]
        await event(slack, {"type": "reaction_added", "user": "U1", "reaction": "white_check_mark",
                            "item": {"type": "message", "channel": HELP, "ts": reply}, "item_user": "U2"})  # fmt: skip
        assert (await synced(slack, kb, tmp_path)).new == 1
        assert "okapi desk" in kb.search_blocking("okapi forms signs", k=1)[0].text

        question = slack.fake.people.pop((HELP, root))
        deleted = {**question, "thread_ts": root, "reply_count": 1}
        await event(slack, {"type": "message", "subtype": "message_deleted", "channel": HELP, "hidden": True,
                            "deleted_ts": root, "previous_message": deleted})  # fmt: skip
        assert (await synced(slack, kb, tmp_path)).removed == 1

        slack.fake.person_said({**question, "channel": HELP})
        await event(slack, {"type": "reaction_added", "user": "U1", "reaction": "white_check_mark",
                            "item": {"type": "message", "channel": HELP, "ts": reply}, "item_user": "U2"})  # fmt: skip
        assert (await synced(slack, kb, tmp_path)).new == 1
        slack.fake.gone.add(HELP)
        await event(slack, {"type": "channel_deleted", "channel": HELP})
        status = await synced(slack, kb, tmp_path)
        assert (status.removed, status.error) == (1, "")
        assert not [h for h in kb.search_blocking("okapi forms signs", k=5) if "okapi" in h.text]


async def event(slack: Harness, fields: dict) -> None:
    ts = next_ts()
    assert await slack.event({"event_ts": ts, "ts": ts, **fields}) == 200
    await slack.settle()
