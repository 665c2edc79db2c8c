"""Recall@5 on every text subset of the GitLab handbook questions, BM25 alone vs. hybrid.

    .venv/bin/python bench/retrieval_quality.py [--chunk-chars 1200 --overlap 200] [--embeddings none local]

Prints one table: file-level recall@5 (chunk-level in brackets) per subset and configuration,
beside the plain-BM25 baseline of ../shared/eval/README.md (1,200-character chunks).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from threadsage.config import Settings
from threadsage.evaluation import evaluate, evaluation_corpus, load_questions

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
    args = parser.parse_args()

    columns: dict[str, dict[str, str]] = {}
    for embeddings in args.embeddings:
        for chunk_chars in args.chunk_chars:
            name = f"{'BM25' if embeddings == 'none' else 'hybrid-' + embeddings} {chunk_chars}"
            settings = Settings(embeddings=embeddings, chunk_chars=chunk_chars, chunk_overlap=args.overlap)
            started = time.perf_counter()
            with evaluation_corpus(settings, EVAL / "corpus") as corpus:
                column = {}
                for subset in SUBSETS:
                    questions = load_questions(EVAL / "questions" / f"{subset}.jsonl")
                    s = evaluate(questions, corpus.kb.search_blocking, 5, corpus.text_of)
                    column[subset] = f"{s['recall@5']:.2f} ({s.get('chunk_recall@5', 0):.2f})"
                chunks = corpus.report.chunks_added
            columns[f"{name} [{chunks} chunks, {time.perf_counter() - started:.0f} s]"] = column

    header = ["subset", "baseline BM25 1200", *columns]
    rows = [
        [subset, f"{BASELINE[subset][0]:.2f} ({BASELINE[subset][1]:.2f})"]
        + [column[subset] for column in columns.values()]
        for subset in SUBSETS
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
