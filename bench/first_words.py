"""Time from a question to the first words of its answer on screen, in Slack and Telegram.

    .venv/bin/python bench/first_words.py [--runs 5] [--first-token 1.0] [--words-per-second 25]

The real bolt app (served by uvicorn) and the real python-telegram-bot (long polling) against the
fake Slack Web API and the fake Bot API, on a real chat service over the demo handbook, whose
answers come as drafts (tests/support/drafting.py): the model's first token --first-token seconds
after the run, then --words-per-second words a second. The clock starts when the question is sent
(Slack: the signed event's POST; Telegram: the update offered to getUpdates) and stops when the
platform is first given words of the answer: Slack `chat.startStream` in a thread (a mention, the
AI panel), the placeholder's `chat.update` at the top of a DM; Telegram `sendMessageDraft` in a
private chat, the first message in a group. The goal is the model calls before the answer (none on
the offline back-end) + the first token + 300 ms. Prints a table (seconds).
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

from tests.fakes.slack_api import FakeSlack, assistant_thread  # noqa: E402
from tests.fakes.telegram_api import FakeBotAPI  # noqa: E402
from tests.support import slack_harness, telegram_harness  # noqa: E402
from tests.support.drafting import Drafting  # noqa: E402
from tests.support.telegram_harness import ANN, GROUP, TOKEN, TRAVEL, bot_settings, mention, private  # noqa: E402
from threadsage.adapters.knowledge import open_knowledge_base  # noqa: E402
from threadsage.bots.slack.texts import STEPS  # noqa: E402
from threadsage.i18n import say  # noqa: E402
from threadsage.ingestion.pipeline import Ingestor  # noqa: E402
from threadsage.settings.environment import Settings  # noqa: E402

DM = "D222"
POLL = 0.002  # seconds between two looks at what the fake platform was given


async def until(found: Callable[[], bool], timeout: float = 30.0) -> float:
    """The time at which `found()` first holds."""
    deadline = time.perf_counter() + timeout
    while not found():
        if time.perf_counter() > deadline:
            raise TimeoutError("no words arrived")
        await asyncio.sleep(POLL)
    return time.perf_counter()


async def slack(kb: Any, scratch: Path, runs: int, drafting: Callable[[Any], Any]) -> dict[str, list[float]]:
    fake = FakeSlack().start()
    steps = {say(key) for key in STEPS.values()}
    times: dict[str, list[float]] = {"Slack thread (mention)": [], "Slack DM": [], "Slack AI panel": []}
    try:
        async with slack_harness.running(scratch / "slack", kb, fake=fake, progress=True, wrap=drafting) as bot:

            def streams() -> int:
                return len(fake.of("chat.startStream"))

            def dm_words() -> int:
                return len([u for u in fake.of("chat.update") if u.get("channel") == DM and u.get("text") not in steps])

            async def measure(name: str, ask: Callable[[], Awaitable[Any]], seen: Callable[[], int]) -> None:
                before = seen()
                start = time.perf_counter()
                await ask()
                times[name].append(await until(lambda: seen() > before) - start)
                await bot.settle()

            for _ in range(runs):
                await measure("Slack thread (mention)", lambda: bot.mention(TRAVEL), streams)
                await measure("Slack DM", lambda: bot.event(slack_harness.dm_message(TRAVEL, DM)), dm_words)
                panel = slack_harness.next_ts()
                await bot.event(assistant_thread("assistant_thread_started", "U222", DM, panel))
                await bot.settle()
                in_panel = slack_harness.dm_message(TRAVEL, DM, thread_ts=panel)
                await measure("Slack AI panel", lambda: bot.event(in_panel), streams)  # noqa: B023
    finally:
        fake.stop()
    return times


async def telegram(kb: Any, scratch: Path, runs: int, drafting: Callable[[Any], Any]) -> dict[str, list[float]]:
    fake = await FakeBotAPI(TOKEN).start()
    times: dict[str, list[float]] = {"Telegram private chat": [], "Telegram group": []}
    chat = private(ANN)
    try:
        async with telegram_harness.running(bot_settings(scratch / "telegram", fake), kb, wrap=drafting):
            for _ in range(runs):
                before = len(fake.calls_of("sendMessageDraft"))
                start = time.perf_counter()
                fake.say(chat, ANN, TRAVEL)
                times["Telegram private chat"].append(
                    await until(lambda: len(fake.calls_of("sendMessageDraft")) > before) - start  # noqa: B023
                )
                await fake.quiet(0.5)
                before = len(fake.sent(GROUP["id"]))
                start = time.perf_counter()
                fake.say(GROUP, ANN, mention(TRAVEL))
                times["Telegram group"].append(await until(lambda: len(fake.sent(GROUP["id"])) > before) - start)  # noqa: B023
                await fake.quiet(0.5)
    finally:
        await fake.stop()
    return times


async def main(runs: int, first_token: float, words_per_second: float) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        settings = Settings(THREADSAGE_DATA_DIR=Path(scratch) / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
        kb = open_knowledge_base(settings)
        Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([ROOT / "examples" / "handbook"])

        def drafting(chat: Any) -> Drafting:
            return Drafting.of(chat, first_token=first_token, words_per_second=words_per_second)

        times = await slack(kb, Path(scratch), runs, drafting) | await telegram(kb, Path(scratch), runs, drafting)
        kb.close()
    goal = first_token + 0.3
    print(f"first token {first_token:.1f} s, {words_per_second:g} words/s, {runs} runs; goal ≤ {goal:.2f} s")
    print(f"| {'surface':<24} | p50 (s) | max (s) | over the first token, p50 (ms) |")
    print(f"|{'-' * 26}|---------|---------|--------------------------------|")
    for name, values in times.items():
        p50 = statistics.median(values)
        print(f"| {name:<24} | {p50:7.3f} | {max(values):7.3f} | {1000 * (p50 - first_token):30.0f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--first-token", type=float, default=1.0)
    parser.add_argument("--words-per-second", type=float, default=25.0)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.first_token, arguments.words_per_second))
