"""The cost of re-asking the open gaps after a sync (`threadsage.chat.knowledge_loop`): time, searches and
answerer calls for N open gaps when D documents are new or changed, and the follow-ups sent or
held back by the per-place limit.

    PYTHONPATH=$PWD .venv/bin/python bench/gap_reask.py [--gaps 1000] [--changed 10] [--documents 300]
        [--runs 3] [--answerer both|offline|model]

A knowledge base of `--documents` handbook-like pages (BM25, no embeddings, Milvus Lite in a
temporary directory), each about one made-up subject; `--gaps` questions recorded as not covered in
the last 30 days (Postgres, `DATABASE_URL`, default postgresql://postgres@127.0.0.1:5432/test, in a
schema of the run's own, dropped at the end), 70 % on subjects of their own, 30 % asking one of
those again in other words (the same content words), in 10 channels; then
`--changed` pages, half new and half changed, that answer 5 gaps' subjects each, are ingested and
the loop runs once (`KnowledgeLoop.changed`) with the offline answerer and with the fake
OpenAI-compatible model (tests/fakes/openai_server.py, no latency: the model's own time is not
counted). Follow-ups go to a notifier that only counts (`THREADSAGE_GAP_FOLLOW_UPS_PER_HOUR`=5 a
place). Prints one Markdown table: median of `--runs` (each on fresh records and documents).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import psycopg  # noqa: E402

from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from threadsage.adapters.knowledge import open_knowledge_base  # noqa: E402
from threadsage.adapters.reasoner import Reasoner  # noqa: E402
from threadsage.adapters.reasoning.llm.back_end import LLMReasoner  # noqa: E402
from threadsage.adapters.reasoning.offline.back_end import OfflineReasoner  # noqa: E402
from threadsage.chat.knowledge_loop import KnowledgeLoop, LoopReport  # noqa: E402
from threadsage.chat.notify import Notice  # noqa: E402
from threadsage.delivery.coordination import LocalCoordinator  # noqa: E402
from threadsage.ingestion.pipeline import Ingestor  # noqa: E402
from threadsage.memory.checkpoints import open_checkpointer  # noqa: E402
from threadsage.records.knowledge import KnowledgeRecords  # noqa: E402
from threadsage.records.tables import Tables  # noqa: E402
from threadsage.records.turns import COLUMNS, TABLE, QuestionStore  # noqa: E402
from threadsage.settings.environment import Settings  # noqa: E402

DEFAULT_DB = "postgresql://postgres@127.0.0.1:5432/test"
SYLLABLES = ["ka", "ro", "mi", "tes", "lun", "dor", "vy", "zel", "pra", "quo", "nim", "sar", "bel", "tur"]
ACTIONS = ["request", "renew", "cancel", "approve", "report", "book", "return", "claim"]
FILLER = (
    "The office team keeps this page. Ask the office team when something here is unclear. "
    "Forms are kept on the shared drive and reviewed every quarter by the people team."
)


def subjects(n: int) -> list[str]:
    rng, made = random.Random(27), set()
    while len(made) < n:
        made.add("".join(rng.choice(SYLLABLES) for _ in range(3)))
    return sorted(made)


def page(subject: str, action: str, extra: str = "", words: tuple[str, ...] = ()) -> str:
    """A page about one subject; `words`: the made-up terms of its other sentences."""
    about = " ".join(f"The {w} rules apply to every {subject} holder." for w in words)
    return (
        f"# The {subject} pass\n\nTo {action} a {subject} pass, send the {subject} form to the office team "
        f"two weeks ahead. A {subject} pass lasts one year. {about} {extra}\n\n{FILLER}\n"
    )


class Counting:
    """A notifier that posts nothing and counts."""

    def __init__(self) -> None:
        self.sent = 0

    def categories(self, session_key: str) -> tuple[str, ...] | None:
        return None

    async def notify(self, notice: Notice) -> None:
        self.sent += 1


@asynccontextmanager
async def database() -> AsyncIterator[str]:
    url = os.environ.get("DATABASE_URL", DEFAULT_DB)
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{url}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


async def one_run(args: argparse.Namespace, answerer: str, model: FakeOpenAI) -> tuple[LoopReport, int, int]:
    """One sync's loop on fresh documents and records: its report, the model requests, the
    follow-ups the notifier was handed."""
    names = subjects(args.documents + args.gaps + 400)  # pages, gaps, and words their sentences share
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        folder = root / "docs"
        folder.mkdir()
        rng = random.Random(14)
        actions = {name: rng.choice(ACTIONS) for name in names}
        vocabulary = names[args.documents + args.gaps :]
        words = {name: tuple(rng.sample(vocabulary, 6)) for name in names}
        for name in names[: args.documents]:
            (folder / f"{name}.md").write_text(page(name, actions[name], words=words[name]))
        env: dict[str, Any] = {"THREADSAGE_DATA_DIR": root / "data", "THREADSAGE_EMBEDDINGS": "none"}
        if answerer == "model":
            env |= {"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": model.base_url}
        async with database() as url:
            settings = Settings(**env, DATABASE_URL=url, _env_file=None)
            kb = open_knowledge_base(settings)
            try:
                ingest = Ingestor(kb, settings.chunk_chars, settings.chunk_overlap)
                await asyncio.to_thread(ingest.ingest_paths, [folder])
                async with open_checkpointer(settings) as saver:
                    records = KnowledgeRecords(saver)
                    await QuestionStore(saver, knowledge=records).setup()
                    gap_subjects = names[args.documents : args.documents + args.gaps]
                    await record_gaps(Tables(saver), gap_subjects, words)
                    answered = gap_subjects[: args.changed * 5]  # five gaps' subjects on each changed page
                    for i in range(args.changed):
                        group = answered[i * 5 : i * 5 + 5]
                        how = " ".join(
                            f"The {s} {words[s][0]} and {words[s][1]} rules: ask the office team." for s in group
                        )
                        name = names[i] if i < args.changed // 2 else group[0]  # an existing page, or a new one
                        (folder / f"{name}.md").write_text(page(name, actions[name], how, words[name]))
                    report = await asyncio.to_thread(ingest.ingest_paths, [folder])
                    changes = report.changes
                    reasoner: Reasoner = (
                        OfflineReasoner(kb.document_frequencies)
                        if answerer == "offline"
                        else LLMReasoner(settings, settings.timezone)
                    )
                    notifier = Counting()
                    loop = KnowledgeLoop.from_settings(settings, records, kb, reasoner, LocalCoordinator())
                    loop.notifiers["slack"] = notifier
                    before = len(model.chat_kinds())
                    result = await loop.changed(changes)
                    if isinstance(reasoner, LLMReasoner):
                        await reasoner.aclose()
                    return result, len(model.chat_kinds()) - before, notifier.sent
            finally:
                kb.close()


async def record_gaps(tables: Tables, names: list[str], words: dict[str, tuple[str, ...]]) -> None:
    now = int(time.time() * 1000)
    marks = ", ".join(["{p}"] * len(COLUMNS))
    distinct = len(names) * 7 // 10  # the rest asked again in other words: one search for both
    for i, name in enumerate(names[:distinct] + names[: len(names) - distinct]):
        first, second = words[name][:2]
        question = f"What are the {first} and {second} rules for {name}?"
        if i >= distinct:
            question = f"For {name}, the {second} and {first} rules: what are they?"
        row = {
            "session_key": f"slack:T1:C{i % 10:03d}:{i}", "message_id": f"m{i}", "at": now - i * 60_000,
            "platform": "slack", "channel": f"C{i % 10:03d}", "thread": str(i), "user_id": f"U{i}",
            "answer_ref": f"{i:08x}", "question": question, "standalone": None, "wording": None, "answer": None,
            "route": "fallback", "outcome": "not_covered", "confidence": 0.1, "llm_calls": 0, "latency_ms": 10,
            "citations": "[]", "closest": None, "options": None, "choice": None, "chosen": None,
            "chosen_index": None, "answers": None, "gap": 1,
        }  # fmt: skip
        await tables.execute(f"INSERT INTO {TABLE} ({', '.join(COLUMNS)}) VALUES ({marks})", [row[c] for c in COLUMNS])


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gaps", type=int, default=1000)
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--answerer", choices=["both", "offline", "model"], default="both")
    args = parser.parse_args()
    model = FakeOpenAI().start()
    lines = [
        "| answerer | gaps | changed | seconds (median) | searches | answerer calls | model requests | closed "
        "| follow-ups sent | held by the limit |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    try:
        for answerer in ["offline", "model"] if args.answerer == "both" else [args.answerer]:
            runs = [await one_run(args, answerer, model) for _ in range(args.runs)]
            seconds = statistics.median(r.seconds for r, _, _ in runs)
            report, requests, sent = runs[-1]
            lines.append(
                f"| {answerer} | {report.gaps} | {args.changed} | {seconds:.2f} | {report.searches} | "
                f"{report.model_calls} | {requests} | {report.closed} | {sent} | {report.follow_ups['limit']} |"
            )
    finally:
        model.stop()
    print("\n".join(lines))


if __name__ == "__main__":
    asyncio.run(main())
