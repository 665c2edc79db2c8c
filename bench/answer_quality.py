"""Answer quality through the graph, on the public question sets: offline, and with a scripted model.

    PYTHONPATH=. .venv/bin/python bench/answer_quality.py [--backend offline model] [--limit N] [--misses]
        [--corpora gitlab handbook northwind cmrc] [--cmrc N]

Every question is a first turn in a new session through `ChatService.handle` (BM25 Milvus Lite
knowledge base and SQLite checkpoints in a temporary directory); scoring: `threadsage/evaluation/conversations.py`.

- GitLab handbook (../shared/eval/gitlab-handbook): each question subset.
- The demo handbook: demo/handbook-questions.jsonl (clear questions; the ambiguous ones,
  where clarifying is the right reply) and demo/handbook-paraphrases.jsonl (questions that
  avoid the documents' words).
- Northwind (../shared/eval/northwind, six PDFs): the answerable questions (page recall@5 over
  their gold pages), the "don't know" questions — the clean subset its README names, where
  "not covered" is the right reply, and the rest, which the documents partly answer —, the
  ambiguous questions (two plans answer differently) and their clear controls.
- CMRC 2018 (../shared/eval/cmrc2018): the first N Chinese questions (default 100) over all 848
  paragraphs.
- `model`: the language-model back-end against the fake OpenAI-compatible server of the tests
  (tests/fakes/openai_server.py) over HTTP, scripted as below: routing by the question's form,
  follow-ups made standalone with the previous question, answers quoting excerpt [1]. Its
  recall is the graph's query handling with a model in the loop; its calls per route are what a
  real model would be asked.

Prints, per back-end: one row per set (file recall@5 through the graph, page recall@5 where gold
pages exist, answered from a gold file, the same among questions whose gold file was in the top 5,
reply contains the answer, clarified, declined = the reply cites nothing), the median and p95
time per question, the routes taken, and — with the model — the mean model calls per route.
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
from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.app.runtime import open_chat_service
from threadsage.chat import ChatService
from threadsage.evaluation.conversations import (
    Item,
    Tally,
    beir_items,
    gitlab_items,
    handbook_items,
    northwind_items,
    run_set,
    seconds_summary,
)
from threadsage.evaluation.retrieval import evaluation_corpus
from threadsage.ingestion.reading_ahead import ReadingAhead
from threadsage.settings.environment import Settings

REPO = Path(__file__).resolve().parents[1]
EVAL = (REPO.parent / "shared" / "eval").resolve()
GITLAB = EVAL / "gitlab-handbook"
NORTHWIND = EVAL / "northwind"
CMRC = EVAL / "cmrc2018"
# The "don't know" questions the documents really do not answer (northwind/README.md).
CLEAN_REFUSALS = {f"nw-dk-{n:03d}" for n in [*range(1, 8), 10, 12, *range(25, 46)]}
SUBSETS = ["single_text", "negation_exclusion", "temporal_reference", "contextual_anaphora", "multi-hop_reasoning"]
HANDBOOK = REPO / "demo" / "handbook"


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


async def read_ahead(chat: ChatService, kb: KnowledgeBase) -> None:
    """As a running bot does before its turns (`threadsage run`, `chat`): the offline reader's
    passages read and indexed by meaning (`ingestion/reading_ahead.py`); nothing for a model."""
    if chat.context.meaning is not None:
        await ReadingAhead(kb, asyncio.Lock(), chat.context.meaning).read_once(asyncio.Event())


async def run_corpus(
    corpus: Path, sets: list[tuple[str, list[Any]]], backend: str, fake: FakeOpenAI | None
) -> list[Tally]:
    with tempfile.TemporaryDirectory(prefix="threadsage-quality-") as scratch:
        settings = settings_for(Path(scratch), backend, fake)
        with evaluation_corpus(settings, corpus) as evaluation:
            async with open_chat_service(settings, kb=evaluation.kb) as chat:
                await read_ahead(chat, evaluation.kb)
                calls = (lambda: len(fake.chat_kinds())) if fake is not None else None
                return [await run_set(chat, name, items, calls) for name, items in sets]


Corpus = tuple[Path, list[tuple[str, list[Item]]]]


async def run_all(corpora: list[Corpus], backend: str, fake: FakeOpenAI | None) -> list[Tally]:
    """Every corpus in one event loop: the model client's HTTP connections belong to the loop."""
    return [t for corpus, sets in corpora for t in await run_corpus(corpus, sets, backend, fake)]


