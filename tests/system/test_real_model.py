"""The bot on a real model server: llama-cpp-python's OpenAI-compatible server with SmolLM2-135M
(`make model-server`), which ignores options the fakes honour, returns numbers out of range, and
does not stop by itself. The tiny model's answers are often wrong; the bot must still behave: every
turn answered without the apology within 60 s, every request bounded by a limit the server honours."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.conversation import AMBIGUOUS, Conversation
from tests.support.model_server import MODEL_NAME, running_model_server
from threadsage.app.runtime import open_chat_service
from threadsage.chat import ReplyKind
from threadsage.settings.environment import Settings

pytestmark = pytest.mark.slow
TURN_SECONDS = 60


async def test_a_conversation_of_every_kind_on_a_real_server(tmp_path: Path, handbook_kb) -> None:
    async with running_model_server() as server:
        settings = Settings(
            THREADSAGE_DATA_DIR=tmp_path / "data",
            OPENAI_API_KEY="sk-local",
            OPENAI_BASE_URL=server.base_url,
            THREADSAGE_CHAT_MODEL=MODEL_NAME,
            DATABASE_URL=None,
            _env_file=None,
        )
        async with open_chat_service(settings, kb=handbook_kb) as chat:
            threads: dict[str, Conversation] = {}

            async def turn(said, thread, click=None):
                talk = threads.setdefault(thread, Conversation(chat, f"real:ws:chan:{thread}"))
                started = time.monotonic()
                replies = await (talk.click(*click) if click else talk.say(said))
                seconds = time.monotonic() - started
                assert replies, f"no reply to {said!r}"
                assert all(r.fixed != "apology" for r in replies), (said, replies)
                assert seconds < TURN_SECONDS, (said, seconds)
                return replies[0]

            await turn("How many days of annual leave do employees get?", "leave")
            await turn("And contractors?", "leave")  # a follow-up
            asked = await turn(AMBIGUOUS, "password")
            assert asked.kind is ReplyKind.CLARIFICATION  # the ambiguity backstop, whatever the model said
            await turn("(click)", "password", click=(asked.interrupt_id, 0))
            await turn("VPN 密码怎么重置？", "chinese")
            await turn("Hi there, how are you?", "small-talk")
            await turn("What is the capital of Australia?", "out-of-scope")
            calculation = await turn("What is 17 * 23 + 4?", "calculation")
            assert "395" in calculation.text

        chats = server.chat_exchanges()
        assert chats, "no request reached the model server"
        assert all(e.token_limit for e in chats), [e.body.get("max_tokens") for e in chats]
