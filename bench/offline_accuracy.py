"""Answer accuracy of the offline back-end: does the reply contain the expected answer?

    .venv/bin/python bench/offline_accuracy.py [--limit N] [--misses]

Each question is a first turn in a new session (from a person of its own) through `ChatService.handle`
(offline back-end, BM25 Milvus Lite knowledge base in a temporary directory, SQLite checkpoints beside it).

- GitLab handbook, single_text (../shared/eval/gitlab-handbook): "contains answer" = the
  question's `answer` appears in the reply text (case-insensitive substring); a clarification
  counts as a miss and is counted in "clarified" too. Gold file = the first file of `retrieval[0]`.
- The demo handbook (examples/handbook-questions.jsonl): the same for the non-ambiguous items
  (gold file = `file`); for the ambiguous ones the score is the share that got a clarification.

Prints one Markdown table: corpus | n | contains answer | clarified | citations include gold file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from threadsage.chat import ChatService, Reply, ReplyKind, Turn
from threadsage.config import Settings
from threadsage.evaluation import evaluation_corpus
from threadsage.runtime import open_chat_service

REPO = Path(__file__).resolve().parents[1]
GITLAB = REPO.parent / "shared" / "eval" / "gitlab-handbook"
HANDBOOK = REPO / "examples" / "handbook"
HANDBOOK_QUESTIONS = REPO / "examples" / "handbook-questions.jsonl"


@dataclass(frozen=True)
class Item:
    question: str
    answers: tuple[str, ...]  # any of them counts
    gold: tuple[str, ...]  # any of them counts
    ambiguous: bool = False


@dataclass
class Score:
    name: str
    ambiguous: bool = False
    n: int = 0
    contains: int = 0
    clarified: int = 0
    cited_gold: int = 0
    seconds: float = 0.0
    routes: dict[str, int] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)


def read_jsonl(file: Path) -> list[dict]:
    return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]


def gitlab_items(limit: int | None) -> list[Item]:
    rows = read_jsonl(GITLAB / "questions" / "single_text.jsonl")[:limit]
    return [Item(r["question"], (str(r["answer"]),), (next(iter(r["retrieval"][0])),)) for r in rows]


def handbook_items(limit: int | None) -> list[Item]:
    def as_tuple(value: str | list[str]) -> tuple[str, ...]:
        return tuple(value) if isinstance(value, list) else (value,)

    rows = read_jsonl(HANDBOOK_QUESTIONS)[:limit]
    return [Item(r["question"], as_tuple(r["answer"]), as_tuple(r["file"]), bool(r.get("ambiguous"))) for r in rows]


def contains_answer(reply: Reply, item: Item) -> bool:
    text = reply.text.lower()
    return reply.kind is ReplyKind.ANSWER and any(a.lower() in text for a in item.answers)


async def ask_all(chat: ChatService, items: list[Item], scores: dict[bool, Score]) -> None:
    """Score each item into scores[item.ambiguous]."""
    for item in items:
        score = scores[item.ambiguous]
        started = time.perf_counter()
        # A new session and a person of its own: the per-person rate limit must not bite.
        who = uuid.uuid4().hex
        replies = await chat.handle(Turn("bench", f"eval:{who}", f"U{who}", "m1", text=item.question))
        score.seconds += time.perf_counter() - started
        assert len(replies) == 1, replies
        reply = replies[0]
        score.n += 1
        route = reply.route or reply.kind.value
        score.routes[route] = score.routes.get(route, 0) + 1
        clarified = reply.kind is ReplyKind.CLARIFICATION
        score.clarified += clarified
        hit = contains_answer(reply, item)
        score.contains += hit
        score.cited_gold += any(c["path"] in item.gold for c in reply.citations)
        if (not item.ambiguous and not hit) or (item.ambiguous and not clarified):
            label = "not clarified" if item.ambiguous else ("clarified" if clarified else route)
            score.misses.append(f"[{label}] {item.question} — expected {item.answers[0]!r}; got {reply.text[:160]!r}")


def settings_for(data_dir: Path) -> Settings:
    return Settings(
        THREADSAGE_DATA_DIR=data_dir,
        THREADSAGE_EMBEDDINGS="none",
        MILVUS_URI=None,
        DATABASE_URL=None,  # SQLite checkpoints in the temporary data dir
        OPENAI_API_KEY=None,  # the offline back-end
        REDIS_URL=None,
        _env_file=None,
    )


async def run_corpus(corpus: Path, items: list[Item], names: dict[bool, str]) -> list[Score]:
    scores = {flag: Score(name, flag) for flag, name in names.items()}
    with tempfile.TemporaryDirectory(prefix="threadsage-accuracy-") as scratch:
        settings = settings_for(Path(scratch))
        with evaluation_corpus(settings, corpus) as evaluation:
            for path, why in evaluation.report.skipped:  # e.g. an empty _index.md
                print(f"(ingestion skipped {path}: {why})")
            async with open_chat_service(settings, kb=evaluation.kb) as chat:
                await ask_all(chat, items, scores)
    return [s for s in scores.values() if s.n]


def pct(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n:.0%})" if n else "–"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions of each set")
    parser.add_argument("--misses", action="store_true", help="list the questions that were missed")
    args = parser.parse_args()

    started = time.perf_counter()
    scores = asyncio.run(
        run_corpus(GITLAB / "corpus", gitlab_items(args.limit), {False: "gitlab-handbook single_text"})
    )
    scores += asyncio.run(
        run_corpus(
            HANDBOOK,
            handbook_items(args.limit),
            {False: "examples/handbook (non-ambiguous)", True: "examples/handbook (ambiguous: clarified is the score)"},
        )
    )

    print(f"Offline back-end, BM25, first turns through ChatService; {time.perf_counter() - started:.0f} s in all.\n")
    header = ["corpus", "n", "contains answer", "clarified", "citations include gold file", "mean turn ms"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for s in scores:
        contains = "–" if s.ambiguous else pct(s.contains, s.n)
        cited = "–" if s.ambiguous else pct(s.cited_gold, s.n)
        print(f"| {s.name} | {s.n} | {contains} | {pct(s.clarified, s.n)} | {cited} | {s.seconds / s.n * 1000:.0f} |")
    print()
    for s in scores:
        print(f"Routes, {s.name}: " + ", ".join(f"{k} {v}" for k, v in sorted(s.routes.items(), key=lambda kv: -kv[1])))
    if args.misses:
        for s in scores:
            print(f"\nMisses, {s.name}:")
            for miss in s.misses:
                print(f"- {miss}")


if __name__ == "__main__":
    main()
