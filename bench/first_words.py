"""Time from a question to the first words of its answer, in the chat service's event stream and
in the terminal chat, against the model's own times.

The goal (issue 23): first words within the model's own time to first token of the answer call,
plus the calls before it, plus 300 ms. "Before" is the sum of the own times of the calls made
before the answer (each to its whole reply: they are not streamed); "TTFT" is the answer call's own
time to its first token; "overhead" is first words − before − TTFT. Also each turn's wall time
against the sum of its model calls' own times.

- `--model fake` (default): the fake OpenAI server of the tests at a realistic pace
  (`--first-token 1 --rate 30`: one second to the first token, 30 tokens a second); the own times
  are the fake's.
- `--model real`: llama-cpp-python's server with SmolLM2-135M (`make model-server`), behind the
  recording proxy of tests/helpers/model_server.py, which times each request (to its first token
  when streamed).

    .venv/bin/python bench/first_words.py [--model fake|real] [--turns 3]
    .venv/bin/python bench/first_words.py --cpu 100

`--cpu N`: what streaming costs: CPU of this process per standard-route turn (3 model calls, the
answer 66 tokens), N turns through `stream()` (drafts) and N through `handle()` (no stream), with
the fake in a process of its own and no pace, so only the bot's side is counted.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console

from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.model_server import MODEL_NAME, running_model_server
from threadsage.adapters.knowledge import open_knowledge_base
from threadsage.app.runtime import open_chat_service
from threadsage.bots.terminal import TerminalChat
from threadsage.chat import ChatService, Draft, Reply, Turn
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings

REPO = Path(__file__).resolve().parents[1]
HANDBOOK = REPO / "demo" / "handbook"
ROUTES = {"standard": "HOW_TO", "fast": "FACT_LOOKUP"}
QUESTIONS = [  # none that the ambiguity backstop asks back
    "Which cabin class may I book for a flight of 6 hours or more?",
    "What is the hotel limit per night in Lisbon?",
    "How many days of annual leave do employees get?",
]
ANSWER = (
    "For a flight of six hours or more you may book premium economy [1]; shorter flights are booked in "
    "economy, and business class needs the approval of a director before the booking is made [1]. Book "
    "through TripDesk at least fourteen days in advance, and add a short reason for later bookings [1]."
)


class FirstWrite(io.StringIO):
    """The terminal's output, with the moment of its first write."""

    def __init__(self) -> None:
        super().__init__()
        self.first: float | None = None

    def write(self, text: str) -> int:
        if self.first is None and text.strip():
            self.first = time.monotonic()
        return super().write(text)


async def streamed(chat: ChatService, turn: Turn) -> tuple[float, float, int]:
    """Seconds to the first draft and to the reply, and how many drafts."""
    started = time.monotonic()
    first = replied = None
    drafts = 0
    async for event in chat.stream(turn):
        if isinstance(event, Draft) and event.text:
            drafts += 1
            first = first or time.monotonic() - started
        if isinstance(event, Reply) and replied is None:
            replied = time.monotonic() - started
    assert replied is not None, "no reply"
    return first or float("nan"), replied, drafts


async def in_terminal(chat: ChatService, question: str) -> float:
    out = FirstWrite()
    terminal = TerminalChat(chat, f"t{time.monotonic_ns()}", Console(file=out, force_terminal=False, width=200))
    started = time.monotonic()
    await terminal.ask(question)
    return (out.first or float("nan")) - started


def row(cells: list[Any]) -> str:
    return "| " + " | ".join(f"{c:.2f}" if isinstance(c, float) else str(c) for c in cells) + " |"


class FakeOwn:
    def __init__(self, fake: FakeOpenAI) -> None:
        self.fake = fake

    def mark(self) -> int:
        return len(self.fake.own_seconds)

    def own(self, since: int) -> tuple[float, float, float, int, int]:
        calls = self.fake.own_seconds[since:]
        answer = next((i for i, (kind, _, _) in enumerate(calls) if kind == "answer"), len(calls))
        before = sum(whole for _, _, whole in calls[:answer])
        ttft = calls[answer][1] if answer < len(calls) else 0.0
        return before, ttft, sum(whole for _, _, whole in calls), len(calls), 0


class RealOwn:
    def __init__(self, server: Any) -> None:
        self.server = server

    def mark(self) -> int:
        return len(self.server.chat_exchanges())

    def own(self, since: int) -> tuple[float, float, float, int, int]:
        calls = self.server.chat_exchanges()[since:]
        answer = next((i for i, e in enumerate(calls) if e.body.get("stream")), len(calls))
        before = sum(e.seconds for e in calls[:answer])
        ttft = (calls[answer].first_token or 0.0) if answer < len(calls) else 0.0
        total = sum(e.seconds for e in calls)
        return before, ttft, total, len(calls), sum(e.completion_tokens or 0 for e in calls)


