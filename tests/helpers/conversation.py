"""A chat service for tests and a conversation with it: on the offline back-end (`service`), or on
the language-model back-end against the fake OpenAI server (`llm_chat`, `route_to` scripting its router);
`delivering` hands a turn over as the turn queue would."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI
from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.app.runtime import open_chat_service
from threadsage.chat import ChatService, ClarificationAnswer, Reply, Turn
from threadsage.delivery.current import Delivery, current_delivery
from threadsage.settings.environment import Settings

AMBIGUOUS = "How do I reset my password?"
QUESTION = "Which cabin class may I book for a flight of 6 hours or more?"


def settings_for(tmp_path: Path, database_url: str) -> Settings:
    return Settings(
        THREADSAGE_DATA_DIR=tmp_path / "data",
        DATABASE_URL=database_url or None,
        OPENAI_API_KEY=None,
        _env_file=None,
    )


@asynccontextmanager
async def service(tmp_path: Path, database_url: str, kb: KnowledgeBase, **options) -> AsyncIterator[ChatService]:
    async with open_chat_service(settings_for(tmp_path, database_url), kb=kb) as chat:
        yield dataclasses.replace(chat, **options)


class Conversation:
    """One session seen from the platform side: numbered messages from a given user."""

    def __init__(self, chat: ChatService, key: str = "test:ws:chan:thread") -> None:
        self.chat, self.key, self.n = chat, key, 0
        self.platform = key.split(":", 1)[0]  # the tests name their platform in the key

    async def say(self, text: str, user: str = "U1") -> list[Reply]:
        self.n += 1
        return await self.chat.handle(Turn(self.platform, self.key, user, f"m{self.n}", text=text))

    async def click(self, interrupt_id: str, option: int, user: str = "U1", click_id: str | None = None) -> list[Reply]:
        self.n += 1
        answer = ClarificationAnswer(interrupt_id, option=option)
        return await self.chat.handle(Turn(self.platform, self.key, user, click_id or f"c{self.n}", answer=answer))


def only(replies: list[Reply]) -> Reply:
    assert len(replies) == 1, replies
    return replies[0]


@asynccontextmanager
async def llm_chat(tmp_path: Path, llm: FakeOpenAI, kb, **overrides) -> AsyncIterator[ChatService]:
    settings = Settings(
        THREADSAGE_DATA_DIR=tmp_path / "data",
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=llm.base_url,
        _env_file=None,
        **{"THREADSAGE_LLM_TIMEOUT": 2, "THREADSAGE_LLM_RETRIES": 1, "DATABASE_URL": None, **overrides},
    )
    async with open_chat_service(settings, kb=kb) as chat:
        yield chat


def route_to(intent: str, confidence: float = 0.9, **extra) -> dict:
    return {"intent": intent, "confidence": confidence, "reasoning": "scripted", **extra}


@contextmanager
def delivering(delivery: Delivery) -> Iterator[None]:
    token = current_delivery.set(delivery)
    try:
        yield
    finally:
        current_delivery.reset(token)
