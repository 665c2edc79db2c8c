"""OCR time per screenshot, as the bot reads one: through a reader process of the image budget.

    .venv/bin/python bench/ocr_screenshots.py [--repeat 10]

The screenshots are drawn by `tests/helpers/screenshots.py` (1280×800: an error dialog, a
terminal with a stack trace, a settings page, a Chinese error dialog). Each is handed `--repeat`
times to one reader of `Budget().for_images()` (`ReaderPool.parse`: the bytes over its pipe, the
OCR, the sections back), after the reader has started and loaded its models (timed apart). The
time is wall-clock from hand-over to answer. Prints one Markdown table: p50 and p95 per
screenshot and over all, the lines read, and the reader's start.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers.screenshots import SCREENSHOTS
from threadsage.adapters.documents.reading import Budget, ReaderPool


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    pool = ReaderPool(Budget(seconds=120.0, readers=1).for_images())
    try:
        started = time.perf_counter()
        pool.parse(SCREENSHOTS["error dialog"](), "warm-up.png")  # starts the reader and loads the models
        start = time.perf_counter() - started
        rows, every = [], []
        for name, make in SCREENSHOTS.items():
            data, times = make(), []
            for _ in range(args.repeat):
                began = time.perf_counter()
                _, sections = pool.parse(data, "screenshot.png")
                times.append(time.perf_counter() - began)
            lines = sum(len(s.text.splitlines()) for s in sections)
            every += times
            rows.append((name, percentile(times, 0.5), percentile(times, 0.95), lines))
    finally:
        pool.close()
    print("| screenshot (1280×800) | p50 | p95 | lines read |\n|---|---|---|---|")
    for name, p50, p95, lines in rows:
        print(f"| {name} | {p50:.2f} s | {p95:.2f} s | {lines} |")
    print(
        f"| **all ({len(every)} reads)** | **{percentile(every, 0.5):.2f} s** | **{percentile(every, 0.95):.2f} s** | |"
    )
    print(
        f"\nA reader's start with its models loaded (plus the first read): {start:.1f} s; "
        f"mean of all reads {statistics.mean(every):.2f} s."
    )


if __name__ == "__main__":
    main()
