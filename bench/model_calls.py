"""CPU of one model call in the bot's process: a structured call (the router's decision) and a
plain one (small talk), through the language-model back-end's public methods.

    .venv/bin/python bench/model_calls.py [--calls 300] [--warmup 30]

The fake OpenAI-compatible server of the tests (tests/fakes/openai_server.py) runs in a process
of its own, so only the client's side is counted: process CPU time (user + system, every thread)
of this process over `--calls` sequential calls, after `--warmup` calls that build the clients.
The same script measures any checkout that has `LLMReasoner.route` and `.chat` (copy it into the
checkout's bench/ and run it there): docs/performance.md has the figures before and after the move
to LangChain chat models. Prints one Markdown table row per kind of call.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # for tests.fakes

from threadsage.adapters.reasoning.llm.back_end import LLMReasoner  # noqa: E402
from threadsage.settings.environment import Settings  # noqa: E402

SERVE = """
import sys
from tests.fakes.openai_server import FakeOpenAI
fake = FakeOpenAI().start()
print(fake.base_url, flush=True)
sys.stdin.read()
fake.stop()
"""
PASSAGES = [
    {
        "id": f"p{n}",
        "path": f"doc{n}.md",
        "source": "bench",
        "title": f"Document {n}",
        "heading": "Section",
        "text": "Hotels are booked through the travel desk, up to the limit of the city. " * 6,
        "score": 1.0,
    }
    for n in range(1, 7)
]


async def measure(base_url: str, calls: int, warmup: int) -> list[tuple[str, float, float]]:
    settings = Settings(OPENAI_API_KEY="sk-bench", OPENAI_BASE_URL=base_url, _env_file=None)
    reasoner = LLMReasoner(settings, settings.timezone)
    kinds = {
        "structured (route)": lambda: reasoner.route("What is the hotel limit in Lisbon?", PASSAGES),  # type: ignore[arg-type]
        "plain (small talk)": lambda: reasoner.chat("hello there", []),
    }
    rows = []
    try:
        for name, call in kinds.items():
            for _ in range(warmup):
                await call()
            cpu, wall = time.process_time(), time.perf_counter()
            for _ in range(calls):
                await call()
            rows.append((name, (time.process_time() - cpu) / calls * 1000, (time.perf_counter() - wall) / calls * 1000))
    finally:
        await reasoner.aclose()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3, help="runs of --calls each; the median is shown")
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVE], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        runs = [asyncio.run(measure(base_url, args.calls, args.warmup)) for _ in range(args.runs)]
    finally:
        server.communicate("")
    print("| call | CPU per call (client) | wall per call |")
    print("|---|---|---|")
    for i, (name, _, _) in enumerate(runs[0]):
        cpu = statistics.median(run[i][1] for run in runs)
        wall = statistics.median(run[i][2] for run in runs)
        print(f"| {name} | {cpu:.2f} ms | {wall:.2f} ms |")


if __name__ == "__main__":
    main()
