"""The CPU of one checkpoint save to Postgres, client and server: LangGraph's `aput` against ours.

    .venv/bin/python bench/checkpoint_put.py [--puts 2000] [--rounds 4]

The checkpoints are real: one turn of each language-model route and a clarification asked and
answered run through `ChatService.handle` (the fake OpenAI server of the tests, the demo handbook
in BM25) and every `aput` of theirs is recorded. They are then saved again, turn by turn under
fresh thread ids, by each `aput` in turn (`--rounds` alternating blocks, `--puts` per variant in
all) through the checkpointer's pool to Postgres (`DATABASE_URL`, default
postgresql://postgres@127.0.0.1:5432/test, local: its backends' CPU is read from /proc) in a
schema of the run's own, dropped at the end. Client CPU is `time.process_time` (every thread of
this process); server CPU is the pool's backends' utime + stime (/proc/<pid>/stat, 10 ms ticks).
Prints one Markdown table, then what serialising the blobs costs on the loop and through a thread,
and what the largest value a session keeps costs (`MAX_ATTACHED_PASSAGES` passages of a chunk).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # for tests.fakes

import psycopg  # noqa: E402
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver  # noqa: E402

from bench.turn_overhead import CLARIFY_FIRST  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from threadsage.adapters.documents.attachments import MAX_ATTACHED_PASSAGES  # noqa: E402
from threadsage.adapters.knowledge import open_knowledge_base  # noqa: E402
from threadsage.app.runtime import open_chat_service  # noqa: E402
from threadsage.chat import ClarificationAnswer, ReplyKind, Turn  # noqa: E402
from threadsage.ingestion.pipeline import Ingestor  # noqa: E402
from threadsage.memory.checkpoints import PostgresSaver, postgres_checkpointer  # noqa: E402
from threadsage.memory.langgraph_internals import OneStatementPut, split_channel_values  # noqa: E402
from threadsage.settings.environment import Settings  # noqa: E402

HANDBOOK = REPO / "demo" / "handbook"
DEFAULT_DB = "postgresql://postgres@127.0.0.1:5432/test"
APP = "bench-checkpoint-put"
ROUTES = {
    "FACT_LOOKUP": "Which cabin class may I book for a flight of 6 hours or more?",
    "HOW_TO": "How do I request an exception to a security rule?",
    "COMPARISON": "What's the difference between the Lisbon and Toronto hotel limits?",
    "CODE_SEARCH": "Which command rolls back tidewater-api in production?",
    "CHIT_CHAT": "hello!",
}

Put = tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]  # config, checkpoint, metadata, versions
Saving = Callable[[PostgresSaver, Any, Any, Any, Any], Awaitable[Any]]
VARIANTS: dict[str, Saving] = {"LangGraph's aput": AsyncPostgresSaver.aput, "ours": OneStatementPut.aput}


@dataclass
class Row:
    variant: str
    puts: int = 0
    client: float = 0.0  # seconds of CPU
    server: float = 0.0
    wall: float = 0.0
    per_put: list[float] = field(default_factory=list)


async def record_turns(url: str, data_dir: Path) -> list[list[Put]]:
    """Every `aput` of one turn per route and of a clarification and its answer, by turn."""
    turns: list[list[Put]] = []
    original = PostgresSaver.aput

    async def recording(self: PostgresSaver, config: Any, checkpoint: Any, metadata: Any, versions: Any) -> Any:
        kept = {part: _primitives(config.get(part) or {}) for part in ("metadata", "configurable")}
        turns[-1].append(copy.deepcopy((kept, checkpoint, metadata, versions)))
        return await original(self, config, checkpoint, metadata, versions)

    fake = FakeOpenAI(latency=0).start()
    settings = Settings(
        THREADSAGE_DATA_DIR=data_dir,
        THREADSAGE_EMBEDDINGS="none",
        MILVUS_URI=None,
        DATABASE_URL=url,
        OPENAI_API_KEY="sk-bench",
        OPENAI_BASE_URL=fake.base_url,
        REDIS_URL=None,
        _env_file=None,
    )
    kb = open_knowledge_base(settings)
    PostgresSaver.aput = recording  # type: ignore[method-assign]
    try:
        assert Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([HANDBOOK]).ok
        async with open_chat_service(settings, kb=kb) as chat:
            for n, (intent, question) in enumerate(ROUTES.items()):
                fake.script["RouteDecision"] = {"intent": intent, "confidence": 0.9, "reasoning": "bench"}
                turns.append([])
                [reply] = await chat.handle(Turn("bench", f"bench:{n}", f"U{n}", "m1", text=question))
                assert reply.kind is ReplyKind.ANSWER, reply
            fake.script["RouteDecision"] = [
                CLARIFY_FIRST,
                {"intent": "HOW_TO", "confidence": 0.9, "reasoning": "bench"},
            ]
            turns.append([])
            [ask] = await chat.handle(Turn("bench", "bench:clarify", "U9", "m1", text="How do I reset my password?"))
            assert ask.interrupt_id is not None, ask
            turns.append([])
            click = Turn("bench", "bench:clarify", "U9", "c1", answer=ClarificationAnswer(ask.interrupt_id, 0))
            [reply] = await chat.handle(click)
            assert reply.kind is ReplyKind.ANSWER, reply
    finally:
        PostgresSaver.aput = original  # type: ignore[method-assign]
        kb.close()
        fake.stop()
    return turns


def cpu_of(pids: list[int]) -> float:
    """The user + system CPU of processes, in seconds."""
    ticks = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


async def backends(saver: PostgresSaver) -> list[int]:
    """The pool's backends (it hands its connections out in turn)."""
    async with saver.conn.connection() as conn:  # type: ignore[union-attr]
        rows = await (
            await conn.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s", (APP,))
        ).fetchall()
    return [row["pid"] for row in rows]


