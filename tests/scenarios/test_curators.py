"""Curators (`THREADSAGE_CURATORS`) save verified answers from the chat: a signed "Save as
verified answer" button that only they see — on Telegram under answers in their private chat with
the bot, on Slack in an ephemeral message after their answers. A click saves the answer (who,
when); a forged click, or anyone else's, is refused clearly, and so is a button whose answer's
document changed since. The saved answer is then given for a paraphrase, shown as verified with
who and its sources, and no longer once its document changes, until saved again."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.fakes.slack_api import TEAM
from tests.fakes.telegram_api import FakeBotAPI
from tests.helpers.library import COVERED, TRAVEL_2, library
from tests.helpers.slack_harness import CHANNEL, Harness, as_text, ephemeral_click, thread_messages
from tests.helpers.slack_harness import running as slack_running
from tests.helpers.telegram_harness import ANN, BOB, GROUP, bot_settings, exchange, mention, private, running
from threadsage.bots.slack.places import Place
from threadsage.bots.telegram.chains import private_key
from threadsage.bots.tokens import Button, ButtonKind, Signer, load_secret, session_digest
from threadsage.chat import turn_ref
from threadsage.i18n import say
from threadsage.settings.environment import Settings

PARAPHRASE = "Flights of six hours: which class may I book?"
SAVE = f"✅ {say('verify_button')}"


def labels(message: dict) -> list[str]:
    return [b["text"] for row in message.get("reply_markup", {}).get("inline_keyboard", []) for b in row]


async def toast(fake: FakeBotAPI, query: str) -> str | None:
    [answered] = await fake.wait_for(lambda: fake.answers_to(query))
    return answered.get("text")


def test_curators_are_named_by_platform() -> None:
    settings = Settings(THREADSAGE_CURATORS="slack:U0123ABCD, telegram:123456789", _env_file=None)
    assert settings.is_curator("slack", "U0123ABCD") and settings.is_curator("telegram", "123456789")
    assert not settings.is_curator("telegram", "U0123ABCD") and not settings.is_curator("slack", "123456789")
    with pytest.raises(ValueError, match="THREADSAGE_CURATORS: 'U0123ABCD' is not `platform:user id`"):
        Settings(THREADSAGE_CURATORS="U0123ABCD", _env_file=None)


async def test_a_curator_saves_an_answer_on_telegram_and_it_is_reused_until_its_page_changes(
    tmp_path: Path, fake: FakeBotAPI
) -> None:
    settings = bot_settings(tmp_path, fake, THREADSAGE_CURATORS=f"telegram:{ANN['id']}")
    with library(tmp_path / "library", settings) as shelf:
        async with running(settings, shelf.kb) as bot:
            _q, in_group = await exchange(fake, GROUP, ANN, mention(COVERED))
            assert labels(in_group) == ["👍", "👎"]  # everyone in a group would see it
            bobs_question, bobs = await exchange(fake, private(BOB), BOB, COVERED)
            assert labels(bobs) == ["👍", "👎"]  # not a curator
            _q, answer = await exchange(fake, private(ANN), ANN, COVERED)
            assert labels(answer) == ["👍", "👎", SAVE]

            signer = Signer(
                load_secret(settings, settings.data_dir)
            )  # a forged click: Bob signs a save of his own answer
            ref = turn_ref(f"{BOB['id']}:{bobs_question['message_id']}")
            forged = signer.sign(Button(ButtonKind.VERIFY, session_digest(private_key(BOB["id"])), ref, 1))
            assert await toast(fake, fake.click(bobs, BOB, data=forged)) == say("verify_not_curator")
            assert await toast(fake, fake.click(answer, ANN, data="1garbage")) == say("tg_invalid_button")
            assert bot.chat.loop is not None and await bot.chat.loop.records.verified() == []

            assert await toast(fake, fake.click(answer, ANN, option=2)) == say("verify_saved", who="Ann")
            [kept] = await bot.chat.loop.records.verified()
            assert kept.verified_by == "Ann" and kept.question == COVERED and kept.verified_at > 0

            _q, reused = await exchange(fake, private(BOB), BOB, PARAPHRASE)
            day = datetime.fromtimestamp(kept.verified_at / 1000, UTC).strftime("%Y-%m-%d")
            assert f"Verified answer (by Ann, {day})" in reused["text"] and "business class" in reused["text"]
            assert "travel.md" in reused["text"]  # its sources

            _q, older = await exchange(fake, private(ANN), ANN, COVERED)  # reused: no button to save it again
            assert labels(older) == ["👍", "👎"]
            await bot.chat.knowledge.changed(shelf.write("docs", "travel.md", TRAVEL_2))
            _q, fresh = await exchange(fake, private(BOB), BOB, PARAPHRASE)
            assert "Verified answer" not in fresh["text"] and "economy" in fresh["text"]  # stale: not given
            assert await toast(fake, fake.click(answer, ANN, option=2)) == say("verify_stale")

            _q, new = await exchange(fake, private(ANN), ANN, COVERED)  # verified again, from the new version
            assert "economy" in new["text"] and labels(new) == ["👍", "👎", SAVE]
            assert await toast(fake, fake.click(new, ANN, option=2)) == say("verify_saved", who="Ann")
            _q, again = await exchange(fake, private(BOB), BOB, PARAPHRASE)
            assert "Verified answer (by Ann" in again["text"] and "economy" in again["text"]


def offers(slack: Harness) -> list[dict]:
    return [m for m in slack.fake.of("chat.postEphemeral") if "blocks" in m]


def ephemeral_texts(slack: Harness, user: str) -> list[str]:
    return [str(m.get("text")) for m in slack.fake.of("chat.postEphemeral") if m.get("user") == user]


async def test_a_curator_saves_an_answer_on_slack_from_an_ephemeral_button(tmp_path: Path) -> None:
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
    with library(tmp_path / "library", settings) as shelf:
        async with slack_running(tmp_path, shelf.kb, THREADSAGE_CURATORS="slack:U222") as slack:
            others = await slack.mention(COVERED, user="U333")
            await slack.settle()
            assert offers(slack) == []  # U333 is not a curator
            ts = await slack.mention(COVERED)  # U222 is
            await slack.settle()
            [offer] = offers(slack)
            assert offer["user"] == "U222" and offer["thread_ts"] == ts and offer["channel"] == CHANNEL
            blocks = json.loads(offer["blocks"]) if isinstance(offer["blocks"], str) else offer["blocks"]
            [button] = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
            assert button["action_id"] == "verify" and button["text"]["text"] == say("verify_button")

            place = Place(TEAM, CHANNEL, others, False)  # U333 forges a save of the answer in their thread
            forged = slack.bot.signer.sign(
                Button(ButtonKind.VERIFY, session_digest(place.session), turn_ref(f"{CHANNEL}:{others}"), 1)
            )
            mine = {"channel": CHANNEL, "thread_ts": others, "text": ""}
            assert await slack.send(ephemeral_click(mine, "U333", forged), content_type=FORM) == 200
            assert await slack.send(ephemeral_click(offer, "U222", "1garbage"), content_type=FORM) == 200
            await slack.settle()
            assert say("verify_not_curator") in ephemeral_texts(slack, "U333")
            assert say("slack_invalid_button") in ephemeral_texts(slack, "U222")
            assert slack.chat.loop is not None and await slack.chat.loop.records.verified() == []

            assert await slack.send(ephemeral_click(offer, "U222", button["value"]), content_type=FORM) == 200
            await slack.settle()
            [kept] = await slack.chat.loop.records.verified()
            assert kept.verified_by == "u222" and kept.question == COVERED  # Slack's name of the person
            assert say("verify_saved", who="u222") in ephemeral_texts(slack, "U222")

            paraphrase = await slack.mention(PARAPHRASE, user="U444")
            await slack.settle()
            [reply] = [as_text(m) for m in thread_messages(slack.fake, paraphrase)]
            assert "Verified answer (by u222" in reply and "travel.md" in reply


FORM = "application/x-www-form-urlencoded"
