"""The bot on a real model server: llama-cpp-python's OpenAI-compatible server with SmolLM2-135M
(`make model-server`), which ignores options the fakes honour, returns numbers out of range, and
does not stop by itself. The tiny model's answers are often wrong; the bot must still behave: every
turn answered without the apology within 60 s, every request bounded by a limit the server honours.
Every turn goes through the service's event stream: the answer's words (drafts) come before its
final reply, and at least one turn shows them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.helpers.conversation import AMBIGUOUS
from tests.helpers.model_server import MODEL_NAME, running_model_server
from threadsage.app.runtime import open_chat_service
from threadsage.chat import ClarificationAnswer, Draft, Reply, ReplyKind, Turn
from threadsage.settings.environment import Settings

pytestmark = [pytest.mark.slow, pytest.mark.timed]  # no turn over 60 s on a server with one thread
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
            streamed_turns = 0

            async def turn(said, thread, click=None):
                nonlocal streamed_turns
                key, message = f"real:ws:chan:{thread}", f"m{time.monotonic_ns()}"
                answer = ClarificationAnswer(*click) if click else None
                started = time.monotonic()
                events = [
                    e async for e in chat.stream(Turn("real", key, "U1", message, None if click else said, answer))
                ]
                seconds = time.monotonic() - started
                replies = [e for e in events if isinstance(e, Reply)]
                assert replies, f"no reply to {said!r}"
                assert all(r.fixed != "apology" for r in replies), (said, replies)
                assert seconds < TURN_SECONDS, (said, seconds)
                drafts = [n for n, e in enumerate(events) if isinstance(e, Draft) and e.text]
                assert all(n < events.index(replies[0]) for n in drafts), (said, events)  # words first
                streamed_turns += bool(drafts)
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
            assert streamed_turns, "no turn showed the answer's words before its reply"

        chats = server.chat_exchanges()
        assert chats, "no request reached the model server"
        assert all(e.token_limit for e in chats), [e.body.get("max_tokens") for e in chats]