async def save(saver: PostgresSaver, saving: Saving, turns: list[list[Put]], puts: int, row: Row) -> None:
    """`puts` saves, whole turns under fresh thread ids."""
    pids = await backends(saver)
    server, client, wall, done = cpu_of(pids), time.process_time(), time.perf_counter(), 0
    while done < puts:
        for config, checkpoint, metadata, versions in turns[done % len(turns)]:
            thread = {**config["configurable"], "thread_id": uuid.uuid4().hex}
            started = time.process_time()
            await saving(saver, {**config, "configurable": thread}, checkpoint, metadata, versions)
            row.per_put.append(time.process_time() - started)
            done += 1
    row.client += time.process_time() - client
    row.wall += time.perf_counter() - wall
    row.server += cpu_of(pids) - server
    row.puts += done
    assert sorted(await backends(saver)) == sorted(pids), "the pool opened a connection during the run"


@dataclass
class Serialising:
    on_loop: float  # mean CPU of a put's `_dump_blobs`, seconds
    threaded: float  # the same through `asyncio.to_thread`
    slowest: float  # the slowest put's, wall
    largest: int  # its largest blob, bytes
    attached: float  # mean wall, the most passages a session keeps
    attached_bytes: int


async def serialising(saver: PostgresSaver, turns: list[list[Put]], chunk_chars: int) -> Serialising:
    args = []
    for config, checkpoint, _, versions in (put for turn in turns for put in turn):
        _, values = split_channel_values(checkpoint["channel_values"])
        versions = {k: v for k, v in versions.items() if k in values}
        args.append(("t", config["configurable"]["checkpoint_ns"], values, versions))
    rounds = 200
    started = time.process_time()
    for _ in range(rounds):
        for a in args:
            saver._dump_blobs(*a)
    on_loop = (time.process_time() - started) / (rounds * len(args))
    started = time.process_time()
    for _ in range(rounds):
        for a in args:
            await asyncio.to_thread(saver._dump_blobs, *a)
    threaded = (time.process_time() - started) / (rounds * len(args))
    slowest, largest = 0.0, 0
    for a in args:
        started = time.perf_counter()
        rows = saver._dump_blobs(*a)
        slowest = max(slowest, time.perf_counter() - started)
        largest = max([largest, *(len(r[5] or b"") for r in rows)])
    text = ("lorem ipsum dolor sit amet " * (chunk_chars // 27 + 1))[:chunk_chars]
    passage = {"id": "", "path": "files/report.pdf", "source": "upload", "title": "", "heading": "", "score": 0.5}
    attached = {"attached": [{**passage, "id": str(n), "text": text} for n in range(MAX_ATTACHED_PASSAGES)]}
    started = time.perf_counter()
    for _ in range(20):
        [row] = saver._dump_blobs("t", "", attached, {"attached": "1"})
    return Serialising(on_loop, threaded, slowest, largest, (time.perf_counter() - started) / 20, len(row[5] or b""))


def _primitives(part: dict[str, Any]) -> dict[str, Any]:
    """What of a config's part a put reads (the rest is LangGraph's runtime objects)."""
    return split_channel_values(part)[0]


async def main_async(args: argparse.Namespace) -> tuple[list[Row], list[list[Put]], Serialising]:
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    async with await psycopg.AsyncConnection.connect(args.database_url, autocommit=True) as conn:
        await conn.execute(f"CREATE SCHEMA {schema}")
    url = f"{args.database_url}?options=-csearch_path%3D{schema}"
    try:
        with tempfile.TemporaryDirectory(prefix="threadsage-checkpoint-put-") as scratch:
            turns = await record_turns(url, Path(scratch))
        url += f"&application_name={APP}"  # the replay's backends only
        rows = {name: Row(name) for name in VARIANTS}
        async with postgres_checkpointer(url) as saver:
            assert isinstance(saver, PostgresSaver)
            for saving in VARIANTS.values():  # warm-up; the pool may open a connection after `setup`
                for _ in range(100):
                    await saving(saver, *turns[0][0])
            for _ in range(args.rounds):
                for name, saving in VARIANTS.items():
                    await save(saver, saving, turns, args.puts // args.rounds, rows[name])
            serde = await serialising(saver, turns, Settings(_env_file=None).chunk_chars)
    finally:
        async with await psycopg.AsyncConnection.connect(args.database_url, autocommit=True) as conn:
            await conn.execute(f"DROP SCHEMA {schema} CASCADE")
    return list(rows.values()), turns, serde


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--puts", type=int, default=2000, help="saves per variant")
    parser.add_argument("--rounds", type=int, default=4, help="alternating blocks per variant")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL") or DEFAULT_DB)
    args = parser.parse_args()

    rows, turns, serde = asyncio.run(main_async(args))
    puts = [put for turn in turns for put in turn]
    print(
        f"{len(puts)} recorded puts in {len(turns)} turns, replayed {rows[0].puts} times per variant "
        f"in {args.rounds} alternating blocks; load {os.getloadavg()[0]:.1f}.\n"
    )
    print("| aput | client CPU µs/put | p50 / p99 µs | Postgres backend CPU µs/put | wall µs/put |")
    print("|---|---|---|---|---|")
    us = 1e6
    for row in rows:
        ordered = sorted(row.per_put)
        p50, p99 = ordered[len(ordered) // 2], ordered[int(len(ordered) * 0.99)]
        print(
            f"| {row.variant} | {row.client / row.puts * us:.0f} | {p50 * us:.0f} / {p99 * us:.0f} | "
            f"{row.server / row.puts * us:.0f} | {row.wall / row.puts * us:.0f} |"
        )
    print(
        f"\nSerialising a put's blobs (`_dump_blobs`): {serde.on_loop * us:.0f} µs CPU on the loop, "
        f"{serde.threaded * us:.0f} µs through asyncio.to_thread; the slowest put's {serde.slowest * us:.0f} µs "
        f"(wall, on the loop); the largest blob {serde.largest:,} bytes. {MAX_ATTACHED_PASSAGES} attached "
        f"passages: {serde.attached * us:.0f} µs, {serde.attached_bytes:,} bytes."
    )


if __name__ == "__main__":
    main()
