"""Where the tests find what they use: the repository, the demo handbook, the eval corpora beside
the repository, the machine's PostgreSQL, and the web address the handbook's `it` folder is published at."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HANDBOOK = REPO / "demo" / "handbook"
# Real corpora live beside the repository (../shared/eval), in CI as in development.
EVAL = REPO.parent / "shared" / "eval"
POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"
HANDBOOK_SITE = "https://handbook.example.com/it/"
