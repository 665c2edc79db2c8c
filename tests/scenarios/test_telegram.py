"""The Telegram bot end to end: the real python-telegram-bot against a fake Bot API over HTTP, a
real ChatService (offline back-end on the demo handbook, or the LLM back-end against the fake
OpenAI server), checkpoints in SQLite or Postgres."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_api import BOT, FakeBotAPI
from tests.helpers.locations import HANDBOOK
from tests.helpers.served import free_port
from tests.helpers.telegram_harness import (
    ANN,
    BOB,
    FORUM,
    GROUP,
    OTHER_BOT,
    TOKEN,
    TRAVEL,
    WEBHOOK_SECRET,
    bot_settings,
    exchange,
    mention,
    new_messages,
    private,
    running,
)
from threadsage.adapters.knowledge import open_knowledge_base
from threadsage.bots.telegram import TelegramBot, TelegramConfigError
from threadsage.bots.tokens import Button, ButtonKind, Signer, load_secret, session_digest
from threadsage.chat import APOLOGY, NOT_YOURS, STALE, turn_ref
from threadsage.http.server import create_app
from threadsage.i18n import say
from threadsage.ingestion.pipeline import Ingestor
from threadsage.memory.sessions import session_key
from threadsage.settings.environment import Settings

AMBIGUOUS = "How do I reset my password?"
VPN = "VPN access with Larkspur Connect › Resetting your password"
RATE_LIMIT = "What is the rate limit per API key for the Tidewater API?"
FOLLOW_UP = "and what happens when it is exceeded?"


def private_key(user: dict) -> str:
    return session_key("telegram", "-", str(user["id"]))


@pytest.fixture
def openai(llm: FakeOpenAI) -> FakeOpenAI:
    """The shared fake model server (`llm`), by the name this module's tests read best with."""
    return llm


@pytest.fixture
async def llm_bot(tmp_path: Path, fake: FakeBotAPI, openai: FakeOpenAI, handbook_kb) -> AsyncIterator[TelegramBot]:
    """The bot on the LLM back-end, whose answers the test scripts (`openai.script["answer"]`)."""
    openai.script["RouteDecision"] = {"intent": "FACT_LOOKUP", "confidence": 0.9, "reasoning": "scripted"}
    settings = bot_settings(tmp_path, fake, OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=openai.base_url)
    async with running(settings, handbook_kb) as telegram:
        yield telegram


