"""The bot's own time per turn, beside the model's: every route through `ChatService.handle`.

    .venv/bin/python bench/turn_overhead.py [--latency 0.05] [--turns 40] [--warmup 3] [--no-offline]

The language-model back-end talks over HTTP to the fake OpenAI-compatible server of the tests
(tests/fakes/openai_server.py), which answers every chat completion after `--latency` seconds;
the router's decision is scripted to force each route. The demo handbook (demo/handbook) is
ingested into a temporary Milvus Lite knowledge base (BM25) and checkpoints go to Postgres
(`DATABASE_URL`, default postgresql://postgres@127.0.0.1:5432/test) in a schema of the run's own,
dropped at the end. Every turn is a first question in a new session, from a person of its own.

Overhead per turn = wall time − (chat completions that turn × latency): retrieval, the graph,
checkpointing, the HTTP client and the prompts. For the offline back-end (no model) it is the
whole wall time; its routes are chosen by its own rules, so each has a question that takes it.
Prints one Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # for tests.fakes

import psycopg  # noqa: E402

from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from threadsage.adapters.knowledge import open_knowledge_base  # noqa: E402
from threadsage.app.runtime import open_chat_service  # noqa: E402
from threadsage.chat import ChatService, ClarificationAnswer, Reply, ReplyKind, Turn  # noqa: E402
from threadsage.ingestion.pipeline import Ingestor  # noqa: E402
from threadsage.settings.environment import Settings  # noqa: E402

HANDBOOK = REPO / "demo" / "handbook"
DEFAULT_DB = "postgresql://postgres@127.0.0.1:5432/test"

# route → (intent the scripted router returns, a question that suits the route)
LLM_ROUTES = {
    "fast_retrieval": ("FACT_LOOKUP", "Which cabin class may I book for a flight of 6 hours or more?"),
    "standard_retrieval": ("HOW_TO", "How do I request an exception to a security rule?"),
    "deep_search": ("COMPARISON", "What's the difference between the Lisbon and Toronto hotel limits?"),
    "code_search": ("CODE_SEARCH", "Which command rolls back tidewater-api in production?"),
    "direct_reply": ("CHIT_CHAT", "hello!"),
    "fallback": ("UNKNOWN", "Who won the football world cup in 1998?"),
}
# tests/scenarios/test_conversation.py, test_routes_of_the_offline_back_end
OFFLINE_ROUTES = {
    "fast_retrieval": "Which cabin class may I book for a flight of 6 hours or more?",
    "standard_retrieval": "How do I request an exception to a security rule?",
    "deep_search": "What's the difference between the Lisbon and Toronto hotel limits?",
    "code_search": "Which command rolls back tidewater-api in production?",
    "direct_reply": "hello!",
    "fallback": "Who won the football world cup in 1998?",
}
AMBIGUOUS = "How do I reset my password?"
CLARIFY_FIRST = {
    "intent": "HOW_TO",
    "confidence": 0.9,
    "clarify": True,
    "reasoning": "bench",
    "clarify_prompt": "Which password?",
    "clarify_options": ["VPN password", "E-mail password"],
}
TARGETS = {"fast_retrieval": 2, "standard_retrieval": 3}  # LLM calls per turn, first hop


@dataclass
class Row:
    backend: str
    route: str
    walls: list[float] = field(default_factory=list)  # seconds
    overheads: list[float] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


class Bench:
    def __init__(self, chat: ChatService, fake: FakeOpenAI | None, latency: float) -> None:
        self.chat, self.fake, self.latency = chat, fake, latency
        self.n = 0

    def _key(self, label: str) -> str:
        self.n += 1
        return f"bench:{label}:{uuid.uuid4().hex[:8]}:{self.n}"

    async def _timed(self, turn: Turn) -> tuple[Reply, float, int]:
        if self.fake is not None:
            self.fake.requests.clear()
        started = time.perf_counter()
        replies = await self.chat.handle(turn)
        wall = time.perf_counter() - started
        calls = len(self.fake.chat_kinds()) if self.fake is not None else 0
        assert len(replies) == 1, replies
        return replies[0], wall, calls

    def _record(self, row: Row | None, reply: Reply, wall: float, calls: int, expect: tuple[ReplyKind, str]) -> None:
        if row is None:
            return
        row.walls.append(wall)
        row.calls.append(calls)
        row.overheads.append(wall - calls * self.latency)
        if (reply.kind, reply.route) != expect:
            row.unexpected.append(f"{reply.kind}/{reply.route}: {reply.text[:80]!r}")

    def _user(self) -> str:
        # A person of its own per session: the per-person rate limit must not bite the bench.
        return f"U{self.n}"

    async def question(self, row: Row | None, route: str, text: str) -> None:
        turn = Turn("bench", self._key(route), self._user(), "m1", text=text)
        reply, wall, calls = await self._timed(turn)
        self._record(row, reply, wall, calls, (ReplyKind.ANSWER, route))

    async def clarify_resume(self, ask_row: Row | None, click_row: Row | None, script: bool) -> None:
        if script:
            assert self.fake is not None
            self.fake.script["RouteDecision"] = [
                dict(CLARIFY_FIRST),
                {"intent": "HOW_TO", "confidence": 0.95, "reasoning": "bench"},
            ]
        key, user = self._key("clarify"), self._user()
        ask, wall, calls = await self._timed(Turn("bench", key, user, "m1", text=AMBIGUOUS))
        self._record(ask_row, ask, wall, calls, (ReplyKind.CLARIFICATION, "clarify_needed"))
        if ask.kind is not ReplyKind.CLARIFICATION or ask.interrupt_id is None:
            return
        click = Turn("bench", key, user, "c1", answer=ClarificationAnswer(ask.interrupt_id, option=0))
        answer, wall, calls = await self._timed(click)
        self._record(click_row, answer, wall, calls, (ReplyKind.ANSWER, "standard_retrieval"))


async def run_routes(
    bench: Bench, backend: str, questions: dict[str, str], turns: int, warmup: int, fake: FakeOpenAI | None = None
) -> list[Row]:
    """Every route's question `turns` times (after `warmup` untimed), then clarify → resume.
    With the fake model, its router is scripted to take each route."""
    rows = []
    for route, question in questions.items():
        if fake is not None:
            fake.script["RouteDecision"] = {"intent": LLM_ROUTES[route][0], "confidence": 0.9, "reasoning": "bench"}
        for _ in range(warmup):
            await bench.question(None, route, question)
        row = Row(backend, route)
        for _ in range(turns):
            await bench.question(row, route, question)
        rows.append(row)
    if fake is not None:
        fake.script.pop("RouteDecision", None)
    ask, click = Row(backend, "clarify (ask)"), Row(backend, "clarify → resume (click)")
    for _ in range(warmup):
        await bench.clarify_resume(None, None, script=fake is not None)
    for _ in range(turns):
        await bench.clarify_resume(ask, click, script=fake is not None)
    return [*rows, ask, click]


def settings_for(data_dir: Path, database_url: str, fake: FakeOpenAI | None) -> Settings:
    return Settings(
        THREADSAGE_DATA_DIR=data_dir,
        THREADSAGE_EMBEDDINGS="none",
        MILVUS_URI=None,
        DATABASE_URL=database_url,
        OPENAI_API_KEY="sk-bench" if fake else None,
        OPENAI_BASE_URL=fake.base_url if fake else None,
        REDIS_URL=None,
        _env_file=None,
    )


async def main_async(args: argparse.Namespace) -> list[Row]:
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    async with await psycopg.AsyncConnection.connect(args.database_url, autocommit=True) as conn:
        await conn.execute(f"CREATE SCHEMA {schema}")
    url = f"{args.database_url}?options=-csearch_path%3D{schema}"
    fake = FakeOpenAI(latency=args.latency).start()
    rows: list[Row] = []
    try:
        with tempfile.TemporaryDirectory(prefix="threadsage-turn-overhead-") as scratch:
            data_dir = Path(scratch)
            kb = open_knowledge_base(settings_for(data_dir, url, None))
            try:
                settings = settings_for(data_dir, url, fake)
                report = Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([HANDBOOK])
                assert report.ok, report.summary()
                async with open_chat_service(settings, kb=kb) as chat:
                    questions = {route: question for route, (_, question) in LLM_ROUTES.items()}
                    rows += await run_routes(
                        Bench(chat, fake, args.latency), "llm", questions, args.turns, args.warmup, fake
                    )
                if not args.no_offline:
                    async with open_chat_service(settings_for(data_dir, url, None), kb=kb) as chat:
                        rows += await run_routes(
                            Bench(chat, None, 0.0), "offline", OFFLINE_ROUTES, args.turns, args.warmup
                        )
            finally:
                kb.close()
    finally:
        fake.stop()
        async with await psycopg.AsyncConnection.connect(args.database_url, autocommit=True) as conn:
            await conn.execute(f"DROP SCHEMA {schema} CASCADE")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per chat completion")
    parser.add_argument("--turns", type=int, default=40, help="measured turns per route")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured turns per route first")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL") or DEFAULT_DB)
    parser.add_argument("--no-offline", action="store_true", help="skip the offline back-end rows")
    args = parser.parse_args()

    started = time.perf_counter()
    rows = asyncio.run(main_async(args))
    ms = 1000.0
    header = [
        "back-end",
        "route",
        "LLM calls/turn (min–max)",
        "target",
        "overhead p50 ms",
        "overhead p95 ms",
        "wall p50 ms",
    ]
    print(
        f"Latency {args.latency * ms:.0f} ms per chat completion; "
        f"{args.turns} turns per route after {args.warmup} warm-up; "
        f"Postgres checkpoints; BM25 Milvus Lite; "
        f"{time.perf_counter() - started:.0f} s in all.\n"
    )
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        target = TARGETS.get(row.route) if row.backend == "llm" else None
        verdict = "" if target is None else (f"≤ {target} ✓" if max(row.calls) <= target else f"≤ {target} ✗")
        calls = f"{min(row.calls)}–{max(row.calls)}" if min(row.calls) != max(row.calls) else str(min(row.calls))
        print(
            f"| {row.backend} | {row.route} | {calls} | {verdict} | {percentile(row.overheads, 50) * ms:.1f} | "
            f"{percentile(row.overheads, 95) * ms:.1f} | {percentile(row.walls, 50) * ms:.1f} |"
        )
    print("\nTargets: fast_retrieval ≤ 2 LLM calls per turn; standard_retrieval ≤ 3 on the first hop.")
    unexpected = [(row, u) for row in rows for u in row.unexpected]
    if unexpected:
        print("\nTurns that did not take the expected route:")
        for row, u in unexpected[:20]:
            print(f"- {row.backend} {row.route}: {u}")
    mean_overhead = {f"{r.backend}/{r.route}": statistics.mean(r.overheads) * ms for r in rows}
    print("\nMean overhead ms: " + ", ".join(f"{k} {v:.1f}" for k, v in mean_overhead.items()))


if __name__ == "__main__":
    main()
