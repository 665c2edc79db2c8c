"""Answer quality through the graph, on the public question sets: offline, and with a scripted model.

    PYTHONPATH=. .venv/bin/python bench/answer_quality.py [--backend offline model] [--limit N] [--misses]

Every question is a first turn in a new session through `ChatService.handle` (BM25 Milvus Lite
knowledge base and SQLite checkpoints in a temporary directory); scoring: `threadsage/evaluation/conversations.py`.

- GitLab handbook (../shared/eval/gitlab-handbook): each question subset.
- The demo handbook: examples/handbook-questions.jsonl (clear questions; the ambiguous ones,
  where clarifying is the right reply) and examples/handbook-paraphrases.jsonl (questions that
  avoid the documents' words).
- `model`: the language-model back-end against the fake OpenAI-compatible server of the tests
  (tests/fakes/openai_server.py) over HTTP, scripted as below: routing by the question's form,
  follow-ups made standalone with the previous question, answers quoting excerpt [1]. Its
  recall is the graph's query handling with a model in the loop; its calls per route are what a
  real model would be asked.

Prints, per back-end: one row per set (file recall@5 through the graph, answered from a gold file,
the same among questions whose gold file was in the top 5, reply contains the answer, clarified),
the routes taken, and — with the model — the mean model calls per route.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.fakes.openai_server import FakeOpenAI, user_text
from threadsage.app.runtime import open_chat_service
from threadsage.evaluation.conversations import Tally, gitlab_items, handbook_items, run_set
from threadsage.evaluation.retrieval import evaluation_corpus
from threadsage.settings.environment import Settings

REPO = Path(__file__).resolve().parents[1]
GITLAB = (REPO.parent / "shared" / "eval" / "gitlab-handbook").resolve()
SUBSETS = ["single_text", "negation_exclusion", "temporal_reference", "contextual_anaphora", "multi-hop_reasoning"]
HANDBOOK = REPO / "examples" / "handbook"


def scripted_route(request: dict[str, Any]) -> dict[str, Any]:
    """A router that reads the question's form, as a model would, and never asks back."""
    question = user_text(request).removeprefix("Question: ").split("\n\nExcerpts:")[0].lower()
    intent = "FACT_LOOKUP"
    if re.search(r"\b(differ|difference|compare|versus|vs)\b", question):
        intent = "COMPARISON"
    elif re.match(r"\s*(how (do|can|should) (i|we)|how to|what steps)\b", question):
        intent = "HOW_TO"
    return {"intent": intent, "confidence": 0.9, "reasoning": "scripted"}


def scripted_contextualise(request: dict[str, Any]) -> str:
    """The latest message with the previous user turn in front: a follow-up made standalone."""
    text = user_text(request)
    earlier = re.findall(r"^user: (.*)$", text.split("\n\nLatest message: ")[0], re.M)
    latest = text.rsplit("Latest message: ", 1)[-1]
    return f"{earlier[-1]} {latest}" if earlier else latest


def scripted_answer(request: dict[str, Any]) -> str:
    """The first lines of excerpt [1], cited."""
    match = re.search(r'<excerpt n="1">\n(.*?)\n</excerpt>', user_text(request), re.S)
    return f"{' '.join((match.group(1) if match else '').split())[:400]} [1]"


def settings_for(data_dir: Path, backend: str, fake: FakeOpenAI | None) -> Settings:
    model: dict[str, Any] = {"OPENAI_API_KEY": None}
    if backend == "model" and fake is not None:
        model = {"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": fake.base_url}
    return Settings(
        THREADSAGE_DATA_DIR=data_dir,
        THREADSAGE_EMBEDDINGS="none",
        MILVUS_URI=None,
        DATABASE_URL=None,  # SQLite checkpoints in the temporary data dir
        REDIS_URL=None,
        THREADSAGE_RATE_LIMIT_PER_MINUTE=10_000,
        _env_file=None,
        **model,
    )


async def run_corpus(
    corpus: Path, sets: list[tuple[str, list[Any]]], backend: str, fake: FakeOpenAI | None
) -> list[Tally]:
    with tempfile.TemporaryDirectory(prefix="threadsage-quality-") as scratch:
        settings = settings_for(Path(scratch), backend, fake)
        with evaluation_corpus(settings, corpus) as evaluation:
            async with open_chat_service(settings, kb=evaluation.kb) as chat:
                calls = (lambda: len(fake.chat_kinds())) if fake is not None else None
                return [await run_set(chat, name, items, calls) for name, items in sets]


async def run_both(gitlab: list[Any], handbook: list[Any], backend: str, fake: FakeOpenAI | None) -> list[Tally]:
    """Both corpora in one event loop: the model client's HTTP connections belong to the loop."""
    return await run_corpus(GITLAB / "corpus", gitlab, backend, fake) + await run_corpus(
        HANDBOOK, handbook, backend, fake
    )


def pct(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n:.0%})" if n else "–"


def report(backend: str, tallies: list[Tally], seconds: float, misses: bool) -> None:
    print(f"\n### {backend} back-end ({seconds:.0f} s)\n")
    header = ["set", "n", "file recall@5 (graph)", "answered from gold", "… when gold in top 5", "contains answer"]
    print("| " + " | ".join([*header, "clarified"]) + " |")
    print("|" + "---|" * (len(header) + 1))
    for t in tallies:
        row = [t.name, str(t.n), f"{t.found / t.n:.2f}", pct(t.from_gold, t.n), pct(t.from_gold_when_found, t.found)]
        print("| " + " | ".join([*row, pct(t.contains, t.n), pct(t.clarified, t.n)]) + " |")
    print()
    for t in tallies:
        print(f"- routes, {t.name}: " + ", ".join(f"{r} {c}" for r, c in t.routes.most_common()))
    if backend == "model":
        routes: dict[str, list[int]] = {}
        for t in tallies:
            for route, count in t.routes.items():
                routes.setdefault(route, [0, 0])[0] += count
                routes[route][1] += t.calls[route]
        print("\n| route | questions | model calls per question |\n|---|---|---|")
        for route, (count, made) in sorted(routes.items()):
            print(f"| {route} | {count} | {made / count:.1f} |")
    if misses:
        for t in tallies:
            print(f"\nMisses, {t.name}:\n" + "\n".join(f"- {m}" for m in t.misses))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", nargs="+", default=["offline", "model"], choices=["offline", "model"])
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions of each set")
    parser.add_argument("--misses", action="store_true", help="list the questions that were missed")
    args = parser.parse_args()

    questions = handbook_items(REPO / "examples" / "handbook-questions.jsonl")
    handbook_sets = [
        ("handbook clear", [q for q in questions if not q.ambiguous][: args.limit]),
        ("handbook ambiguous", [q for q in questions if q.ambiguous][: args.limit]),
        ("handbook paraphrases", handbook_items(REPO / "examples" / "handbook-paraphrases.jsonl")[: args.limit]),
    ]
    gitlab_sets = [(f"gitlab {s}", gitlab_items(GITLAB / "questions" / f"{s}.jsonl")[: args.limit]) for s in SUBSETS]
    for backend in args.backend:
        fake = None
        if backend == "model":
            fake = FakeOpenAI().start()
            fake.script |= {
                "RouteDecision": scripted_route,
                "contextualise": scripted_contextualise,
                "answer": scripted_answer,
            }
        started = time.perf_counter()
        try:
            tallies = asyncio.run(run_both(gitlab_sets, handbook_sets, backend, fake))
        finally:
            if fake is not None:
                fake.stop()
        report(backend, tallies, time.perf_counter() - started, args.misses)


if __name__ == "__main__":
    main()
