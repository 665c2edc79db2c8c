"""Deep search on comparisons of the demo handbook: are both sides cited, how long does a turn take,
and (with the scripted fake model) how many model calls does a deep-search turn cost?

    .venv/bin/python bench/deep_search.py

The questions are comparisons written for this benchmark (the demo handbook's graded set has
none): each names two sides whose pages are the gold files. Each is a first turn in a new session
through `ChatService.handle` (BM25 Milvus Lite knowledge base in a temporary directory, SQLite
checkpoints). The model run uses tests/fakes/openai_server.py with a plan of one sub-question per
side, so its figure is the shape of the calls, not a model's quality.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI
from threadsage.adapters.knowledge import KnowledgeBase, open_knowledge_base
from threadsage.app.runtime import open_chat_service
from threadsage.chat import Turn
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings

REPO = Path(__file__).resolve().parents[1]
EXPENSES = {"finance/expenses-lisbon.md", "finance/expenses-toronto.md"}
QUESTIONS = [
    (
        "What's the difference between the Lisbon and Toronto hotel limits?",
        EXPENSES,
        ["Lisbon hotel limits", "Toronto hotel limits"],
    ),
    ("Lisbon vs Toronto expense limits", EXPENSES, ["Lisbon expense limits", "Toronto expense limits"]),
    (
        "How do the Lisbon and Toronto meal allowances compare?",
        EXPENSES,
        ["Lisbon meal allowance", "Toronto meal allowance"],
    ),
    (
        "Compare the Lisbon and Toronto company card limits",
        EXPENSES,
        ["Lisbon company card limit", "Toronto company card limit"],
    ),
    (
        "What is the difference between the Lisbon and Toronto approval thresholds?",
        EXPENSES,
        ["Lisbon approval thresholds", "Toronto approval thresholds"],
    ),
    (
        "How does leave differ between employees and contractors?",
        {"people/leave-employees.md", "people/leave-contractors.md"},
        ["Leave for employees", "Leave for contractors"],
    ),
]


async def run(settings: Settings, kb: KnowledgeBase, llm: FakeOpenAI | None) -> str:
    both, times, calls = 0, [], []
    async with open_chat_service(settings, kb=kb) as chat:
        for i, (question, gold, plan) in enumerate(QUESTIONS):
            if llm is not None:
                llm.script |= {
                    "RouteDecision": {"intent": "COMPARISON", "confidence": 0.9},
                    "SubQuestions": {"questions": plan},
                }
                llm.requests.clear()
            started = time.perf_counter()
            [reply] = await chat.handle(Turn("bench", f"bench:{i}", f"U{i}", f"m{i}", text=question))
            times.append(time.perf_counter() - started)
            if llm is not None:
                calls.append(len(llm.chat_kinds()))
            both += gold <= {c["path"] for c in reply.citations}
    backend = "scripted model" if llm else "offline"
    both_text = "–" if llm else f"{both}/{len(QUESTIONS)}"
    calls_text = f"{min(calls)}–{max(calls)}" if calls else "0"
    return f"| {backend} | {len(QUESTIONS)} | {both_text} | {calls_text} | {statistics.median(times) * 1000:.0f} ms |"


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Settings(THREADSAGE_DATA_DIR=Path(tmp), THREADSAGE_EMBEDDINGS="none", DATABASE_URL=None, _env_file=None)
        kb = open_knowledge_base(base)
        Ingestor(kb, base.chunk_chars, base.chunk_overlap).ingest_paths([REPO / "demo" / "handbook"])
        rows = [await run(base.model_copy(update={"openai_api_key": None}), kb, None)]
        llm = FakeOpenAI().start()
        try:
            model = Settings(
                THREADSAGE_DATA_DIR=Path(tmp) / "model",
                OPENAI_API_KEY="sk-bench",
                OPENAI_BASE_URL=llm.base_url,
                DATABASE_URL=None,
                _env_file=None,
            )
            rows.append(await run(model, kb, llm))
        finally:
            llm.stop()
        kb.close()
    print("| back-end | comparisons | both sides cited | model calls per turn | median turn |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    asyncio.run(main())