async def eventually(condition: Callable[[], Awaitable[Any]], timeout: float = 5.0) -> Any:
    """Poll an async condition until it is truthy."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (value := await condition()):
        assert loop.time() < deadline, "condition never held"
        await asyncio.sleep(0.02)
    return value


def buttons(message: dict) -> list[dict]:
    return [b for row in message.get("reply_markup", {}).get("inline_keyboard", []) for b in row]


def first_source(message: dict) -> str:
    """The path of source [1] under an answer ("" when it has none)."""
    found = re.search(r"^\[1\] .* — (\S+)$", message["text"], re.M)
    return found.group(1) if found else ""


def last_call(fake: FakeBotAPI, method: str) -> dict:
    return fake.calls_of(method)[-1]


def method_index(fake: FakeBotAPI, method: str, **match: Any) -> int:
    """The position of the first call of `method` with these params among all calls."""
    for i, call in enumerate(fake.calls):
        if call.method == method and all(call.params.get(k) == v for k, v in match.items()):
            return i
    raise AssertionError(f"no {method} call with {match}")


# --- private chats --------------------------------------------------------------------------


async def test_private_question_gets_an_answer_with_sources_and_feedback_buttons(bot, fake) -> None:
    chat = private(ANN)
    _question, answer = await exchange(fake, chat, ANN, TRAVEL)
    sent = last_call(fake, "sendMessage")
    assert sent["parse_mode"] == "HTML" and "reply_parameters" not in sent and "message_thread_id" not in sent
    assert "economy" in answer["text"].lower()
    assert re.search(r"^Sources\n\[1\] Business travel policy › .+ — finance/travel\.md$", answer["text"], re.M)
    assert {"type": "code", "offset": answer["text"].index("finance/travel.md"), "length": 17} in answer["entities"]
    assert [b["text"] for b in buttons(answer)] == ["👍", "👎"]
    signer = Signer(load_secret(bot.settings, bot.settings.data_dir))
    for button in buttons(answer):
        assert len(button["callback_data"].encode()) <= 64
        assert signer.verify(button["callback_data"], private_key(ANN)).kind is ButtonKind.FEEDBACK
    assert method_index(fake, "sendChatAction", action="typing") < method_index(fake, "sendMessage")


async def test_start_help_new_and_unknown_commands(bot, fake) -> None:
    chat = private(ANN)
    assert (await exchange(fake, chat, ANN, "/start"))[1]["text"].startswith(say("tg_start"))  # then what it covers
    assert (await exchange(fake, chat, ANN, "/help"))[1]["text"] == say("tg_help", username="ask_bot")
    assert (await exchange(fake, chat, ANN, "/frobnicate"))[1]["text"] == say("tg_help", username="ask_bot")
    _q, clarification = await exchange(fake, chat, ANN, AMBIGUOUS)
    assert (await exchange(fake, chat, ANN, "/new"))[1]["text"] == say("new_started")
    since = len(fake.sent(chat["id"]))
    query = fake.click(clarification, ANN)
    await fake.wait_for(lambda: fake.answers_to(query))
    await fake.quiet()
    assert fake.answers_to(query) == [{"callback_query_id": query, "text": STALE}]  # the session was forgotten
    assert not fake.calls_of("editMessageText") and len(fake.sent(chat["id"])) == since


async def test_an_idle_private_session_starts_afresh(bot, fake) -> None:
    chat = private(ANN)
    await exchange(fake, chat, ANN, RATE_LIMIT)
    _q, remembered = await exchange(fake, chat, ANN, FOLLOW_UP)
    assert first_source(remembered) == "engineering/api-style-guide.md"
    bot.idle_after = timedelta(0)
    _q, forgotten = await exchange(fake, chat, ANN, FOLLOW_UP)
    # Read without the earlier question (the offline answer is deterministic: the same session would repeat it).
    assert forgotten["text"] != remembered["text"]


# --- groups ---------------------------------------------------------------------------------


async def test_group_answers_mentions_and_ask_only_and_replies_to_the_asker(bot, fake) -> None:
    question, answer = await exchange(fake, GROUP, ANN, mention(TRAVEL))
    sent = last_call(fake, "sendMessage")
    assert sent["reply_parameters"]["message_id"] == question["message_id"] and "message_thread_id" not in sent
    assert answer["reply_to_message"]["message_id"] == question["message_id"]
    assert "finance/travel.md" in answer["text"]
    for text in ("/ask@ask_bot " + TRAVEL, "/ask " + TRAVEL):
        asked, reply = await exchange(fake, GROUP, BOB, text)
        assert reply["reply_to_message"]["message_id"] == asked["message_id"] and "finance/travel.md" in reply["text"]
    since = len(fake.sent(GROUP["id"]))
    fake.say(GROUP, ANN, TRAVEL)  # not addressed to the bot
    fake.say(GROUP, OTHER_BOT, mention(TRAVEL))  # another bot
    fake.say(GROUP, ANN, "/ask@other_bot " + TRAVEL)  # another bot's command
    fake.say(GROUP, ANN, mention(TRAVEL + "?"), edit_of=question)  # an edit
    fake.push({"message": {"message_id": 1, "from": ANN, "chat": GROUP, "date": 0, "new_chat_members": [BOT]}})
    await fake.quiet()
    assert len(fake.sent(GROUP["id"])) == since


async def test_a_reply_to_the_bot_continues_the_session(bot, fake) -> None:
    _q, first = await exchange(fake, GROUP, ANN, mention(RATE_LIMIT))
    follow, continued = await exchange(fake, GROUP, ANN, FOLLOW_UP, reply_to=first)
    assert continued["reply_to_message"]["message_id"] == follow["message_id"]
    assert first_source(continued) == "engineering/api-style-guide.md"
    _q, fresh = await exchange(fake, GROUP, ANN, mention(FOLLOW_UP))  # a new mention: a new chain
    assert fresh["text"] != continued["text"]  # read without the earlier question
    _q, deeper = await exchange(fake, GROUP, BOB, FOLLOW_UP, reply_to=continued)  # anyone may follow up
    assert first_source(deeper) == "engineering/api-style-guide.md"


async def test_forum_topic_is_kept_for_answers_clarifications_and_clicks(bot, fake) -> None:
    topic_root = fake.message(FORUM, ANN, "VPN", topic=9001)
    topic_root["forum_topic_created"] = {"name": "VPN", "icon_color": 7322096}
    question, _answer = await exchange(fake, FORUM, ANN, mention(TRAVEL), topic=9001, reply_to=topic_root)
    sent = last_call(fake, "sendMessage")
    assert sent["message_thread_id"] == "9001" and sent["reply_parameters"]["message_id"] == question["message_id"]
    assert last_call(fake, "sendChatAction")["message_thread_id"] == "9001"
    _q, clarification = await exchange(fake, FORUM, ANN, mention(AMBIGUOUS), topic=9001, reply_to=topic_root)
    assert clarification["message_thread_id"] == 9001
    since = len(fake.sent(FORUM["id"]))
    fake.click(clarification, ANN)
    [resumed] = await new_messages(fake, FORUM, since)
    assert resumed["message_thread_id"] == 9001 and last_call(fake, "sendMessage")["message_thread_id"] == "9001"


# --- clarifications -------------------------------------------------------------------------


async def test_clarification_keyboard_click_edits_the_question_and_answers(bot, fake) -> None:
    chat = private(ANN)
    _q, clarification = await exchange(fake, chat, ANN, AMBIGUOUS)
    options = buttons(clarification)
    assert [b["text"] for b in options] == [VPN, "E-mail and calendar › Resetting your password"]
    assert all(len(b["callback_data"].encode()) <= 64 for b in options)
    assert clarification["text"].endswith(say("tg_hint_private"))
    assert clarification["entities"][-1]["type"] == "italic"
    since = len(fake.sent(chat["id"]))
    query = fake.click(clarification, ANN, option=0)
    [answer] = await new_messages(fake, chat, since)
    assert fake.answers_to(query) == [{"callback_query_id": query}]
    answered = method_index(fake, "answerCallbackQuery", callback_query_id=query)
    edited = method_index(fake, "editMessageText")
    assert answered < edited < max(i for i, call in enumerate(fake.calls) if call.method == "sendMessage")
    clarification = fake.messages[(chat["id"], clarification["message_id"])]
    assert clarification["text"].endswith(f"✅ {VPN}") and say("tg_hint_private") not in clarification["text"]
    assert "reply_markup" not in clarification
    assert "Gatekeeper" in answer["text"] and "it/vpn.md" in answer["text"]


async def test_in_a_group_only_the_asker_answers_and_only_once(bot, fake) -> None:
    question, clarification = await exchange(fake, GROUP, ANN, mention(AMBIGUOUS))
    assert clarification["text"].endswith(say("tg_hint_group"))
    first_option = buttons(clarification)[0]["callback_data"]
    since = len(fake.sent(GROUP["id"]))
    bobs = fake.click(clarification, BOB)
    await fake.wait_for(lambda: fake.answers_to(bobs))
    assert fake.answers_to(bobs) == [{"callback_query_id": bobs, "text": NOT_YOURS}]
    first, second = fake.click(clarification, ANN), fake.click(clarification, ANN, option=1)  # a double click
    [answer] = await new_messages(fake, GROUP, since)
    await fake.quiet()
    assert len(fake.sent(GROUP["id"])) == since + 1 and len(fake.calls_of("editMessageText")) == 1
    toasts = sorted(str(fake.answers_to(q)[0].get("text")) for q in (first, second))
    assert toasts == ["None", STALE] and all(len(fake.answers_to(q)) == 1 for q in (first, second))
    assert answer["reply_to_message"]["message_id"] == question["message_id"]
    late = fake.click(clarification, ANN, data=first_option)  # a stale client
    await fake.wait_for(lambda: fake.answers_to(late))
    assert fake.answers_to(late)[0]["text"] == STALE


async def test_replying_to_a_clarification_in_words_answers_it(bot, fake) -> None:
    _q, clarification = await exchange(fake, GROUP, ANN, mention(AMBIGUOUS))
    answer_text, answer = await exchange(fake, GROUP, ANN, "the VPN one, Larkspur Connect", reply_to=clarification)
    assert first_source(answer) == "it/vpn.md"
    assert answer["reply_to_message"]["message_id"] == answer_text["message_id"]


async def test_forged_oversized_and_foreign_buttons_are_rejected(bot, fake) -> None:
    chat = private(ANN)
    _q, clarification = await exchange(fake, chat, ANN, AMBIGUOUS)
    _q, bobs = await exchange(fake, private(BOB), BOB, AMBIGUOUS)
    other_secret = Signer(b"x" * 32).sign(Button(ButtonKind.CLARIFY, session_digest(private_key(ANN)), "00", 0))
    forged = ["clr:7f3a:1", "1" + "A" * 80, other_secret, buttons(bobs)[0]["callback_data"], ""]
    queries = [fake.click(clarification, ANN, data=data) for data in forged]
    await fake.wait_for(lambda: all(fake.answers_to(q) for q in queries))
    await fake.quiet()
    assert [fake.answers_to(q)[0].get("text") for q in queries] == [say("tg_invalid_button")] * len(forged)
    assert (
        not fake.calls_of("editMessageText") and fake.sent(chat["id"])[-1]["message_id"] == clarification["message_id"]
    )
    since = len(fake.sent(chat["id"]))
    fake.click(clarification, ANN)  # the real button still works
    [answer] = await new_messages(fake, chat, since)
    assert "Sources" in answer["text"]


async def test_a_second_feedback_click_changes_the_vote(bot, fake) -> None:
    chat = private(ANN)
    question, answer = await exchange(fake, chat, ANN, TRAVEL)
    key, ref = private_key(ANN), turn_ref(f"{chat['id']}:{question['message_id']}")
    up = fake.click(answer, ANN, option=0)
    await fake.wait_for(lambda: fake.answers_to(up))
    assert fake.answers_to(up)[0]["text"] == say("tg_thanks_up")
    assert await eventually(lambda: bot.chat.feedback.votes(key, ref)) == {str(ANN["id"]): 1}
    down = fake.click(answer, ANN, option=1)
    await fake.wait_for(lambda: fake.answers_to(down))

    async def changed() -> dict | None:
        votes = await bot.chat.feedback.votes(key, ref)
        return votes if votes == {str(ANN["id"]): -1} else None

    assert await eventually(changed)
    assert fake.answers_to(down)[0]["text"] == say("tg_thanks_down")


# --- who may use the bot -------------------------------------------------------------------


async def test_unset_the_bot_answers_no_one_and_tells_each_person_once(
    tmp_path, fake, openai, handbook_kb, caplog
) -> None:
    llm = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": openai.base_url}
    settings = bot_settings(tmp_path, fake, THREADSAGE_TELEGRAM_ALLOWED=None, **llm)
    async with running(settings, handbook_kb):
        assert "answers no one: THREADSAGE_TELEGRAM_ALLOWED is unset" in caplog.text
        chat = private(ANN)
        _q, notice = await exchange(fake, chat, ANN, TRAVEL)
        assert notice["text"] == say("tg_not_allowed", user=ANN["id"], chat=ANN["id"])
        fake.say(chat, ANN, RATE_LIMIT)  # told once: the next question gets nothing
        fake.say(GROUP, BOB, TRAVEL)  # group chatter not addressed to the bot
        fake.say(GROUP, BOB, "/ask@other_bot " + TRAVEL)
        await fake.quiet()
        assert len(fake.sent(chat["id"])) == 1 and not fake.sent(GROUP["id"])
        for command in ("/start", "/help"):  # asking for help is answered every time, with the same notice
            assert (await exchange(fake, chat, ANN, command))[1]["text"] == notice["text"]
        question, in_group = await exchange(fake, GROUP, BOB, mention(TRAVEL))
        assert in_group["text"] == say("tg_not_allowed", user=BOB["id"], chat=GROUP["id"])
        assert in_group["reply_to_message"]["message_id"] == question["message_id"]
        fake.say(GROUP, BOB, "/ask " + TRAVEL)
        await fake.quiet()
        assert len(fake.sent(GROUP["id"])) == 1
    assert openai.requests == [] and not fake.calls_of("sendChatAction")  # refused people cost no model call


async def test_listed_chats_are_answered_and_a_groups_id_allows_its_members_there(tmp_path, fake, handbook_kb) -> None:
    settings = bot_settings(tmp_path, fake, THREADSAGE_TELEGRAM_ALLOWED=f" {ANN['id']}, {GROUP['id']},")
    async with running(settings, handbook_kb):
        assert "finance/travel.md" in (await exchange(fake, private(ANN), ANN, TRAVEL))[1]["text"]
        assert "finance/travel.md" in (await exchange(fake, GROUP, BOB, mention(TRAVEL)))[1]["text"]
        _q, refused = await exchange(fake, private(BOB), BOB, TRAVEL)  # Bob himself is not listed
        assert refused["text"] == say("tg_not_allowed", user=BOB["id"], chat=BOB["id"])
        _q, elsewhere = await exchange(fake, FORUM, ANN, mention(TRAVEL))  # Ann, in a group that is not listed
        assert elsewhere["text"] == say("tg_not_allowed", user=ANN["id"], chat=FORUM["id"])


async def test_clicks_in_a_chat_no_longer_allowed_are_refused(tmp_path, fake, handbook_kb) -> None:
    async with running(bot_settings(tmp_path, fake), handbook_kb):
        _q, clarification = await exchange(fake, private(BOB), BOB, AMBIGUOUS)
    settings = bot_settings(tmp_path, fake, THREADSAGE_TELEGRAM_ALLOWED=str(ANN["id"]))
    async with running(settings, handbook_kb) as bot:
        since = len(fake.sent(BOB["id"]))
        query = fake.click(clarification, BOB)
        await fake.wait_for(lambda: fake.answers_to(query))
        await fake.quiet()
        assert fake.answers_to(query) == [
            {"callback_query_id": query, "text": say("tg_not_allowed_click", chat=BOB["id"])}
        ]
        assert not fake.calls_of("editMessageText") and len(fake.sent(BOB["id"])) == since
        assert await bot.chat.last_activity(private_key(BOB)) is not None  # the clarification is still open


async def test_a_refused_person_is_told_once_across_restarts_with_redis(tmp_path, fake, handbook_kb) -> None:
    prefix = f"test-{uuid.uuid4().hex[:10]}:"
    settings = bot_settings(
        tmp_path,
        fake,
        THREADSAGE_TELEGRAM_ALLOWED=None,
        REDIS_URL="redis://127.0.0.1:6379/0",
        THREADSAGE_REDIS_PREFIX=prefix,
    )
    try:
        async with running(settings, handbook_kb):
            await exchange(fake, private(ANN), ANN, TRAVEL)
        async with running(settings, handbook_kb):  # another process, the same Redis
            fake.say(private(ANN), ANN, RATE_LIMIT)
            await exchange(fake, private(ANN), ANN, "/help")
            await fake.quiet()
        assert [m["text"] for m in fake.sent(ANN["id"])] == [say("tg_not_allowed", user=ANN["id"], chat=ANN["id"])] * 2
    finally:
        redis = Redis.from_url("redis://127.0.0.1:6379/0")
        if keys := [key async for key in redis.scan_iter(f"{prefix}*")]:
            await redis.delete(*keys)
        await redis.aclose()


# --- transport ------------------------------------------------------------------------------


async def test_webhook_checks_the_secret_and_processes_updates(tmp_path, fake, handbook_kb) -> None:
    settings = bot_settings(
        tmp_path,
        fake,
        TELEGRAM_WEBHOOK_URL="https://bot.example/telegram/webhook",
        TELEGRAM_WEBHOOK_SECRET=WEBHOOK_SECRET,
    )
    async with running(settings, handbook_kb) as bot:
        assert fake.webhook == {"url": "https://bot.example/telegram/webhook", "secret_token": WEBHOOK_SECRET}
        assert not fake.calls_of("getUpdates", ok_only=False)
        app = create_app(bot.routes, ready=bot.ready)
        update = {"update_id": 1, "message": fake.message(private(ANN), ANN, TRAVEL)}
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bot") as client:
            assert (await client.get("/readyz")).json() == {"ready": True}
            for headers in ({}, {"X-Telegram-Bot-Api-Secret-Token": "wrong"}):
                assert (await client.post("/telegram/webhook", json=update, headers=headers)).status_code == 403
            good = {"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET}
            assert (await client.post("/telegram/webhook", content=b"{not json", headers=good)).status_code == 400
            assert (await client.post("/telegram/webhook", json=["no"], headers=good)).status_code == 400
            await fake.quiet(0.2)
            assert not fake.sent(ANN["id"])
            for _delivery in range(2):  # Telegram re-delivers when it misses an acknowledgement
                assert (await client.post("/telegram/webhook", json=update, headers=good)).status_code == 200
        [answer] = await new_messages(fake, private(ANN), 0)
        assert "finance/travel.md" in answer["text"]
        await fake.quiet()
        assert len(fake.sent(ANN["id"])) == 1


def test_telegram_settings_that_cannot_work_fail_clearly(tmp_path) -> None:
    base = {"THREADSAGE_DATA_DIR": tmp_path, "TELEGRAM_BOT_TOKEN": TOKEN, "_env_file": None}
    cases = [
        ({"TELEGRAM_BOT_TOKEN": None}, "TELEGRAM_BOT_TOKEN"),
        ({"TELEGRAM_WEBHOOK_URL": "https://bot.example/telegram/webhook"}, "TELEGRAM_WEBHOOK_SECRET is not"),
        (
            {"TELEGRAM_WEBHOOK_URL": "https://x/telegram/webhook", "TELEGRAM_WEBHOOK_SECRET": "has spaces"},
            "1–256 characters",
        ),
        ({"THREADSAGE_TELEGRAM_ALLOWED": "123456789, annlee"}, "'annlee' is neither an id"),
    ]
    for extra, message in cases:
        with pytest.raises(TelegramConfigError, match=message):
            TelegramBot(Settings(**{**base, **extra}), chat=None, coordinator=None)  # type: ignore[arg-type]


@pytest.fixture(params=["sqlite-private", "postgres-group"])
def restart_case(request: pytest.FixtureRequest) -> tuple[str | None, dict]:
    """(DATABASE_URL, chat): SQLite in a private chat, Postgres in a group."""
    if request.param == "sqlite-private":
        return None, private(ANN)
    return request.getfixturevalue("pg_url"), GROUP


async def test_a_restarted_bot_resumes_the_clarification(tmp_path, fake, handbook_kb, restart_case) -> None:
    database_url, chat = restart_case
    settings = bot_settings(tmp_path, fake, DATABASE_URL=database_url)
    text = AMBIGUOUS if chat["type"] == "private" else mention(AMBIGUOUS)
    async with running(settings, handbook_kb):
        _q, clarification = await exchange(fake, chat, ANN, text)
    async with running(settings, handbook_kb):  # a new process: new bot, new chat service
        since = len(fake.sent(chat["id"]))
        query = fake.click(clarification, ANN, option=1)
        [answer] = await new_messages(fake, chat, since)
    assert fake.answers_to(query) == [{"callback_query_id": query}]
    assert "it/email.md" in answer["text"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "stop_signal"), [("polling", signal.SIGTERM), ("webhook", signal.SIGINT)], ids=["polling", "webhook"]
)
async def test_threadsage_telegram_serves_until_signalled(tmp_path, fake, mode, stop_signal) -> None:
    """The entry point in its own process: answers, then stops cleanly on the signal. Polling runs
    with no one allowed (the banner and the log say so, /start gets the notice), the webhook with
    anyone."""
    port = free_port()
    ours = ("TELEGRAM_", "THREADSAGE_", "OPENAI_", "DATABASE_", "MILVUS_")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(ours)},
        "THREADSAGE_DATA_DIR": str(tmp_path / "data"),
        "THREADSAGE_EMBEDDINGS": "none",
        "THREADSAGE_HTTP_PORT": str(port),
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_API_URL": fake.url,
    }
    if mode == "webhook":
        env.update(TELEGRAM_WEBHOOK_URL="https://bot.example/telegram/webhook", TELEGRAM_WEBHOOK_SECRET=WEBHOOK_SECRET)
        env.update(THREADSAGE_TELEGRAM_ALLOWED="*")
    log = (tmp_path / "bot.log").open("w")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "threadsage.cli", "telegram", env=env, cwd=tmp_path, stdout=log, stderr=log
    )
    try:
        if mode == "polling":
            await fake.wait_for(lambda: fake.calls_of("getUpdates"), timeout=60)  # a process's start, as in served.py
            fake.say(private(ANN), ANN, "/start")
        else:
            await fake.wait_for(lambda: fake.webhook, timeout=60)
            update = {"update_id": 1, "message": fake.message(private(ANN), ANN, "/start")}
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                response = await eventually(lambda: webhook_post(client, update), timeout=10)
            assert response.status_code == 200
        [reply] = await new_messages(fake, private(ANN), 0)
        if mode == "webhook":
            assert reply["text"].startswith(say("tg_start"))  # then what it covers
        else:
            assert reply["text"] == say("tg_not_allowed", user=ANN["id"], chat=ANN["id"])
            output = (tmp_path / "bot.log").read_text()
            assert "Telegram: answers no one: THREADSAGE_TELEGRAM_ALLOWED is unset" in output  # the banner
            assert re.search(r'"level": "WARNING".*started \(polling\); answers no one', output), output
        process.send_signal(stop_signal)
        assert await asyncio.wait_for(process.wait(), 20) == 0, (tmp_path / "bot.log").read_text()[-3000:]
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        log.close()
    if mode == "polling":  # the last poll confirmed what was fetched
        assert fake.calls_of("getUpdates")[-1]["timeout"] == "0"


async def webhook_post(client: httpx.AsyncClient, update: dict) -> httpx.Response | None:
    try:
        return await client.post(
            "/telegram/webhook", json=update, headers={"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET}
        )
    except httpx.TransportError:
        return None  # not listening yet


# --- formatting and failures ----------------------------------------------------------------


async def test_markup_in_the_models_answer_is_escaped(llm_bot, fake, openai) -> None:
    openai.script["answer"] = "Use <b>unclosed tags and note that a < b & c > d [1]."
    _q, answer = await exchange(fake, private(ANN), ANN, TRAVEL)
    assert last_call(fake, "sendMessage")["parse_mode"] == "HTML"
    assert answer["text"].startswith("Use <b>unclosed tags and note that a < b & c > d [1].")
    assert [b["text"] for b in buttons(answer)] == ["👍", "👎"]


async def test_long_answers_are_split_with_the_keyboard_on_the_last_piece(llm_bot, fake, openai) -> None:
    paragraph = "Premium economy is allowed on long flights, as the policy explains at length. " * 20
    openai.script["answer"] = "\n\n".join(f"**Part {i}.** {paragraph} [1]" for i in range(5))
    chat = private(ANN)
    fake.say(chat, ANN, TRAVEL)
    await new_messages(fake, chat, 0, count=2)
    await fake.quiet()
    pieces = fake.sent(chat["id"])
    assert len(pieces) == 3 and all(len(p["text"]) <= 4096 for p in pieces)
    assert [len(buttons(p)) for p in pieces] == [0, 0, 2] and "Sources" in pieces[-1]["text"]
    text = "\n\n".join(p["text"] for p in pieces)
    assert all(text.count(f"Part {i}.") == 1 for i in range(5))
    assert all(e["type"] == "bold" for p in pieces for e in p["entities"] if e["type"] != "code")


async def test_rejected_formatting_is_retried_as_plain_text(bot, fake) -> None:
    fake.fail_next("sendMessage", 400, "Bad Request: can't parse entities: Unsupported start tag", html_only=True)
    _q, answer = await exchange(fake, private(ANN), ANN, TRAVEL)
    rejected, plain = fake.calls_of("sendMessage", ok_only=False)[-2:]
    assert rejected["parse_mode"] == "HTML" and "parse_mode" not in plain
    assert "finance/travel.md" in answer["text"] and len(buttons(answer)) == 2


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")  # raised inside PTB's RetryAfter
async def test_flood_control_is_waited_out(bot, fake) -> None:
    fake.fail_next("sendMessage", 429, "Too Many Requests: retry after 1", {"retry_after": 1})
    _q, answer = await exchange(fake, private(ANN), ANN, TRAVEL)
    statuses = [c.status for c in fake.calls if c.method == "sendMessage"]
    assert statuses == [429, 200] and "finance/travel.md" in answer["text"]


async def test_a_broken_knowledge_base_gets_an_apology(tmp_path, fake) -> None:
    settings = bot_settings(tmp_path, fake)
    kb = open_knowledge_base(settings)
    Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([HANDBOOK / "finance"])
    async with running(settings, kb):
        kb.close()  # every search now fails
        _q, reply = await exchange(fake, GROUP, ANN, mention("What is the hotel limit?"))
    assert reply["text"] == APOLOGY


async def test_a_failing_bot_still_apologises(bot, fake, monkeypatch) -> None:
    async def broken(_turn):
        raise RuntimeError("boom")
        yield  # an async generator, as the chat service's stream is

    monkeypatch.setattr(bot.chat, "stream", broken)
    question, reply = await exchange(fake, GROUP, ANN, mention(TRAVEL))
    assert reply["text"] == APOLOGY and reply["reply_to_message"]["message_id"] == question["message_id"]
