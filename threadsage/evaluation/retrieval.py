"""Retrieval evaluation: recall@1, recall@k and MRR of the knowledge base on graded questions.

Two question formats are read:
- the handbook format (`question`, `type`, `retrieval: [{file: [quotes]}]`, optional `context`):
  file-level gold is every file named in `retrieval`, except for negation and anaphora
  questions whose first entry is a deliberate wrong hit; anaphora questions are searched with
  their `context` (the previous user turn) in front;
- the BEIR format (`_id`, `text` per query, a `*qrels.tsv` beside the queries file), with the
  corpus as a `*corpus.jsonl` file.

File level: a question counts as found at k when a gold file owns one of the top k chunks.
Chunk level is scored only for questions whose evidence quote can be found in the corpus text
(some quotes are paraphrased): found when a top-k chunk holds the quote, or at least half of it
(a quote can straddle a chunk boundary).
"""

from __future__ import annotations

import json
import random
import re
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from threadsage.adapters.documents.loaders import Document, discover_files, load_file, load_jsonl_corpus
from threadsage.adapters.knowledge import DenseUse, Hit, KnowledgeBase, open_knowledge_base
from threadsage.adapters.knowledge.embeddings import make_embedder
from threadsage.ingestion.pipeline import Ingestor, IngestReport
from threadsage.settings.environment import Settings

# In these question sets the first retrieval entry is a deliberate wrong hit.
DECOY_FIRST = {"negation exclusion", "contextual anaphora"}


@dataclass(frozen=True)
class RetrievalQuestion:
    id: str
    kind: str
    query: str
    gold: frozenset[str]
    quotes: tuple[str, ...] = ()


def load_questions(file: Path, sample: int | None = None, seed: int = 0) -> list[RetrievalQuestion]:
    rows = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]
    if rows and "retrieval" in rows[0]:
        questions = [_handbook_question(row) for row in rows]
    else:
        questions = _beir_questions(rows, _qrels(file))
    if sample is not None and sample < len(questions):
        questions = random.Random(seed).sample(questions, sample)
    return questions


@dataclass
class EvaluationCorpus:
    kb: KnowledgeBase
    report: IngestReport
    text_of: Callable[[str], str] | None  # a corpus file's text, for chunk-level scoring


@contextmanager
def evaluation_corpus(
    settings: Settings, corpus: Path, data_dir: Path | None = None, only: Sequence[str] = ()
) -> Iterator[EvaluationCorpus]:
    """The corpus ingested into a Milvus Lite knowledge base of its own: a temporary one, or
    the one kept in `data_dir` (ingestion is idempotent, so a second run only reads). `only`: the
    folders of `corpus` that are its documents (the rest — a README, the questions — is not),
    their paths kept relative to `corpus`. The knowledge base is made as the bot makes it, from
    every section that shapes one (storage, embeddings, languages, chunking): hence `Settings`."""
    with tempfile.TemporaryDirectory(prefix="threadsage-eval-") as scratch:
        settings = settings.model_copy(
            update={"data_dir": data_dir or Path(scratch), "milvus_uri": None, "collection": "evaluation"}
        )
        kb = open_knowledge_base(settings, make_embedder(settings, settings), DenseUse.of(settings))
        try:
            ingestor = Ingestor(kb, settings.chunk_chars, settings.chunk_overlap)
            documents = corpus_documents(corpus, only)
            if documents is None:
                yield EvaluationCorpus(kb, ingestor.ingest_paths([corpus]), _file_reader(corpus))
            else:
                yield EvaluationCorpus(kb, ingestor.ingest_documents(documents), None)
        finally:
            kb.close()


def _file_reader(root: Path) -> Callable[[str], str]:
    cache: dict[str, str] = {}

    def text_of(path: str) -> str:
        if path not in cache:
            file = root / path
            cache[path] = file.read_text(encoding="utf-8", errors="replace") if file.is_file() else ""
        return cache[path]

    return text_of


def corpus_documents(corpus: Path, only: Sequence[str] = ()) -> Iterable[Document] | None:
    """In-memory documents for a JSON-lines corpus or for the `only` folders of a folder; None for
    a whole folder of files."""
    if only:
        files, _ = discover_files([corpus / folder for folder in only])
        return [load_file(file, corpus) for file, _ in files]
    if corpus.is_file():
        return load_jsonl_corpus(corpus)
    jsonl = sorted(corpus.glob("*corpus.jsonl"))
    return load_jsonl_corpus(jsonl[0]) if jsonl else None


