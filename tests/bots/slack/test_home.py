"""The App Home tab through the real bolt app: `app_home_opened` → `views.publish` with what the bot
can answer, how to ask, and the person's recent questions linked to their threads."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.slack_api import BOT_USER, FakeSlack, home_opened
from tests.helpers.locations import HANDBOOK
from tests.helpers.slack_harness import CHANNEL, Harness, running, user_message
from threadsage.adapters.knowledge import open_knowledge_base
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings


def texts(view: dict) -> str:
    return json.dumps(view["blocks"], ensure_ascii=False)


async def test_home_lists_the_categories_a_dm_may_read_with_their_document_counts(tmp_path: Path) -> None:
    kb = open_knowledge_base(Settings(THREADSAGE_DATA_DIR=tmp_path / "kb", _env_file=None))
    for category in ("it", "people", "finance"):
        assert Ingestor(kb, 1200, 200).ingest_paths([HANDBOOK / category], category=category).ok
    fake = FakeSlack().start()
    scoping = {
        "THREADSAGE_CHANNEL_CATEGORIES": {CHANNEL: ["finance"]},
        "THREADSAGE_DEFAULT_CATEGORIES": ["it", "people"],
    }
    async with running(tmp_path, kb, fake=fake, **scoping) as slack:
        assert await slack.event(home_opened("U222")) == 200
        await slack.settle()
    kb.close()
    fake.stop()
    [published] = fake.of("views.publish")
    view = published["view"]
    assert published["user_id"] == "U222" and view["type"] == "home"
    shown = texts(view)
    it, people = len(list((HANDBOOK / "it").iterdir())), len(list((HANDBOOK / "people").iterdir()))
    assert f"*it* — {it} documents" in shown and f"*people* — {people} documents" in shown
    assert "finance" not in shown  # a channel's category is not what a DM reads
    assert "some channels read other categories" in shown
    assert "/ask" in shown and f"<@{BOT_USER}>" in shown and "Ask threadsage" in shown


async def test_home_links_the_persons_recent_questions_newest_first(slack: Harness) -> None:
    await slack.mention("What is the rate limit per API key?", user="U222")
    await slack.settle()
    asked_on = user_message("Which cabin class may I book for a flight of 6 hours or more?")
    await slack.shortcut(asked_on, user="U222")  # the message it was asked on is linked
    await slack.ask("What is the VPN address?", user="U222")  # private: nothing to link to
    await slack.mention("Someone else's question about the VPN", user="U333")
    await slack.settle()
    ask_ts = asked_on["ts"]
    assert await slack.event(home_opened("U222", tab="messages")) == 200  # the Messages tab: nothing to draw
    await slack.settle()
    assert slack.fake.of("views.publish") == []

    await slack.event(home_opened("U222"))
    await slack.settle()
    [published] = slack.fake.of("views.publish")
    recent = published["view"]["blocks"][-1]["text"]["text"].split("\n")
    link = f"https://acme.slack.com/archives/{CHANNEL}/p{ask_ts.replace('.', '')}"
    assert recent[0] == f"• <{link}|Which cabin class may I book for a flight of 6 hours or more?>"
    assert (
        recent[1].startswith(f"• <https://acme.slack.com/archives/{CHANNEL}/p")
        and "rate limit per API key" in recent[1]
    )
    assert len(recent) == 2  # only this person's
    assert {p["message_ts"] for p in slack.fake.of("chat.getPermalink")} >= {ask_ts}


async def test_a_new_person_is_invited_to_ask(slack: Harness) -> None:
    await slack.event(home_opened("U999"))
    await slack.settle()
    [published] = slack.fake.of("views.publish")
    assert "None yet" in texts(published["view"]) and "general" in texts(published["view"])
