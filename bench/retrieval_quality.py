"""Recall@5 on every text subset of the GitLab handbook questions, BM25 alone vs. hybrid, with or without rerank.

    .venv/bin/python bench/retrieval_quality.py [--chunk-chars 1200 --overlap 200] [--embeddings none local]
        [--rerank none lexical] [--pool 20]

Prints one table: file-level recall@5 (chunk-level in brackets) per subset and configuration,
beside the plain-BM25 baseline of ../shared/eval/README.md (1,200-character chunks), then one of
MRR. `--rerank lexical` orders the best `--pool` fused candidates with the no-model reranker
(threadsage/adapters/reasoning/rerank.py) and scores its top 5; `none` scores the fused top 5.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from threadsage.adapters.knowledge import Hit, KnowledgeBase, passage
from threadsage.adapters.reasoning.rerank import LexicalReranker
from threadsage.evaluation.retrieval import evaluate, evaluation_corpus, load_questions
from threadsage.settings.environment import Settings

EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "gitlab-handbook"
SUBSETS = [
    "single_text",
    "negation_exclusion",
    "temporal_reference",
    "contextual_anaphora",
    "multi-hop_reasoning",
]
# ../shared/eval/README.md: plain BM25, 1,200-char chunks; file-level / chunk-level recall@5.
BASELINE = {
    "single_text": (1.00, 0.97),
    "negation_exclusion": (0.68, 0.42),
    "temporal_reference": (0.72, 0.72),
    "contextual_anaphora": (0.96, 0.74),
    "multi-hop_reasoning": (1.00, 0.72),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk-chars", type=int, nargs="+", default=[1200])
    parser.add_argument("--overlap", type=int, default=200)
    parser.add_argument("--embeddings", nargs="+", default=["none", "local"])
    parser.add_argument("--rerank", nargs="+", default=["none"], choices=["none", "lexical"])
    parser.add_argument("--pool", type=int, default=20, help="fused candidates a reranker orders")
    args = parser.parse_args()

    recall: dict[str, dict[str, str]] = {}
    mrr: dict[str, dict[str, str]] = {}
    for embeddings in args.embeddings:
        for chunk_chars in args.chunk_chars:
            name = f"{'BM25' if embeddings == 'none' else 'hybrid-' + embeddings} {chunk_chars}"
            settings = Settings(embeddings=embeddings, chunk_chars=chunk_chars, chunk_overlap=args.overlap)
            started = time.perf_counter()
            with evaluation_corpus(settings, EVAL / "corpus") as corpus:
                ingest = f"{corpus.report.chunks_added} chunks, {time.perf_counter() - started:.0f} s"
                for rerank in args.rerank:
                    search = corpus.kb.search_blocking if rerank == "none" else reranked_search(corpus.kb, args.pool)
                    column = f"{name}{'' if rerank == 'none' else ' + ' + rerank} [{ingest}]"
                    recall[column], mrr[column] = {}, {}
                    for subset in SUBSETS:
                        questions = load_questions(EVAL / "questions" / f"{subset}.jsonl")
                        s = evaluate(questions, search, 5, corpus.text_of)
                        recall[column][subset] = f"{s['recall@5']:.2f} ({s.get('chunk_recall@5', 0):.2f})"
                        mrr[column][subset] = f"{s['mrr']:.2f}"

    baseline = {subset: f"{BASELINE[subset][0]:.2f} ({BASELINE[subset][1]:.2f})" for subset in SUBSETS}
    table("recall@5 file (chunk)", {"baseline BM25 1200": baseline, **recall})
    print()
    table("MRR (file)", mrr)


def reranked_search(kb: KnowledgeBase, pool: int) -> Callable[[str, int], list[Hit]]:
    """Search the best `pool` candidates, order them with the lexical reranker, return the top k."""
    reranker = LexicalReranker()

    def search(query: str, k: int) -> list[Hit]:
        hits = kb.search_blocking(query, pool)
        return [hits[i] for i in reranker.order_now(query, [passage(h) for h in hits])][:k]

    return search


def table(title: str, columns: dict[str, dict[str, str]]) -> None:
    header = [title, *columns]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for subset in SUBSETS:
        print("| " + " | ".join([subset, *(column[subset] for column in columns.values())]) + " |")


if __name__ == "__main__":
    main()
