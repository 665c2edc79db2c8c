"""Workers killed again and again mid-turn: how many answers were lost, doubled or blank.

    .venv/bin/python bench/crash_soak.py [--rounds 13] [--questions 6] [--workers 2]

Real processes as deployed: `threadsage serve` and --workers `threadsage worker`, Redis and
Postgres of this machine, the demo handbook in a Milvus Lite server, a fake Slack and a fake
model (0.4–1.4 s a call) in this process. Each round posts --questions new questions, kills every
worker while the model is being asked, starts them again, kills them all again right after an
answer is posted, and starts them again (tests/helpers/crash_soak.py). Then every question must have
exactly one answer, with the model's text in it. The goal is 0/0/0 over at least 50 kills.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import uuid
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers.crash_soak import soak  # noqa: E402
from tests.helpers.deployment import deployed  # noqa: E402
from tests.helpers.locations import HANDBOOK, POSTGRES_URL  # noqa: E402
from tests.helpers.served import milvus_server  # noqa: E402


async def main(rounds: int, questions: int, workers: int) -> None:
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        with tempfile.TemporaryDirectory() as scratch, milvus_server(Path(scratch) / "milvus", HANDBOOK) as milvus_uri:
            pg_url = f"{POSTGRES_URL}?options=-csearch_path%3D{schema}"
            async with deployed(Path(scratch), pg_url, milvus_uri) as stack:
                outcome = await soak(stack, rounds, questions, workers, progress=print)
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
    print(outcome.summary())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=13)
    parser.add_argument("--questions", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.questions, args.workers))
