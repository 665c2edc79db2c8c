"""Shared fixtures: settings on a temporary data directory, the bundled handbook, eval corpora."""

from __future__ import annotations

from pathlib import Path

import pytest

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.config import Settings

REPO = Path(__file__).resolve().parents[1]
HANDBOOK = REPO / "examples" / "handbook"
# Real corpora live beside the repository (../shared/eval), in CI as in development.
EVAL = REPO.parent / "shared" / "eval"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        THREADSAGE_DATA_DIR=tmp_path / "data",
        THREADSAGE_EMBEDDINGS="none",
        MILVUS_URI=None,
        _env_file=None,
    )


@pytest.fixture
def kb(settings: Settings):
    knowledge = KnowledgeBase.open(settings)
    yield knowledge
    knowledge.close()


@pytest.fixture(scope="session")
def eval_dir() -> Path:
    assert EVAL.is_dir(), f"the evaluation corpora are expected at {EVAL}"
    return EVAL
