"""Retrieval quality on the real corpora in ../shared/eval, and the scoring rules themselves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from threadsage.adapters.knowledge import Hit
from threadsage.evaluation.retrieval import (
    RetrievalQuestion,
    evaluate,
    evaluation_corpus,
    load_questions,
    normalise,
)
from threadsage.settings.environment import Settings


@pytest.mark.slow
def test_gitlab_single_text_file_recall_at_5_with_bm25(settings: Settings, eval_dir: Path) -> None:
    gitlab = eval_dir / "gitlab-handbook"
    questions = load_questions(gitlab / "questions" / "single_text.jsonl")
    assert len(questions) == 100
    with evaluation_corpus(settings, gitlab / "corpus") as corpus:
        assert corpus.kb.embedder is None
        scores = evaluate(questions, corpus.kb.search_blocking, 5, corpus.text_of)
    assert scores["recall@5"] >= 0.95, scores
    assert scores["chunk_n"] >= 90 and scores["chunk_recall@5"] >= 0.85, scores


@pytest.mark.slow
def test_cmrc2018_recall_at_5_on_a_fixed_sample(settings: Settings, eval_dir: Path) -> None:
    cmrc = eval_dir / "cmrc2018"
    questions = load_questions(cmrc / "dev_queries.jsonl", sample=300, seed=0)
    assert len(questions) == 300
    assert questions == load_questions(cmrc / "dev_queries.jsonl", sample=300, seed=0)
    with evaluation_corpus(settings, cmrc) as corpus:
        assert corpus.report.new == 848
        scores = evaluate(questions, corpus.kb.search_blocking, 5)
    assert scores["recall@5"] >= 0.95, scores
    assert scores["recall@1"] >= 0.85, scores


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def test_decoy_first_hits_are_not_gold_and_anaphora_gets_its_context(tmp_path: Path) -> None:
    rows = [
        {"id": 1, "type": "Negation Exclusion", "question": "Q1",
         "retrieval": [{"wrong.md": ["x"]}, {"right.md": ["y"]}]},
        {"id": 2, "type": "Contextual Anaphora", "question": "And then?", "context": "About leave.",
         "retrieval": [{"wrong.md": []}, {"a.md": ["q"]}, {"b.md": ["r"]}]},
        {"id": 3, "type": "Multi-hop Reasoning", "question": "Q3", "retrieval": [{"a.md": ["s"]}, {"b.md": ["t"]}]},
    ]  # fmt: skip
    negation, anaphora, multihop = load_questions(write_jsonl(tmp_path / "q.jsonl", rows))
    assert negation.kind == "negation_exclusion" and negation.gold == {"right.md"}
    assert negation.quotes == ("y",)
    assert anaphora.query == "About leave. And then?" and anaphora.gold == {"a.md", "b.md"}
    assert multihop.gold == {"a.md", "b.md"}


def hit(path: str, text: str = "") -> Hit:
    return Hit("id", "doc", path, path, "title", "", 0, "", text, 1.0)


def test_scores_file_and_chunk_level_recall_and_mrr() -> None:
    questions = [
        RetrievalQuestion("1", "t", "q1", frozenset({"a.md"}), ("The **leave** is [25 days](/x) long",)),
        RetrievalQuestion("2", "t", "q2", frozenset({"b.md"}), ("paraphrased quote not in the corpus",)),
        RetrievalQuestion("3", "t", "q3", frozenset({"c.md"})),
    ]
    results = {
        "q1": [hit("z.md"), hit("a.md", "Intro. The leave is 25 days long, as agreed.")],
        "q2": [hit("b.md", "anything")],
        "q3": [hit("z.md")] * 5 + [hit("c.md")],
    }
    texts = {"a.md": "The leave is 25 days long", "b.md": "other words", "c.md": ""}
    scores = evaluate(questions, lambda q, k: results[q][:k], 5, texts.__getitem__)
    assert scores["n"] == 3
    assert scores["recall@1"] == round(1 / 3, 4)  # only q2 at rank 1
    assert scores["recall@5"] == round(2 / 3, 4)  # q3's gold is at rank 6
    assert scores["mrr"] == round((1 / 2 + 1) / 3, 4)
    assert scores["chunk_n"] == 1 and scores["chunk_recall@5"] == 1.0  # q2's quote is not findable


def test_a_quote_straddling_two_chunks_counts_when_half_of_it_is_there() -> None:
    quote = "one two three four five six seven eight nine ten"
    question = RetrievalQuestion("1", "t", "q", frozenset({"a.md"}), (quote,))
    found = evaluate([question], lambda q, k: [hit("a.md", "... one two three four five")], 5, lambda p: quote)
    missed = evaluate([question], lambda q, k: [hit("a.md", "one two three")], 5, lambda p: quote)
    assert found["chunk_recall@5"] == 1.0 and missed["chunk_recall@5"] == 0.0


def test_normalise_ignores_markdown_and_link_targets() -> None:
    assert normalise("**Bold** [link text](https://x.y/z) `code`,  end.") == "bold link text code end"
