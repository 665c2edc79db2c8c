"""Many answers streaming at once within the platforms' limits (issue 37).

    PYTHONPATH=. .venv/bin/python bench/streaming_limits.py [--answers 50] [--places 10]

--answers questions from as many people, spread over --places Slack channels (then Telegram
groups), all sent at once; the language-model back-end against the fake OpenAI server streaming
its answer at 20 tokens a second; the real slack_sdk/bolt and python-telegram-bot against the fakes,
which answer 429 past the documented limits. Prints, per platform: the time from the burst to the
last reply, each answer's time to its reply (p50/p95), the calls made by method, the calls refused
(429) and how many answers streamed or showed a draft first.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.fakes.slack_api import FakeSlack  # noqa: E402
from tests.fakes.telegram_api import FakeBotAPI  # noqa: E402
from tests.helpers import telegram_harness  # noqa: E402
from tests.helpers.conversation import QUESTION, route_to  # noqa: E402
from tests.helpers.slack_harness import mention_event, running  # noqa: E402
from tests.helpers.telegram_harness import ANN, bot_settings, mention  # noqa: E402
from threadsage.adapters.knowledge import open_knowledge_base  # noqa: E402
from threadsage.ingestion.pipeline import Ingestor  # noqa: E402
from threadsage.settings.environment import Settings  # noqa: E402

ANSWER = "Premium economy is allowed for flights of six hours or more [1], booked through TripDesk [1]."
MODEL = {"OPENAI_API_KEY": "sk-bench", "THREADSAGE_LLM_TIMEOUT": 30, "THREADSAGE_LLM_RETRIES": 0}


def model() -> FakeOpenAI:
    llm = FakeOpenAI(tokens_per_second=20).start()
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["answer"] = {"answer": ANSWER, "used": [1]}
    return llm


def report(name: str, began: float, done: dict[int, float], calls: Counter[str], refused: int, shown: int) -> None:
    times = sorted(t - began for t in done.values())
    p95 = times[max(0, int(len(times) * 0.95) - 1)]
    print(f"\n{name}: {len(done)} answers; last at {times[-1]:.1f} s;", end=" ")
    print(f"p50 {statistics.median(times):.1f} s, p95 {p95:.1f} s")
    print(f"  refused (429): {refused}; streamed or drafted first: {shown}")
    print("  calls: " + ", ".join(f"{method} {n}" for method, n in calls.most_common()))


async def slack(kb, answers: int, places: int, scratch: Path) -> None:
    fake, llm = FakeSlack().start(), model()
    channels = [f"C0LOAD{n:04d}" for n in range(places)]
    async with running(scratch / "slack", kb, fake=fake, OPENAI_BASE_URL=llm.base_url, **MODEL) as harness:
        began, asked = time.monotonic(), []
        for n in range(answers):
            event = {**mention_event(QUESTION, user=f"U0LOAD{n:04d}"), "channel": channels[n % places]}
            asked.append((event["channel"], event["ts"]))
            await harness.event(event)
        done: dict[int, float] = {}
        while len(done) < answers:
            for n, (channel, ts) in enumerate(asked):
                if n not in done and any(
                    m.get("metadata", {}).get("event_type") == "threadsage_reply"
                    for m in fake.current(channel, ts)
                    if m["ts"] != ts
                ):
                    done[n] = time.monotonic()
            await asyncio.sleep(0.05)
        await harness.settle()
    calls = Counter(name for name, _ in fake.calls if name.startswith(("chat.", "reactions.")))
    report("Slack", began, done, calls, len(fake.rate_limited()), len(fake.streams))
    fake.stop()
    llm.stop()


async def telegram(kb, answers: int, places: int, scratch: Path) -> None:
    fake, llm = await FakeBotAPI(telegram_harness.TOKEN).start(), model()
    groups = [{"id": -1001000000000 - n, "title": f"Team {n}", "type": "supergroup"} for n in range(places)]
    settings = bot_settings(scratch / "telegram", fake, OPENAI_BASE_URL=llm.base_url, **MODEL)
    async with telegram_harness.running(settings, kb):
        began = time.monotonic()
        for n in range(answers):
            fake.say(groups[n % places], {**ANN, "id": ANN["id"] + n}, mention(QUESTION))
        done: dict[int, float] = {}
        while len(done) < answers:
            sent = [m for group in groups for m in fake.sent(group["id"]) if m.get("reply_markup")]
            for message in sent:
                key = message["reply_to_message"]["message_id"]
                done.setdefault(key, time.monotonic())
            await asyncio.sleep(0.05)
    calls = Counter(call.method for call in fake.calls if call.method.startswith(("send", "edit")))
    drafted = len([c for c in fake.calls_of("sendMessage") if "reply_markup" not in c])
    report("Telegram", began, done, calls, len(fake.flood_waits()), drafted)
    await fake.stop()
    llm.stop()


async def main(answers: int, places: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "kb"
        settings = Settings(THREADSAGE_DATA_DIR=data, THREADSAGE_EMBEDDINGS="none", _env_file=None)
        kb = open_knowledge_base(settings)
        Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([ROOT / "demo" / "handbook"])
        await slack(kb, answers, places, Path(scratch))
        await telegram(kb, answers, places, Path(scratch))
        kb.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=50)
    parser.add_argument("--places", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main(args.answers, args.places))
