"""The operator console's queries on 100 000 recorded turns: every list and chart a page runs.

    .venv/bin/python bench/console_queries.py [--turns 100000] [--runs 15] [--backend both|sqlite|postgres]

Fills `threadsage_turns` (and `threadsage_feedback`: a vote on one answer in 20) with turns spread
over 90 days, 40 channels on two platforms, every outcome, one turn in ten a clarification, through
the stores' own tables (`QuestionStore.setup` creates the indexes). SQLite in a temporary file, and
Postgres (`DATABASE_URL`, default postgresql://postgres@127.0.0.1:5432/test) in a schema of the
run's own, dropped at the end. Then times each view's queries as the console runs them (the
default 30 days, all 90 days, and 90 days narrowed to one channel), median and worst of `--runs` after one
warm-up. Prints one Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import psycopg  # noqa: E402
from starlette.datastructures import QueryParams  # noqa: E402

from threadsage.console.filters import Filters  # noqa: E402
from threadsage.console.knowledge_loop import LoopData  # noqa: E402
from threadsage.console.queries import ConsoleData  # noqa: E402
from threadsage.memory.checkpoints import open_checkpointer  # noqa: E402
from threadsage.records.digest import DigestRecords  # noqa: E402
from threadsage.records.knowledge import CITED, CLOSES, KnowledgeRecords  # noqa: E402
from threadsage.records.tables import Tables  # noqa: E402
from threadsage.records.turns import COLUMNS, DAY_MS, OUTCOMES, TABLE, QuestionStore  # noqa: E402
from threadsage.records.votes import FeedbackStore  # noqa: E402
from threadsage.settings.environment import Settings  # noqa: E402

DEFAULT_DB = "postgresql://postgres@127.0.0.1:5432/test"
WORDS = [
    "vacation",
    "password",
    "laptop",
    "expense",
    "travel",
    "cabin",
    "badge",
    "parking",
    "payroll",
    "benefits",
    "vpn",
    "printer",
]


def turns(n: int, now_ms: int) -> tuple[list[list[Any]], list[tuple[Any, ...]]]:
    rng = random.Random(14)
    rows, votes = [], []
    for i in range(n):
        channel = f"C{rng.randrange(40):03d}"
        session = f"slack:T1:{channel}:{i // 3}"
        outcome = rng.choices(OUTCOMES, weights=[60, 12, 8, 10, 5, 5])[0]
        words = rng.sample(WORDS, 3)
        row = {
            "session_key": session, "message_id": f"m{i}", "at": now_ms - rng.randrange(90 * 86_400_000),
            "platform": "slack" if i % 4 else "telegram", "channel": channel, "thread": str(i // 3),
            "user_id": f"U{rng.randrange(500)}", "answer_ref": f"{i:08x}", "question": f"How do I {' '.join(words)}?",
            "standalone": None, "wording": " ".join(sorted(words)), "answer": "An answer [1]. " * 20,
            "route": "standard_retrieval", "outcome": outcome, "confidence": rng.random(), "llm_calls": 4,
            "latency_ms": rng.randrange(200, 9000),
            "citations": json.dumps([{"title": "Travel", "heading": "Flights", "path": "people/travel.md"}]),
            "closest": None, "options": json.dumps(["a", "b"]) if outcome == "clarified" else None,
            "choice": rng.choice(["chosen", "typed", "abandoned", None]) if outcome == "clarified" else None,
            "chosen": "a" if outcome == "clarified" else None, "chosen_index": None, "answers": None,
            "gap": 1 if outcome in ("not_covered", "low_confidence") else 0,
        }  # fmt: skip
        rows.append([row[c] for c in COLUMNS])
        if i % 20 == 0:
            votes.append((session, f"{i:08x}", row["user_id"], rng.choice([1, -1]), 0))
    return rows, votes


async def fill(tables: Tables, n: int) -> None:
    rows, votes = turns(n, int(time.time() * 1000))
    cited, closes = loop_rows(rows)
    marks = ", ".join(["{p}"] * len(COLUMNS))
    insert = f"INSERT INTO {TABLE} ({', '.join(COLUMNS)}) VALUES ({marks})".format(p=tables.p)
    vote = f"INSERT INTO threadsage_feedback VALUES ({tables.p}, {tables.p}, {tables.p}, {tables.p}, {tables.p})"
    conn: Any = tables._conn  # the bench fills in bulk, on the stores' own connection
    cite = f"INSERT INTO {CITED} VALUES ({', '.join([tables.p] * 10)})"
    close = f"INSERT INTO {CLOSES} VALUES ({', '.join([tables.p] * 11)})"
    if tables.sqlite:
        await conn.executemany(insert, rows)
        await conn.executemany(vote, votes)
        await conn.executemany(cite, cited)
        await conn.executemany(close, closes)
        await conn.commit()
        await refresh_votes(tables, votes)
        await conn.execute("ANALYZE")
        return
    async with conn.connection() as c, c.cursor() as cursor:
        await cursor.executemany(insert, rows)
        await cursor.executemany(vote, votes)
        await cursor.executemany(cite, cited)
        await cursor.executemany(close, closes)
    await refresh_votes(tables, votes)
    async with conn.connection() as c:  # as autovacuum leaves a table that has taken inserts
        await c.execute(f"VACUUM ANALYZE {TABLE}")
        await c.execute("VACUUM ANALYZE threadsage_turn_days")
        await c.execute("VACUUM ANALYZE threadsage_feedback")
        await c.execute(f"VACUUM ANALYZE {CITED}")
        await c.execute(f"VACUUM ANALYZE {CLOSES}")


def loop_rows(rows: list[list[Any]]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The knowledge loop's rows: each answered turn cites one of 300 documents (one in 20 of
    those citations stale), one gap in five is closed."""
    rng = random.Random(27)
    at, outcome = COLUMNS.index("at"), COLUMNS.index("outcome")
    cited, closes = [], []
    for row in rows:
        session, message, when, user = row[0], row[1], row[at], row[COLUMNS.index("user_id")]
        if row[outcome] == "answered":
            doc = f"doc{rng.randrange(300):04d}"
            stale = rng.random() < 0.05
            change = "changed to version ef567890" if stale else None
            cited.append((session, message, doc, when, user, f"Title {doc}", f"docs/{doc}.md", "abcd1234",
                          when + 1000 if stale else None, change))  # fmt: skip
        elif row[outcome] == "not_covered" and rng.random() < 0.2:
            closes.append((session, message, when + 1000, row[3], row[4], "doc0001", "Title", "docs/doc0001.md",
                           "An answer [1].", "[]", rng.choice(["sent", "limit", "scope"])))  # fmt: skip
    return cited, closes