async def run(model: str, turns: int, first_token: float, rate: float, timeout: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        kb_settings = Settings(THREADSAGE_DATA_DIR=Path(tmp) / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
        kb = open_knowledge_base(kb_settings)
        assert Ingestor(kb, kb_settings.chunk_chars, kb_settings.chunk_overlap).ingest_paths([HANDBOOK]).ok
        common = {"THREADSAGE_DATA_DIR": Path(tmp) / "data", "THREADSAGE_EMBEDDINGS": "none", "DATABASE_URL": None}
        if model == "fake":
            fake = FakeOpenAI(first_token_seconds=first_token, tokens_per_second=rate).start()
            fake.script["answer"] = {"answer": ANSWER, "used": [1]}
            routes = iter([])

            def route(_request: dict) -> dict:
                return {"intent": next(routes), "confidence": 0.9, "reasoning": "scripted"}

            fake.script["RouteDecision"] = route
            settings = Settings(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=fake.base_url, _env_file=None, **common)
            try:
                async with open_chat_service(settings, kb=kb) as chat:
                    print(f"fake model: {first_token:.1f} s to the first token, {rate:.0f} tokens/s\n")
                    for route_name, intent in ROUTES.items():
                        routes = iter([intent] * (2 * turns))
                        await measure_one(chat, FakeOwn(fake), turns, route_name)
            finally:
                fake.stop()
        else:
            async with running_model_server() as server:
                settings = Settings(
                    OPENAI_API_KEY="sk-local",
                    OPENAI_BASE_URL=server.base_url,
                    THREADSAGE_CHAT_MODEL=MODEL_NAME,
                    THREADSAGE_LLM_TIMEOUT=timeout,
                    _env_file=None,
                    **common,
                )
                async with open_chat_service(settings, kb=kb) as chat:
                    print("llama-cpp-python server, SmolLM2-135M-Instruct, --n_threads 1\n")
                    await measure_one(chat, RealOwn(server), turns, "any")
        kb.close()


async def measure_one(chat: ChatService, own: FakeOwn | RealOwn, turns: int, route: str) -> None:
    print(f"route: {route}")
    print(
        "| turn | before (s) | answer TTFT (s) | first words (s) | overhead (ms) | terminal: first words (s) "
        "| reply (s) | calls' own (s) | calls | tokens | drafts |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    overheads, terminals = [], []
    for n in range(turns):
        question = QUESTIONS[n % len(QUESTIONS)]
        mark = own.mark()
        first, reply, drafts = await streamed(chat, Turn("bench", f"b:{route}:{n}", "U1", f"{route}{n}", question))
        before, ttft, total, calls, tokens = own.own(mark)
        overheads.append((first - before - ttft) * 1000)
        mark = own.mark()
        terminal = await in_terminal(chat, question)
        t_before, t_ttft, *_ = own.own(mark)
        terminals.append((terminal - t_before - t_ttft) * 1000)
        print(
            row(
                [
                    n + 1,
                    before,
                    ttft,
                    first,
                    f"{overheads[-1]:.0f}",
                    f"{terminal:.2f} ({terminals[-1]:+.0f} ms)",
                    reply,
                    total,
                    calls,
                    tokens,
                    drafts,
                ]
            ),
            flush=True,
        )
    print(
        f"median overhead: event stream {statistics.median(overheads):.0f} ms, "
        f"terminal {statistics.median(terminals):.0f} ms\n"
    )


SERVE = """
import sys
from tests.fakes.openai_server import FakeOpenAI
fake = FakeOpenAI().start()
fake.script["answer"] = {"answer": sys.argv[1], "used": [1]}
fake.script["RouteDecision"] = {"intent": "HOW_TO", "confidence": 0.9, "reasoning": "scripted"}
print(fake.base_url, flush=True)
sys.stdin.read()
fake.stop()
"""


def cpu(turns: int) -> None:
    server = subprocess.Popen(
        [sys.executable, "-c", SERVE, ANSWER], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        asyncio.run(cpu_of_turns(server.stdout.readline().strip(), turns))
    finally:
        server.communicate("")


async def cpu_of_turns(base_url: str, turns: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        kb_settings = Settings(THREADSAGE_DATA_DIR=Path(tmp) / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
        kb = open_knowledge_base(kb_settings)
        assert Ingestor(kb, kb_settings.chunk_chars, kb_settings.chunk_overlap).ingest_paths([HANDBOOK]).ok
        settings = Settings(
            THREADSAGE_DATA_DIR=Path(tmp) / "data",
            THREADSAGE_EMBEDDINGS="none",
            DATABASE_URL=None,
            OPENAI_API_KEY="sk-test",
            OPENAI_BASE_URL=base_url,
            _env_file=None,
        )
        async with open_chat_service(settings, kb=kb) as chat:
            print("| how | CPU per turn | drafts per turn |")
            print("|---|---|---|")
            for how in ("handle", "stream", "handle", "stream"):
                started, drafts = time.process_time(), 0
                for n in range(turns):
                    turn = Turn("bench", f"cpu:{how}:{n}:{started}", f"U{n}", "m", QUESTIONS[0])
                    if how == "handle":
                        await chat.handle(turn)
                    else:
                        drafts += sum([isinstance(e, Draft) async for e in chat.stream(turn)])
                spent = (time.process_time() - started) / turns * 1000
                print(f"| {how} | {spent:.1f} ms | {drafts / turns:.1f} |", flush=True)
        kb.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=["fake", "real"], default="fake")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--first-token", type=float, default=1.0, help="the fake's seconds to the first token")
    parser.add_argument("--rate", type=float, default=30.0, help="the fake's tokens a second")
    parser.add_argument("--timeout", type=float, default=60, help="THREADSAGE_LLM_TIMEOUT with the real server")
    parser.add_argument("--cpu", type=int, default=0, help="measure CPU per turn over this many turns instead")
    args = parser.parse_args()
    if args.cpu:
        cpu(args.cpu)
    else:
        asyncio.run(run(args.model, args.turns, args.first_token, args.rate, args.timeout))


if __name__ == "__main__":
    main()
