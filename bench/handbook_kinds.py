"""Answer quality by kind of question on the handbooks whose questions are typed as people type
them, offline (the embedded default of `make run`), through the chat as a person meets it.

    PYTHONPATH=. .venv/bin/python bench/handbook_kinds.py [--sets publiccode basecamp tts handbook] [--misses]

- publiccode: ../shared/eval/publiccode-handbook (40 pages, 80 questions of eight kinds; only its
  activities/, organization/ and contributor-guides/ folders are the corpus, as its README says);
- basecamp: ../shared/eval/basecamp-handbook (25 pages) with bench/questions/basecamp-handbook.jsonl;
- tts: ../shared/eval/tts-handbook (30 pages) with bench/questions/tts-handbook.jsonl (40 questions
  each, written by this project in the publiccode format: bench/questions/README.md). Their corpus is
  the folder's top-level pages, without its README, LICENSE and SOURCE files;
- handbook: the demo handbook (demo/handbook) with demo/handbook-questions-typed.jsonl,
  questions in a new user's own words.

Scoring: `threadsage/evaluation/kinds.py`. Prints one row per set (right / asked per kind), the
time of the process's first turn and the median and p95 of the others, and with --misses every
question missed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from bench.answer_quality import read_ahead, settings_for
from threadsage.app.runtime import open_chat_service
from threadsage.evaluation.kinds import HEADER, KindTally, Question, questions, score
from threadsage.evaluation.retrieval import evaluation_corpus

REPO = Path(__file__).resolve().parents[1]
PUBLICCODE = (REPO.parent / "shared" / "eval" / "publiccode-handbook").resolve()
BASECAMP = (REPO.parent / "shared" / "eval" / "basecamp-handbook").resolve()
TTS = (REPO.parent / "shared" / "eval" / "tts-handbook").resolve()


def pages(folder: Path) -> tuple[str, ...]:
    """A flat handbook folder's pages, as `only` (files as well as folders may be named there): its
    Markdown files but for the README and LICENSE files, which are not answer sources (SOURCE.txt is
    not Markdown)."""
    return tuple(sorted(p.name for p in folder.glob("*.md") if not p.name.startswith(("README", "LICENSE"))))


SETS: dict[str, tuple[Path, tuple[str, ...], Path]] = {
    "publiccode": (
        PUBLICCODE,
        ("activities", "organization", "contributor-guides"),
        PUBLICCODE / "questions.jsonl",
    ),
    "basecamp": (BASECAMP, pages(BASECAMP), REPO / "bench" / "questions" / "basecamp-handbook.jsonl"),
    "tts": (TTS, pages(TTS), REPO / "bench" / "questions" / "tts-handbook.jsonl"),
    "handbook": (REPO / "demo" / "handbook", (), REPO / "demo" / "handbook-questions-typed.jsonl"),
}


async def run(name: str, corpus: Path, only: tuple[str, ...], items: list[Question], turns: list[float]) -> KindTally:
    with tempfile.TemporaryDirectory(prefix="threadsage-kinds-") as scratch:
        settings = settings_for(Path(scratch), "offline", None)
        with evaluation_corpus(settings, corpus, only=only) as evaluation:
            async with open_chat_service(settings, kb=evaluation.kb) as chat:
                # As a running bot does (`threadsage run`, `chat`) before its turns are timed.
                await read_ahead(chat, evaluation.kb)
                handle = chat.handle

                async def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
                    started = time.perf_counter()
                    try:
                        return await handle(*args, **kwargs)
                    finally:
                        turns.append(time.perf_counter() - started)

                chat.handle = timed  # type: ignore[method-assign]
                return await score(chat, name, items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    parser.add_argument("--misses", action="store_true", help="list the questions that were missed")
    args = parser.parse_args()
    tallies, turns = [], []
    started = time.perf_counter()
    for name in args.sets:
        corpus, only, file = SETS[name]
        tallies.append(asyncio.run(run(name, corpus, only, questions(file), turns)))
    print(f"\n{len(turns)} turns in {time.perf_counter() - started:.0f} s", end="")
    if len(turns) > 1:
        # The process's first turn loads what a first question needs (the reader's model): apart.
        ordered = sorted(turns[1:])
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        print(
            f"; the first {turns[0] * 1000:.0f} ms, then per turn: median {statistics.median(ordered) * 1000:.0f} ms,"
            f" p95 {p95 * 1000:.0f} ms"
        )
    print("\n| " + " | ".join(HEADER) + " |\n|" + "---|" * len(HEADER))
    for tally in tallies:
        print("| " + " | ".join(tally.row()) + " |")
    if args.misses:
        for tally in tallies:
            print(f"\nMisses, {tally.name}:\n" + "\n".join(f"- {m}" for m in tally.misses))


if __name__ == "__main__":
    main()
