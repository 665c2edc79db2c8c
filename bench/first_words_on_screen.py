"""Time from a question to the first words of its answer on screen, in Slack and Telegram.

    .venv/bin/python bench/first_words_on_screen.py [--runs 5] [--first-token 1.0] [--tokens-per-second 30]

The real bolt app (served by uvicorn) and the real python-telegram-bot (long polling) against the
fake Slack Web API and the fake Bot API, on the real chat service over the demo handbook, its
language-model back-end against the fake OpenAI server, which answers every call --first-token
seconds after the request and then --tokens-per-second tokens a second, streamed when asked (the
answer is; routing and checking are not). The clock starts when the question is sent (Slack: the
signed event's POST; Telegram: the update offered to getUpdates) and stops when the platform is
first given words of the answer: Slack `chat.startStream` in a thread (a mention, the AI panel),
the placeholder's `chat.update` at the top of a DM; Telegram `sendMessageDraft` in a private chat,
the first message in a group. "Before the answer" is the time until the answer's model call
arrives at the fake server (the calls before it, and the turn's own work); the goal is that + the
first token + 300 ms. Prints a table (seconds).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.openai_server import FakeOpenAI, kind_of  # noqa: E402
from tests.fakes.slack_api import FakeSlack, assistant_thread  # noqa: E402
from tests.fakes.telegram_api import FakeBotAPI  # noqa: E402
from tests.helpers import slack_harness, telegram_harness  # noqa: E402
from tests.helpers.conversation import route_to  # noqa: E402
from tests.helpers.telegram_harness import ANN, GROUP, TOKEN, TRAVEL, bot_settings, mention, private  # noqa: E402
from threadsage.adapters.knowledge import open_knowledge_base  # noqa: E402
from threadsage.bots.slack.texts import STEPS  # noqa: E402
from threadsage.i18n import say  # noqa: E402
from threadsage.ingestion.pipeline import Ingestor  # noqa: E402
from threadsage.settings.environment import Settings  # noqa: E402

DM = "D222"
POLL = 0.002  # seconds between two looks at what the fake platform was given


ANSWER = (
    "Premium economy is allowed for flights of six hours or more [1]; book it through TripDesk with your "
    "manager's approval, and keep the receipt for the expense report [1]."
)
Times = dict[str, list[tuple[float, float]]]  # surface → (to the answer's model call, to the first words)


async def until(found: Callable[[], bool], timeout: float = 60.0) -> float:
    """The time at which `found()` first holds."""
    deadline = time.perf_counter() + timeout
    while not found():
        if time.perf_counter() > deadline:
            raise TimeoutError("no words arrived")
        await asyncio.sleep(POLL)
    return time.perf_counter()


async def timed(llm: FakeOpenAI, ask: Callable[[], Awaitable[Any]], shown: Callable[[], bool]) -> tuple[float, float]:
    """From asking: the time until the answer's model call arrives, and until the first words show."""
    before = answer_calls(llm)
    start = time.perf_counter()
    await ask()
    answer_call = asyncio.create_task(until(lambda: answer_calls(llm) > before))
    words = await until(shown)
    return await answer_call - start, words - start


def answer_calls(llm: FakeOpenAI) -> int:
    return sum(1 for path, body in list(llm.requests) if path.endswith("/completions") and kind_of(body) == "answer")


