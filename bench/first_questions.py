"""The first questions of an offline bot that has just ingested the demo handbook, asked at once
while it reads its passages ahead in the background (`ingestion/reading_ahead.py`), as a person
who starts `make run` and types straight away meets them.

    PYTHONPATH=. .venv/bin/python bench/first_questions.py [--ahead | --no-ahead]

Prints each turn's time; with --no-ahead, nothing is read ahead (every question embeds the
passages it reads itself).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from threadsage.adapters.knowledge import open_knowledge_base
from threadsage.app.runtime import open_chat_service
from threadsage.chat import Turn
from threadsage.ingestion.pipeline import Ingestor
from threadsage.ingestion.service import knowledge_upkeep
from threadsage.settings.environment import Settings

HANDBOOK = Path(__file__).resolve().parents[1] / "demo" / "handbook"
QUESTIONS = (
    "how many vacation days do contractors get?",
    "I left my work laptop on the train. What do I do?",
    "Can I get money back for my gym membership?",
    "How do I reset my password?",
)


async def ask_at_once(data: Path, ahead: bool) -> list[float]:
    settings = Settings(THREADSAGE_DATA_DIR=str(data), THREADSAGE_EMBEDDINGS="none", _env_file=None)
    kb = open_knowledge_base(settings)
    try:
        Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([HANDBOOK])
        times = []
        async with (
            open_chat_service(settings, kb=kb) as chat,
            knowledge_upkeep(settings, kb, read_ahead=chat.context.meaning if ahead else None),
        ):
            for n, question in enumerate(QUESTIONS):
                started = time.perf_counter()
                await chat.handle(Turn("bench", f"bench:{n}", "U1", f"m{n}", text=question))
                times.append(time.perf_counter() - started)
        return times
    finally:
        kb.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ahead", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="threadsage-first-") as scratch:
        times = asyncio.run(ask_at_once(Path(scratch), args.ahead))
    print(f"reading ahead: {'on' if args.ahead else 'off'}")
    for question, seconds in zip(QUESTIONS, times, strict=True):
        print(f"- {seconds * 1000:.0f} ms  {question}")


if __name__ == "__main__":
    main()
