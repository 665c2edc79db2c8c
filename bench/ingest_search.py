"""Ingestion throughput and search latency at 1k to 200k chunks, BM25 alone vs. hybrid.

    .venv/bin/python bench/ingest_search.py [--sizes 1000 10000 50000 100000 200000] [--modes bm25 hybrid]
        [--read-ahead]

The corpus is the GitLab handbook pages of ../shared/eval/gitlab-handbook/corpus, read at run
time and replicated under distinct sources ("copy3/company/structure.md"), each copy with its
copy number spelled out in the title and at the end of its last section, until the chunk count
reaches the target (within a few percent). Every (size, mode) runs in a fresh child process on a
fresh temporary data dir, so the peak RSS and the first ("cold") query are its own.

Ingest time is `IngestReport.seconds` (chunking, embedding, inserting, final flush). Search
latency is one `search_blocking(question, 5)` per question of single_text.jsonl after the ingest;
the first query is reported apart, and p50/p95 are over the other queries. The load average
(`os.getloadavg`, 1 minute) at the start and end of each run is printed beside it: other jobs on
the machine slow both ingestion and search, so the CPU time this process used (Milvus Lite runs in
it) is reported too: ingest chunks per CPU-second and CPU ms per query hold under load.
"Reopen" and "first query after reopen" are a bot starting on the knowledge base: opening it again
in the same process (Milvus Lite loads the collection), then one search. With --read-ahead, the
offline reader's read-ahead of every passage after the ingest (what a running bot does in the
background: `ingestion/reading_ahead.py`) is timed too. Progress goes to stderr; the table to stdout.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "gitlab-handbook"
CORPUS = EVAL / "corpus"
QUESTIONS = EVAL / "questions" / "single_text.jsonl"
CHUNK_CHARS = 1200
CHUNK_OVERLAP = 200
K = 5
PROGRESS_EVERY_S = 10.0

_ONES = "zero one two three four five six seven eight nine ten".split()  # noqa: SIM905 - words read best as text
_ONES += "eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()  # noqa: SIM905
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()  # noqa: SIM905


def number_word(n: int) -> str:
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
    return f"{number_word(n // 100)}-hundred" + ("" if n % 100 == 0 else "-" + number_word(n % 100))


def library_fingerprint() -> str:
    """Where `threadsage` was imported from and a hash of its sources: the numbers belong to it."""
    import threadsage

    root = Path(threadsage.__file__).parent
    digest = hashlib.sha256()
    for file in sorted(root.rglob("*.py")):
        digest.update(file.relative_to(root).as_posix().encode() + b"\0" + file.read_bytes())
    return f"{root} sha256:{digest.hexdigest()[:12]}"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- corpus ------------------------------------------------------------------------------


def base_documents():
    from threadsage.adapters.documents.loaders import (
        UnreadableDocument,
        discover_files,
        load_file,
    )

    files, _ = discover_files([CORPUS])
    documents = []
    for file, root in files:
        try:
            documents.append(load_file(file, root))
        except UnreadableDocument:
            continue  # e.g. an index page with nothing but front matter
    return documents


def copy_of(document, n: int):
    from threadsage.adapters.documents.loaders import Document, Section

    word = number_word(n)
    sections = list(document.sections)
    last = sections[-1]
    sections[-1] = Section(last.heading_path, f"{last.text}\n\n(copy {word})")
    text = "\n".join(s.text for s in sections)
    return Document(
        source=f"copy{n}/{document.path}",
        path=f"copy{n}/{document.path}",
        title=f"{document.title} ({word})",
        sections=tuple(sections),
        content_hash=hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )


def build_corpus(target: int) -> tuple[list, list[int]]:
    """Copies of the handbook pages until `target` chunks: whole copies while they fit, then
    pages of one more copy that do not overshoot. Returns the documents and their chunk counts."""
    from threadsage.adapters.documents.chunking import chunk_document

    base = base_documents()
    documents: list = []
    counts: list[int] = []
    total = 0
    n = 0
    while total < target:
        added = False
        for document in base:
            doc = copy_of(document, n)
            chunks = len(chunk_document(doc, CHUNK_CHARS, CHUNK_OVERLAP))
            if total + chunks > target:
                continue
            documents.append(doc)
            counts.append(chunks)
            total += chunks
            added = True
            if total >= target:
                break
        n += 1
        if not added and total >= 0.95 * target:
            break
    return documents, counts


# --- one run -----------------------------------------------------------------------------


def run_one(size: int, mode: str, read_ahead: bool) -> dict:
    import asyncio

    from threadsage.adapters.knowledge import open_knowledge_base
    from threadsage.adapters.meaning import minilm
    from threadsage.adapters.meaning.recall import MeaningIndex
    from threadsage.ingestion.pipeline import Ingestor
    from threadsage.ingestion.reading_ahead import ReadingAhead
    from threadsage.settings.environment import Settings

    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    library = library_fingerprint()
    log(f"{mode} {size}: threadsage at {library}")
    documents, counts = build_corpus(size)
    planned = sum(counts)
    log(
        f"{mode} {size}: {len(documents)} documents, {planned} chunks planned "
        f"(built in {time.perf_counter() - started:.1f} s)"
    )
    questions = [
        json.loads(line)["question"] for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()
    ]

    embedder = None
    load_s = 0.0
    if mode == "hybrid":
        from threadsage.adapters.knowledge.embeddings import LocalEmbedder

        t = time.perf_counter()
        embedder = LocalEmbedder()
        load_s = time.perf_counter() - t
        log(f"{mode} {size}: local model loaded in {load_s:.1f} s")

    done = {"docs": 0, "chunks": 0, "last": time.perf_counter()}
    ingest_started = time.perf_counter()

    def progress(_name: str, _total: int) -> None:
        done["chunks"] += counts[done["docs"]]
        done["docs"] += 1
        now = time.perf_counter()
        if now - done["last"] >= PROGRESS_EVERY_S:
            done["last"] = now
            elapsed = now - ingest_started
            log(
                f"{mode} {size}: {done['chunks']}/{planned} chunks chunked & queued, "
                f"{elapsed:.0f} s, {done['chunks'] / elapsed:.0f} chunks/s"
            )

    with tempfile.TemporaryDirectory(prefix="threadsage-bench-") as scratch:
        settings = Settings(
            THREADSAGE_DATA_DIR=scratch,
            THREADSAGE_EMBEDDINGS="local" if mode == "hybrid" else "none",
            _env_file=None,
        )
        kb = open_knowledge_base(settings, embedder)
        try:
            cpu = time.process_time()
            report = Ingestor(kb, CHUNK_CHARS, CHUNK_OVERLAP, on_progress=progress)
            report = report.ingest_documents(documents)
            ingest_cpu_s = time.process_time() - cpu
            log(f"{mode} {size}: ingested {report.chunks_added} chunks in {report.seconds:.1f} s")
            latencies = []
            empty = 0
            cpu = time.process_time()
            for question in questions:
                t = time.perf_counter()
                hits = kb.search_blocking(question, K)
                latencies.append((time.perf_counter() - t) * 1000)
                empty += not hits
            search_cpu_ms = (time.process_time() - cpu) * 1000 / len(latencies)
            log(f"{mode} {size}: {len(latencies)} queries, {empty} with no hits")
            ahead_s = 0.0
            if read_ahead:
                minilm.keep_in(Path(scratch) / "meaning")
                t = time.perf_counter()
                asyncio.run(ReadingAhead(kb, asyncio.Lock(), MeaningIndex()).read_once(asyncio.Event()))
                ahead_s = time.perf_counter() - t
                log(f"{mode} {size}: read ahead in {ahead_s:.1f} s")
        finally:
            kb.close()
        # A bot starting on this knowledge base: open it, then its first search.
        t = time.perf_counter()
        kb = open_knowledge_base(settings, embedder)
        open_ms = (time.perf_counter() - t) * 1000
        try:
            t = time.perf_counter()
            kb.search_blocking(questions[-1], K)
            reopen_ms = (time.perf_counter() - t) * 1000
        finally:
            kb.close()

    warm = latencies[1:]
    return {
        "mode": mode,
        "size": size,
        "documents": len(documents),
        "chunks": report.chunks_added,
        "ingest_s": report.seconds,
        "ingest_cpu_s": ingest_cpu_s,
        "search_cpu_ms": search_cpu_ms,
        "model_load_s": load_s,
        "ahead_s": ahead_s,
        "first_ms": latencies[0],
        "open_ms": open_ms,
        "reopen_ms": reopen_ms,
        "p50_ms": statistics.median(warm),
        "p95_ms": statistics.quantiles(warm, n=100, method="inclusive")[94],
        "queries": len(latencies),
        "library": library,
        "empty": empty,
        "load": f"{load_before:.1f}→{os.getloadavg()[0]:.1f}",
        # ru_maxrss is KiB on Linux; this child ran only this configuration.
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


# --- driver ------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000, 100000, 200000])
    parser.add_argument("--modes", nargs="+", choices=["bm25", "hybrid"], default=["bm25", "hybrid"])
    parser.add_argument("--read-ahead", action="store_true", help="time the offline reader's read-ahead too")
    parser.add_argument("--child", nargs=4, metavar=("SIZE", "MODE", "AHEAD", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        size, mode, ahead, out = args.child
        Path(out).write_text(json.dumps(run_one(int(size), mode, ahead == "1")))
        return

    log(f"nproc={os.cpu_count()} affinity={len(os.sched_getaffinity(0))} python={sys.version.split()[0]}")
    results = []
    for mode in args.modes:
        for size in args.sizes:
            with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
                out = f.name
            try:
                cmd = [sys.executable, __file__, "--child", str(size), mode, str(int(args.read_ahead)), out]
                code = subprocess.call(cmd)
                if code != 0:
                    log(f"{mode} {size}: child failed with exit code {code}")
                    continue
                results.append(json.loads(Path(out).read_text()))
            finally:
                os.unlink(out)

    header = [
        "mode",
        "chunks",
        "ingest s",
        "chunks/s",
        "chunks/CPU-s",
        "first query ms",
        "reopen ms",
        "first query after reopen ms",
        "p50 ms",
        "p95 ms",
        "CPU ms/query",
        "peak RSS MB",
        "load",
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in results:
        row = [
            "BM25" if r["mode"] == "bm25" else "hybrid (local MiniLM)",
            f"{r['chunks']:,}",
            f"{r['ingest_s']:.1f}",
            f"{r['chunks'] / r['ingest_s']:.0f}",
            f"{r['chunks'] / r['ingest_cpu_s']:.0f}",
            f"{r['first_ms']:.1f}",
            f"{r['open_ms']:.0f}",
            f"{r['reopen_ms']:.1f}",
            f"{r['p50_ms']:.1f}",
            f"{r['p95_ms']:.1f}",
            f"{r['search_cpu_ms']:.1f}",
            f"{r['peak_rss_mb']:.0f}",
            r["load"],
        ]
        print("| " + " | ".join(row) + " |")
    print()
    print(
        f"{results[0]['queries'] if results else 0} queries (single_text.jsonl), k={K}; "
        f"p50/p95 exclude the first query; chunk size {CHUNK_CHARS}/{CHUNK_OVERLAP}; "
        f"nproc={os.cpu_count()}."
    )
    libraries = sorted({r["library"] for r in results})
    print(f"threadsage: {'; '.join(libraries)}" + (" (DIFFERENT VERSIONS!)" if len(libraries) > 1 else ""))
    for r in results:
        if r["model_load_s"]:
            print(f"- {r['mode']} {r['chunks']}: model load {r['model_load_s']:.1f} s (not in ingest s)")
        if r["ahead_s"]:
            ahead = r["ahead_s"]
            print(f"- {r['mode']} {r['chunks']}: read ahead in {ahead:.1f} s ({r['chunks'] / ahead:.0f} passages/s)")
        if r["empty"]:
            print(f"- {r['mode']} {r['chunks']}: {r['empty']} queries returned no hits")


if __name__ == "__main__":
    main()