async def refresh_votes(tables: Tables, votes: list[tuple[Any, ...]]) -> None:
    """Each vote counted into its turn's row, and every day's counts, as `QuestionStore` keeps
    them when turns and votes come in one by one."""
    store = QuestionStore.__new__(QuestionStore)
    store.tables = tables
    for session, ref, *_ in votes:
        await store.voted(session, ref)
    buckets = await tables.fetch(f"SELECT DISTINCT at / {DAY_MS}, platform, channel FROM {TABLE}")
    for day, platform, channel in buckets:
        await store._recount(int(day) * DAY_MS, platform, channel)


async def timed(run: Callable[[], Awaitable[object]], runs: int) -> tuple[float, float]:
    await run()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        await run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), max(times)


async def measure(name: str, settings: Settings, n: int, runs: int) -> list[str]:
    async with open_checkpointer(settings) as saver:
        records = KnowledgeRecords(saver)
        await QuestionStore(saver, knowledge=records).setup()
        await FeedbackStore(saver).setup()
        tables = Tables(saver)
        started = time.perf_counter()
        await fill(tables, n)
        print(f"{name}: {n} turns written in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        data = ConsoleData(tables)
        lines = []
        ranges = (
            ("30 days", {}),
            ("90 days: every turn", {"days": "90"}),
            ("90 days, one channel", {"days": "90", "channel": "C007"}),
        )
        for label, params in ranges:
            filters = Filters.parse(QueryParams(params))
            views: dict[str, Callable[[], Awaitable[object]]] = {
                "overview (2 queries)": lambda f=filters: data.overview(f),
                "questions list (200)": lambda f=filters: data.turns(f),
                "gaps (50 groups)": lambda f=filters: data.gaps(f),
                "clarifications (200)": lambda f=filters: data.clarifications(f),
            }
            for view, run in views.items():
                median, worst = await timed(run, runs)
                lines.append(f"| {name} | {label} | {view} | {median:.1f} | {worst:.1f} |")
        loop = LoopData(records)
        since = int(time.time() * 1000) - 30 * 86_400_000
        digest = DigestRecords(saver)
        week_end = int(time.time() * 1000)
        loop_views: dict[str, Callable[[], Awaitable[object]]] = {
            "stale answers (50 documents)": loop.stale,
            "closed gaps (200)": loop.closed,
            "open gaps to re-ask (30 days)": lambda: records.open_gaps(since),
            "weekly digest (every section)": lambda: digest.week(week_end - 7 * 86_400_000, week_end, since),
        }
        for view, run in loop_views.items():
            median, worst = await timed(run, runs)
            lines.append(f"| {name} | the knowledge loop | {view} | {median:.1f} | {worst:.1f} |")
        return lines


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--backend", choices=["both", "sqlite", "postgres"], default="both")
    args = parser.parse_args()
    lines = ["| store | filters | view | median ms | worst ms |", "|---|---|---|---:|---:|"]
    if args.backend in ("both", "sqlite"):
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings(THREADSAGE_DATA_DIR=Path(tmp), DATABASE_URL=None, _env_file=None)
            lines += await measure("SQLite", settings, args.turns, args.runs)
    if args.backend in ("both", "postgres"):
        url = os.environ.get("DATABASE_URL", DEFAULT_DB)
        schema = f"bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        try:
            settings = Settings(DATABASE_URL=f"{url}?options=-csearch_path%3D{schema}", _env_file=None)
            lines += await measure("Postgres", settings, args.turns, args.runs)
        finally:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")
    print("\n".join(lines))


if __name__ == "__main__":
    asyncio.run(main())
