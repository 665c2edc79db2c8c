"""The figures of issue 13 measured through the chat (offline back-end, BM25), as
bench/answer_quality.py measures them: slow, they read the eval corpora."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.locations import REPO
from threadsage.app.runtime import open_chat_service
from threadsage.evaluation.conversations import gitlab_items, handbook_items, northwind_items, run_set
from threadsage.evaluation.retrieval import evaluation_corpus
from threadsage.settings.environment import Settings

pytestmark = pytest.mark.slow  # every GitLab negation and single-text question through the chat


def offline(tmp_path: Path) -> Settings:
    return Settings(
        THREADSAGE_DATA_DIR=tmp_path,
        DATABASE_URL=None,
        OPENAI_API_KEY=None,
        REDIS_URL=None,
        THREADSAGE_RATE_LIMIT_PER_MINUTE=10_000,
        _env_file=None,
    )


async def test_gitlab_negation_recall_and_answers_through_the_graph(tmp_path: Path, eval_dir: Path, gitlab_kb) -> None:
    questions = eval_dir / "gitlab-handbook" / "questions"
    async with open_chat_service(offline(tmp_path), kb=gitlab_kb) as chat:
        negation = await run_set(chat, "negation", gitlab_items(questions / "negation_exclusion.jsonl"))
        single = await run_set(chat, "single", gitlab_items(questions / "single_text.jsonl"))
    # Measured: 0.88 (0.64 before exclusions were handled; plain BM25 on the whole question 0.68).
    assert negation.found / negation.n >= 0.85, negation.misses
    # Measured: 96/100 answered from the gold file where it was in the top 5 (89/100 before).
    assert single.from_gold_when_found >= 0.8 * single.found, single.misses
    assert single.clarified == 0, single.misses


async def test_demo_handbook_answers_and_clarifications_through_the_graph(tmp_path: Path, handbook_kb) -> None:
    questions = handbook_items(REPO / "demo" / "handbook-questions.jsonl")
    paraphrases = handbook_items(REPO / "demo" / "handbook-paraphrases.jsonl")
    async with open_chat_service(offline(tmp_path), kb=handbook_kb) as chat:
        clear = await run_set(chat, "clear", [q for q in questions if not q.ambiguous] + paraphrases)
        ambiguous = await run_set(chat, "ambiguous", [q for q in questions if q.ambiguous])
    # Measured: 31/34 answered from the gold file where it was in the top 5; 5/5 asked back.
    assert clear.from_gold_when_found >= 0.8 * clear.found, clear.misses
    assert clear.clarified == 0, clear.misses
    assert ambiguous.clarified >= 4, ambiguous.misses


async def test_northwind_pdfs_clarifications_and_refusals_through_the_graph(tmp_path: Path, eval_dir: Path) -> None:
    """Documents nobody tuned for (issue 24): six PDFs ingested as they are."""
    northwind = eval_dir / "northwind"
    questions = northwind / "questions"
    clean = {f"nw-dk-{n:03d}" for n in [*range(1, 8), 10, 12, *range(25, 46)]}  # its README's clean subset
    settings = offline(tmp_path).model_copy(update={"embeddings": "none", "milvus_uri": None})
    with evaluation_corpus(settings, northwind / "documents") as corpus:
        async with open_chat_service(settings, kb=corpus.kb) as chat:
            ambiguous = await run_set(chat, "ambiguous", northwind_items(questions / "ambiguous.jsonl"))
            controls = await run_set(chat, "controls", northwind_items(questions / "clear_controls.jsonl"))
            dontknow = [i for i in northwind_items(questions / "dontknow.jsonl") if i.id in clean]
            refusals = await run_set(chat, "don't know", dontknow)
    # Measured: 13/20 asked back (15 before the reader read passages with MiniLM, issue 34, second
    # round: two are now answered from the plan the search put first; 8 before issue 24), 0/20
    # controls asked back, 20/20 answered from the gold file.
    assert ambiguous.clarified >= 13, ambiguous.misses
    assert controls.clarified == 0 and controls.from_gold == controls.n, controls.misses
    # Measured: 21 "not covered" of 30 and 2 closest-passage hedges, which say the documents do not
    # answer it directly (22 and 1 before the reader quoted a passage read closer than 0.33 where the
    # documents use most of the question's words, issue 34, seventh round: a question on standing
    # desks now gets the perks page as the closest; 23 and 2 before the reader read passages with
    # MiniLM, second round: one more is answered from a plan's page that reads close; 24 and 1 before
    # the first round; 21 before issue 24), none asked back.
    assert refusals.declined + refusals.hedged - refusals.clarified >= 23, refusals.misses
    assert refusals.declined >= 21, refusals.misses
