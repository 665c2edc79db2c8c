"""The operator console at `/console`: what people asked, what the bot could not answer, the 👎s,
the clarifications and the knowledge base's state (docs/console.md)."""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from starlette.routing import Route

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.console.auth import ConsoleAuth, checked_token
from threadsage.console.knowledge import knowledge_info
from threadsage.console.knowledge_loop import LoopData
from threadsage.console.queries import ConsoleData
from threadsage.console.routes import Console
from threadsage.console.sessions import Sessions
from threadsage.memory.checkpoints import open_checkpointer
from threadsage.records.ingestions import IngestionLog
from threadsage.records.knowledge import KnowledgeRecords
from threadsage.records.tables import Tables
from threadsage.records.turns import QuestionStore
from threadsage.records.votes import FeedbackStore
from threadsage.settings.environment import Settings

log = logging.getLogger(__name__)


async def console_routes(
    settings: Settings,
    stack: AsyncExitStack,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    kb: KnowledgeBase | None = None,
) -> list[Route]:
    """The console's routes on the database of `checkpointer` (without one, the configured
    database is opened on `stack`: `threadsage serve` has none of its own), or none — and a log
    line saying so — while `THREADSAGE_CONSOLE_TOKEN` is unset. A token shorter than 24 characters
    stops the start (ConsoleConfigError, a ValueError). It puts the console together from several
    sections (its token, the database, what the knowledge view shows), so it takes `Settings`."""
    if settings.console_token is None or not settings.console_token.get_secret_value():
        log.info("operator console is off: set THREADSAGE_CONSOLE_TOKEN to serve it at /console")
        return []
    token = checked_token(settings.console_token.get_secret_value())
    database: BaseCheckpointSaver[Any] = (
        checkpointer if checkpointer is not None else await stack.enter_async_context(open_checkpointer(settings))
    )
    records = KnowledgeRecords(database)
    for store in (QuestionStore(database), FeedbackStore(database), records):  # `serve` writes none
        await store.setup()
    ingestions = IngestionLog(database)
    await ingestions.setup()
    sessions = Sessions(database, token)
    await sessions.setup()
    console = Console(
        ConsoleAuth(token, sessions),
        ConsoleData(Tables(database)),
        knowledge_info(settings, kb, ingestions),
        LoopData(records),
    )
    log.info("operator console at /console (THREADSAGE_CONSOLE_TOKEN signs in)")
    return console.routes()