def pct(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n:.0%})" if n else "–"


def report(backend: str, tallies: list[Tally], seconds: float, misses: bool) -> None:
    print(f"\n### {backend} back-end ({seconds:.0f} s)\n")
    median, p95 = seconds_summary(tallies)
    print(f"Time per question: median {median * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms\n")
    header = ["set", "n", "file recall@5 (graph)", "page recall@5", "answered from gold", "… when gold in top 5"]
    print("| " + " | ".join([*header, "contains answer", "clarified", "declined", "hedged"]) + " |")
    print("|" + "---|" * (len(header) + 4))
    for t in tallies:
        pages = f"{t.page_found / t.paged:.2f}" if t.paged else "–"
        row = [
            t.name,
            str(t.n),
            f"{t.found / t.n:.2f}",
            pages,
            pct(t.from_gold, t.n),
            pct(t.from_gold_when_found, t.found),
        ]
        print(
            "| "
            + " | ".join([*row, pct(t.contains, t.n), pct(t.clarified, t.n), pct(t.declined, t.n), pct(t.hedged, t.n)])
            + " |"
        )
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


def public_corpora(limit: int | None = None, cmrc: int = 100) -> dict[str, Corpus]:
    """Every public question set by corpus: the GitLab handbook, the demo handbook, Northwind, CMRC."""
    questions = handbook_items(REPO / "demo" / "handbook-questions.jsonl")
    handbook_sets = [
        ("handbook clear", [q for q in questions if not q.ambiguous][:limit]),
        ("handbook ambiguous", [q for q in questions if q.ambiguous][:limit]),
        ("handbook paraphrases", handbook_items(REPO / "demo" / "handbook-paraphrases.jsonl")[:limit]),
    ]
    gitlab_sets = [(f"gitlab {s}", gitlab_items(GITLAB / "questions" / f"{s}.jsonl")[:limit]) for s in SUBSETS]
    nw = NORTHWIND / "questions"
    dontknow = northwind_items(nw / "dontknow.jsonl")
    northwind_sets = [
        ("northwind answerable", northwind_items(nw / "qa.jsonl")[:limit]),
        ("northwind don't know (clean)", [i for i in dontknow if i.id in CLEAN_REFUSALS][:limit]),
        (
            "northwind don't know (partly covered)",
            [i for i in dontknow if i.id not in CLEAN_REFUSALS][:limit],
        ),
        ("northwind ambiguous", northwind_items(nw / "ambiguous.jsonl")[:limit]),
        ("northwind clear controls", northwind_items(nw / "clear_controls.jsonl")[:limit]),
    ]
    return {
        "gitlab": (GITLAB / "corpus", gitlab_sets),
        "handbook": (HANDBOOK, handbook_sets),
        "northwind": (NORTHWIND / "documents", northwind_sets),
        "cmrc": (CMRC / "dev_corpus.jsonl", [("cmrc2018 (zh)", beir_items(CMRC / "dev_queries.jsonl", cmrc))]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", nargs="+", default=["offline", "model"], choices=["offline", "model"])
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions of each set")
    parser.add_argument("--misses", action="store_true", help="list the questions that were missed")
    parser.add_argument("--corpora", nargs="+", default=["gitlab", "handbook", "northwind", "cmrc"])
    parser.add_argument("--cmrc", type=int, default=100, help="CMRC questions to ask")
    args = parser.parse_args()

    every = public_corpora(args.limit, args.cmrc)
    corpora = [every[name] for name in args.corpora]
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
            tallies = asyncio.run(run_all(corpora, backend, fake))
        finally:
            if fake is not None:
                fake.stop()
        report(backend, tallies, time.perf_counter() - started, args.misses)


if __name__ == "__main__":
    main()
