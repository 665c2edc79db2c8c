"""Answer or abstain, offline: precision and recall of answering on every public set at once.

    PYTHONPATH=. .venv/bin/python bench/abstain_calibration.py [--cmrc 100] [--grid]

Each question is searched as the route node searches it (the question without what it excludes,
`retrieve_k` passages, BM25); the signals of `adapters/reasoning/offline/confidence.py` are read off
the evidence. A question "should be answered" when it is answerable and the leading passage (see
`confidence`) comes from a gold file (the extract quotes it first); it "should not" when it is one of Northwind's clean
"don't know" questions, or answerable but the best passage is from another file. Ambiguous
questions and Northwind's partly covered "don't know" ones are left out (neither label holds).

Prints, overall and per corpus: answered = the decision is "answer"; precision = answered from a
gold file / answered; recall = answered from a gold file / questions whose best passage is from a
gold file; clean "don't know" answered; hedged (quoted as possibly not answering).
`--grid` also prints the thresholds tried around the chosen ones.
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.answer_quality import CLEAN_REFUSALS, public_corpora, settings_for
from threadsage.adapters.knowledge import passage
from threadsage.adapters.questions.exclusion import split_exclusion
from threadsage.adapters.reasoning.offline import confidence
from threadsage.evaluation.retrieval import evaluation_corpus
from threadsage.support.text import term_set

K = 6  # BrainContext's policy.retrieve_k


@dataclass(frozen=True)
class Case:
    corpus: str
    right: bool | None  # True: should answer (best passage from gold); False: should not
    clean_refusal: bool
    signals: confidence.Signals


def collect(limit: int | None, cmrc: int) -> list[Case]:
    cases = []
    for name, (corpus, sets) in public_corpora(limit, cmrc).items():
        with tempfile.TemporaryDirectory(prefix="threadsage-abstain-") as scratch:
            settings = settings_for(Path(scratch), "offline", None)
            with evaluation_corpus(settings, corpus) as evaluation:
                kb = evaluation.kb
                for _, items in sets:
                    for item in items:
                        if item.ambiguous or (item.unanswerable and item.id not in CLEAN_REFUSALS):
                            continue
                        question = f"{item.context} {item.question}".strip()
                        evidence = [passage(h) for h in kb.search_blocking(split_exclusion(question).query, K)]
                        query = term_set(split_exclusion(question).query)
                        found = confidence.signals(query, evidence, kb.document_frequencies)
                        lead = evidence[found.lead]["path"] if evidence else None
                        right = None if item.unanswerable else lead in item.gold
                        cases.append(Case(name, right, item.unanswerable, found))
    return cases


def score(cases: list[Case], decide: dict[int, str]) -> str:
    answered = [c for i, c in enumerate(cases) if decide[i] == "answer"]
    good = sum(1 for c in answered if c.right)
    should = sum(1 for c in cases if c.right)
    refusals = [i for i, c in enumerate(cases) if c.clean_refusal]
    wrongly = sum(1 for i in refusals if decide[i] == "answer")
    hedged = sum(1 for d in decide.values() if d == "hedge")
    precision = good / len(answered) if answered else 0.0
    return (
        f"precision {precision:.3f} | recall {good / should:.3f} ({good}/{should}) | "
        f"clean don't-know answered {wrongly}/{len(refusals)} | hedged {hedged}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cmrc", type=int, default=100)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--grid", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    cases = collect(args.limit, args.cmrc)
    print(f"{len(cases)} questions, {time.perf_counter() - started:.0f} s\n")
    print("- all: " + score(cases, {i: c.signals.sureness().value for i, c in enumerate(cases)}))
    for corpus in sorted({c.corpus for c in cases}):
        some = [c for c in cases if c.corpus == corpus]
        print(f"  - {corpus}: " + score(some, {i: c.signals.sureness().value for i, c in enumerate(some)}))
    if args.grid:
        print()
        for answer, hedge, unknown, margin, partly, partly_coverage in itertools.product(
            (0.4, 0.5, 0.6), (0.2, 0.3), (0.4, 0.5), (1.3, 2.0), (0.2, 0.3, 0.35), (0.4, 0.55, 0.6)
        ):
            trial = {
                "ANSWER_COVERAGE": answer, "HEDGE_COVERAGE": hedge, "UNKNOWN_CEILING": unknown, "CLEAR_MARGIN": margin,
                "UNKNOWN_PARTLY": partly, "PARTLY_COVERAGE": partly_coverage,
            }  # fmt: skip
            saved = {k: getattr(confidence, k) for k in trial}
            for k, v in trial.items():
                setattr(confidence, k, v)
            decided = {i: c.signals.sureness().value for i, c in enumerate(cases)}
            for k, v in saved.items():
                setattr(confidence, k, v)
            print(f"{answer} {hedge} {unknown} {margin} {partly} {partly_coverage}: {score(cases, decided)}")


if __name__ == "__main__":
    main()
