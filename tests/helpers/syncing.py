"""A source synced once into a knowledge base, as the running bot's upkeep would (`SyncEngine`, the
bot's token for a Slack source), and the settings that let the Confluence connector sign in to the
fake wiki."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import SecretStr

from tests.fakes.sites import FakeConfluence
from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.delivery.coordination import Coordinator
from threadsage.ingestion.connectors import connector_for
from threadsage.ingestion.engine import SyncEngine
from threadsage.ingestion.spec import SourceSpec
from threadsage.ingestion.state import SourceStatus, StateStore
from threadsage.settings.environment import Settings


def engine(kb: KnowledgeBase, tmp_path: Path) -> SyncEngine:
    return SyncEngine(kb, StateStore(tmp_path / "state"), 1200, 200, asyncio.Lock())


async def sync(
    kb: KnowledgeBase, tmp_path: Path, settings: Settings, marks: Coordinator | None = None, **spec: object
) -> SourceStatus:
    connector = connector_for(SourceSpec.model_validate(spec), settings, settings.data_dir, settings, marks)
    return await engine(kb, tmp_path).sync(connector)


def wiki_settings(settings: Settings) -> Settings:
    return settings.model_copy(
        update={"confluence_email": FakeConfluence.EMAIL, "confluence_api_token": SecretStr(FakeConfluence.TOKEN)}
    )