async def slack(kb: Any, scratch: Path, runs: int, llm: FakeOpenAI) -> Times:
    fake = FakeSlack().start()
    steps = {say(key) for key in STEPS.values()}
    times: Times = {"Slack thread (mention)": [], "Slack DM": [], "Slack AI panel": []}
    model = {"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": llm.base_url, "THREADSAGE_RATE_LIMIT_PER_MINUTE": 10_000}
    try:
        async with slack_harness.running(scratch / "slack", kb, fake=fake, **model) as bot:

            def streams(before: int) -> Callable[[], bool]:
                return lambda: len(fake.of("chat.startStream")) > before

            def dm_words(before: int) -> Callable[[], bool]:
                return lambda: len(words_in_dm()) > before

            def words_in_dm() -> list[dict]:
                return [u for u in fake.of("chat.update") if u.get("channel") == DM and u.get("text") not in steps]

            for _ in range(runs):
                started = len(fake.of("chat.startStream"))
                times["Slack thread (mention)"].append(await timed(llm, lambda: bot.mention(TRAVEL), streams(started)))
                await bot.settle()
                dm = slack_harness.dm_message(TRAVEL, DM)
                times["Slack DM"].append(await timed(llm, lambda: bot.event(dm), dm_words(len(words_in_dm()))))  # noqa: B023
                await bot.settle()
                panel = slack_harness.next_ts()
                await bot.event(assistant_thread("assistant_thread_started", "U222", DM, panel))
                await bot.settle()
                in_panel = slack_harness.dm_message(TRAVEL, DM, thread_ts=panel)
                started = len(fake.of("chat.startStream"))
                times["Slack AI panel"].append(await timed(llm, lambda: bot.event(in_panel), streams(started)))  # noqa: B023
                await bot.settle()
    finally:
        fake.stop()
    return times


async def telegram(kb: Any, scratch: Path, runs: int, llm: FakeOpenAI) -> Times:
    fake = await FakeBotAPI(TOKEN).start()
    times: Times = {"Telegram private chat": [], "Telegram group": []}
    chat = private(ANN)
    model = {"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": llm.base_url, "THREADSAGE_RATE_LIMIT_PER_MINUTE": 10_000}
    try:
        async with telegram_harness.running(bot_settings(scratch / "telegram", fake, **model), kb):
            for _ in range(runs):
                drafted = len(fake.calls_of("sendMessageDraft"))

                async def ask_privately() -> None:
                    fake.say(chat, ANN, TRAVEL)

                times["Telegram private chat"].append(
                    await timed(llm, ask_privately, lambda: len(fake.calls_of("sendMessageDraft")) > drafted)  # noqa: B023
                )
                await fake.quiet(0.5)
                sent = len(fake.sent(GROUP["id"]))

                async def ask_in_group() -> None:
                    fake.say(GROUP, ANN, mention(TRAVEL))

                times["Telegram group"].append(
                    await timed(llm, ask_in_group, lambda: len(fake.sent(GROUP["id"])) > sent)  # noqa: B023
                )
                await fake.quiet(0.5)
    finally:
        await fake.stop()
    return times


async def main(runs: int, first_token: float, tokens_per_second: float) -> None:
    llm = FakeOpenAI(first_token_seconds=first_token, tokens_per_second=tokens_per_second).start()
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["answer"] = {"answer": ANSWER, "used": [1]}
    with tempfile.TemporaryDirectory() as scratch:
        settings = Settings(THREADSAGE_DATA_DIR=Path(scratch) / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
        kb = open_knowledge_base(settings)
        Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([ROOT / "demo" / "handbook"])
        times = await slack(kb, Path(scratch), runs, llm) | await telegram(kb, Path(scratch), runs, llm)
        kb.close()
    llm.stop()
    print(f"model: first token {first_token:.1f} s after each request, {tokens_per_second:g} tokens/s; {runs} runs")
    columns = ["surface", "before the answer's call, p50 (s)", "first words, p50 (s)", "max (s)", "goal (s)"]
    print("| " + " | ".join([*columns, "vs goal, p50 (ms)"]) + " |")
    print("|---|---|---|---|---|---|")
    for name, pairs in times.items():
        before = statistics.median(b for b, _ in pairs)
        words = statistics.median(w for _, w in pairs)
        goal = before + first_token + 0.3
        over = statistics.median(w - (b + first_token + 0.3) for b, w in pairs)
        print(
            f"| {name} | {before:.3f} | {words:.3f} | {max(w for _, w in pairs):.3f} | {goal:.3f} | {1000 * over:.0f} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--first-token", type=float, default=1.0)
    parser.add_argument("--tokens-per-second", type=float, default=30.0)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.first_token, arguments.tokens_per_second))
