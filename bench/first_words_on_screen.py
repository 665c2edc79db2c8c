"""Time from a question to the first words of its answer on screen, in Slack and Telegram.

    .venv/bin/python bench/first_words_on_screen.py [--runs 5] [--first-token 1.0] [--tokens-per-second 30]
    .venv/bin/python bench/first_words_on_screen.py --model real [--runs 2]

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

`--model real`: llama-cpp-python's server with SmolLM2-135M (`make model-server`) behind the recording
proxy of tests/helpers/model_server.py, which answers the router's call itself (FACT_LOOKUP: one
answer call a turn, where the tiny model would route as it likes) and times the answer call's
arrival and its own first token, the goal's "first token" for that turn.
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
from tests.helpers.model_server import MODEL_NAME, ModelServer, running_model_server  # noqa: E402
from tests.helpers.telegram_harness import ANN, GROUP, TOKEN, TRAVEL, bot_settings, mention, private  # noqa: E402
from threadsage.adapters.knowledge import open_knowledge_base  # noqa: E402
from threadsage.bots.replies import STEPS  # noqa: E402
from threadsage.i18n import say  # noqa: E402
from threadsage.ingestion.pipeline import Ingestor  # noqa: E402
from threadsage.settings.environment import Settings  # noqa: E402

DM = "D222"
POLL = 0.002  # seconds between two looks at what the fake platform was given


ANSWER = (
    "Premium economy is allowed for flights of six hours or more [1]; book it through TripDesk with your "
    "manager's approval, and keep the receipt for the expense report [1]."
)
Times = dict[str, list[tuple[float, float, float]]]  # surface → (to the answer's call, to the first words, its TTFT)


class Model:
    """The model server a run talks to: its settings, and the answer calls it has seen."""

    def __init__(self, fake: FakeOpenAI | None = None, real: ModelServer | None = None, first_token: float = 0.0):
        self.fake, self.real, self.first_token = fake, real, first_token

    @property
    def settings(self) -> dict[str, Any]:
        url = self.fake.base_url if self.fake is not None else self.real.base_url  # type: ignore[union-attr]
        named = {"THREADSAGE_CHAT_MODEL": MODEL_NAME} if self.real is not None else {}
        return {
            "OPENAI_API_KEY": "sk-bench",
            "OPENAI_BASE_URL": url,
            "THREADSAGE_RATE_LIMIT_PER_MINUTE": 10_000,
            **named,
        }

    def answer_calls(self) -> list[tuple[float, float]]:
        """(when it arrived, its own time to the first token) of each answer call so far."""
        if self.fake is not None:
            return [(0.0, self.first_token) for path, body in list(self.fake.requests) if is_answer(path, body)]
        assert self.real is not None
        return [
            (e.started, e.first_token if e.first_token is not None else e.seconds)
            for e in list(self.real.chat_exchanges())
            if is_answer(e.path, e.body)
        ]


def is_answer(path: str, body: dict[str, Any]) -> bool:
    return path.endswith("/completions") and kind_of(body) == "answer"


async def until(found: Callable[[], bool], timeout: float = 120.0) -> float:
    """The time at which `found()` first holds (`time.monotonic`, the proxy's clock)."""
    deadline = time.monotonic() + timeout
    while not found():
        if time.monotonic() > deadline:
            raise TimeoutError("no words arrived")
        await asyncio.sleep(POLL)
    return time.monotonic()


async def timed(
    model: Model, ask: Callable[[], Awaitable[Any]], shown: Callable[[], bool]
) -> tuple[float, float, float]:
    """From asking: the time until the answer's model call arrives, until the first words show, and
    that call's own time to its first token."""
    before = len(model.answer_calls())
    start = time.monotonic()
    await ask()
    answer_call = asyncio.create_task(until(lambda: len(model.answer_calls()) > before))
    words = await until(shown)
    arrived = await answer_call
    if model.real is not None:  # the proxy saw it arrive, and times its first token once it streams
        await until(lambda: model.answer_calls()[before][1] > 0)
        arrived = model.answer_calls()[before][0]
    return arrived - start, words - start, model.answer_calls()[before][1]


async def slack(kb: Any, scratch: Path, runs: int, llm: Model) -> Times:
    fake = FakeSlack().start()
    steps = {say(key) for key in STEPS.values()}
    times: Times = {"Slack thread (mention)": [], "Slack DM": [], "Slack AI panel": []}
    model = llm.settings
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


async def telegram(kb: Any, scratch: Path, runs: int, llm: Model) -> Times:
    fake = await FakeBotAPI(TOKEN).start()
    times: Times = {"Telegram private chat": [], "Telegram group": []}
    chat = private(ANN)
    model = llm.settings
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


async def measured(model: Model, runs: int) -> Times:
    with tempfile.TemporaryDirectory() as scratch:
        settings = Settings(THREADSAGE_DATA_DIR=Path(scratch) / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
        kb = open_knowledge_base(settings)
        Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([ROOT / "demo" / "handbook"])
        times = await slack(kb, Path(scratch), runs, model) | await telegram(kb, Path(scratch), runs, model)
        kb.close()
    return times


async def main(runs: int, first_token: float, tokens_per_second: float, real: bool) -> None:
    if real:
        async with running_model_server() as server:
            server.intent = "FACT_LOOKUP"  # one answer call a turn: no self-check that asks again
            times = await measured(Model(real=server), runs)
        print(f"model: llama-cpp-python's server, {MODEL_NAME}; the router's call answered by the proxy; {runs} runs")
    else:
        llm = FakeOpenAI(first_token_seconds=first_token, tokens_per_second=tokens_per_second).start()
        llm.script["RouteDecision"] = route_to("HOW_TO")
        llm.script["answer"] = {"answer": ANSWER, "used": [1]}
        times = await measured(Model(fake=llm, first_token=first_token), runs)
        llm.stop()
        print(f"model: first token {first_token:.1f} s after each request, {tokens_per_second:g} tokens/s; {runs} runs")
    columns = ["surface", "before the answer's call, p50 (s)", "its first token, p50 (s)", "first words, p50 (s)"]
    print("| " + " | ".join([*columns, "max (s)", "vs goal, p50 (ms)"]) + " |")
    print("|---|---|---|---|---|---|")
    for name, turns in times.items():
        before = statistics.median(b for b, _, _ in turns)
        ttft = statistics.median(t for _, _, t in turns)
        words = statistics.median(w for _, w, _ in turns)
        over = statistics.median(w - (b + t + 0.3) for b, w, t in turns)  # the goal: before + TTFT + 300 ms
        latest = max(w for _, w, _ in turns)
        print(f"| {name} | {before:.3f} | {ttft:.3f} | {words:.3f} | {latest:.3f} | {1000 * over:.0f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--first-token", type=float, default=1.0)
    parser.add_argument("--tokens-per-second", type=float, default=30.0)
    parser.add_argument("--model", choices=["fake", "real"], default="fake")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.first_token, arguments.tokens_per_second, arguments.model == "real"))