def evaluate(
    questions: Sequence[RetrievalQuestion],
    search: Callable[[str, int], list[Hit]],
    k: int,
    corpus_text: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """Scores overall and per question type. `corpus_text(path)` gives a file's text for
    deciding whether a quote is findable; without it chunk-level recall is not scored."""
    per_kind: dict[str, list[dict[str, float]]] = defaultdict(list)
    for question in questions:
        hits = search(question.query, k)
        per_kind[question.kind].append(_score(question, hits, k, corpus_text))
    everything = [s for scores in per_kind.values() for s in scores]
    result = _aggregate(everything, k)
    result["by_type"] = {kind: _aggregate(scores, k) for kind, scores in sorted(per_kind.items())}
    return result


# --- scoring -------------------------------------------------------------------------------


def _score(
    question: RetrievalQuestion,
    hits: list[Hit],
    k: int,
    corpus_text: Callable[[str], str] | None,
) -> dict[str, float]:
    ranks = [rank for rank, hit in enumerate(hits[:k], start=1) if hit.path in question.gold]
    first = ranks[0] if ranks else None
    scored = {"r1": first == 1, "rk": first is not None, "rr": 1 / first if first else 0.0}
    if corpus_text is not None:
        findable = [
            q for q in question.quotes
            if any(normalise(q) in normalise(corpus_text(path)) for path in question.gold)
        ]  # fmt: skip
        if findable:
            scored["chunk"] = any(
                _holds_quote(normalise(hit.text), normalise(q))
                for hit in hits[:k]
                if hit.path in question.gold
                for q in findable
            )
    return scored


def _aggregate(scores: list[dict[str, float]], k: int) -> dict[str, Any]:
    n = len(scores)
    chunk = [s["chunk"] for s in scores if "chunk" in s]
    out = {
        "n": n,
        "recall@1": _mean([s["r1"] for s in scores]),
        f"recall@{k}": _mean([s["rk"] for s in scores]),
        "mrr": _mean([s["rr"] for s in scores]),
    }
    if chunk:
        out["chunk_n"] = len(chunk)
        out[f"chunk_recall@{k}"] = _mean(chunk)
    return out


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_WORD = re.compile(r"\w+")


def normalise(text: str) -> str:
    """Lower-case words only: Markdown, link targets, punctuation and spacing do not count."""
    return " ".join(_WORD.findall(_LINK_TARGET.sub("]", text).lower()))


def _holds_quote(chunk: str, quote: str) -> bool:
    if quote in chunk:
        return True
    words = quote.split()
    half = (len(words) + 1) // 2
    return half >= 4 and (" ".join(words[:half]) in chunk or " ".join(words[-half:]) in chunk)


# --- formats -------------------------------------------------------------------------------


def _handbook_question(row: dict[str, Any]) -> RetrievalQuestion:
    kind = str(row.get("type", "")).replace("-", " ").strip().lower()
    evidence = row["retrieval"][1:] if kind in DECOY_FIRST else row["retrieval"]
    gold = frozenset(path for entry in evidence for path in entry)
    quotes = tuple(q for entry in evidence for qs in entry.values() for q in qs)
    query = row["question"]
    if row.get("context"):
        query = f"{row['context']} {query}"
    return RetrievalQuestion(str(row["id"]), kind.replace(" ", "_"), query, gold, quotes)


def _qrels(queries_file: Path) -> dict[str, set[str]]:
    candidates = sorted(queries_file.parent.glob("*qrels.tsv"))
    if not candidates:
        raise ValueError(f"no *qrels.tsv beside {queries_file}: cannot tell the gold documents")
    qrels: dict[str, set[str]] = defaultdict(set)
    for line in candidates[0].read_text(encoding="utf-8").splitlines()[1:]:
        parts = line.split("\t")
        if len(parts) >= 2 and (len(parts) < 3 or parts[2].strip() != "0"):
            qrels[parts[0]].add(parts[1])
    return qrels


def _beir_questions(rows: list[dict[str, Any]], qrels: dict[str, set[str]]) -> list[RetrievalQuestion]:
    return [
        RetrievalQuestion(str(row["_id"]), "query", row["text"], frozenset(qrels[row["_id"]]))
        for row in rows
        if qrels.get(row["_id"])
    ]
