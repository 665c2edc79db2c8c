"""Slack ack latency while many conversations are in flight.

    .venv/bin/python bench/slack_ack.py [--conversations 50] [--events 400] [--latency 0.3]

The real bolt app behind uvicorn, the real slack_sdk client against the fake Slack Web API, the
language-model back-end against the fake OpenAI server (each model call takes --latency seconds),
the demo handbook in Milvus Lite. First --conversations mentions are sent at once (so that many
turns are in flight), then --events more signed events while they run; the time from sending a
request to its HTTP 200 is the ack latency. Prints p50/p95/p99/max.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import uvicorn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.fakes.slack_api import BOT_USER, FakeSlack, event_body, signed_headers  # noqa: E402
from threadsage.adapters.ingest import Ingestor  # noqa: E402
from threadsage.adapters.knowledge import KnowledgeBase  # noqa: E402
from threadsage.bots.slack import SlackBot  # noqa: E402
from threadsage.bots.tokens import Signer, load_secret  # noqa: E402
from threadsage.config import Settings  # noqa: E402
from threadsage.memory.coordination import LocalCoordinator  # noqa: E402
from threadsage.runtime import open_chat_service  # noqa: E402
from threadsage.server import create_app  # noqa: E402

SECRET = "bench-signing-secret-0123456789ab"


async def main(conversations: int, events: int, latency: float) -> None:
    slack, llm = FakeSlack().start(), FakeOpenAI(latency=latency).start()
    llm.script["RouteDecision"] = {"intent": "HOW_TO", "confidence": 0.9, "reasoning": "bench"}
    with tempfile.TemporaryDirectory() as scratch:
        settings = Settings(
            THREADSAGE_DATA_DIR=Path(scratch),
            SLACK_BOT_TOKEN="xoxb-bench",
            SLACK_SIGNING_SECRET=SECRET,
            SLACK_API_URL=slack.api_url,
            OPENAI_API_KEY="sk-bench",
            OPENAI_BASE_URL=llm.base_url,
            THREADSAGE_RATE_LIMIT_PER_MINUTE=100_000,
            _env_file=None,
        )
        kb = KnowledgeBase.open(settings)
        Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([ROOT / "examples" / "handbook"])
        coordinator = LocalCoordinator()
        async with (
            open_chat_service(settings, kb, coordinator) as chat,
            SlackBot(settings, chat, Signer(load_secret(settings)), coordinator).running() as bot,
        ):
            server = uvicorn.Server(
                uvicorn.Config(create_app([bot.route()]), host="127.0.0.1", port=0, log_level="warning", lifespan="off")
            )
            serving = asyncio.create_task(server.serve())
            while not server.started:  # noqa: ASYNC110 - uvicorn sets a flag, it has no event to wait on
                await asyncio.sleep(0.01)
            url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/slack/events"
            in_flight: list[int] = []

            async def watch() -> None:  # turns in flight while the load runs
                while True:
                    in_flight.append(bot.tasks.pending)
                    await asyncio.sleep(0.05)

            watcher = asyncio.create_task(watch())
            # The load comes from another process, as Slack's would: its own work must not
            # share this event loop with the acknowledgements it measures.
            client = await asyncio.create_subprocess_exec(
                sys.executable, __file__, "--client", url,
                "--conversations", str(conversations), "--events", str(events),
                stdout=asyncio.subprocess.PIPE,
            )  # fmt: skip
            burst, latencies = json.loads((await client.communicate())[0])
            watcher.cancel()
            await bot.tasks.drain(300)
            server.should_exit = True
            await serving
        kb.close()
    slack.stop()
    llm.stop()
    print("| events | sent | turns in flight | model latency | ack p50 | p95 | p99 | max |")
    print("|---|---|---|---|---|---|---|---|")
    for name, values, flight in (
        (f"first {conversations}", burst, ""),
        (f"next {events}", latencies, f"up to {max(in_flight)}"),
    ):
        q = statistics.quantiles(values, n=100)
        how = "all at once" if values is burst else "one by one, 5 ms apart"
        print(
            f"| {name} | {how} | {flight} | {latency * 1000:.0f} ms | {q[49]:.1f} ms | {q[94]:.1f} ms"
            f" | {q[98]:.1f} ms | {max(values):.1f} ms |"
        )
    answered = len([m for m in slack.posted() if m.get("thread_ts")])
    print(f"\nanswers posted: {answered} of {len(burst) + len(latencies)}")


async def load(url: str, conversations: int, events: int) -> None:
    """The client process: signed mentions, all at once first, then one every 5 ms."""
    latencies: list[float] = []
    async with aiohttp.ClientSession() as http:

        async def send(n: int) -> None:
            ts = f"1710000000.{n:06d}"
            body = event_body(
                {"type": "app_mention", "user": f"U{n % 97}",
                 "text": f"<@{BOT_USER}> How do I request a security exception? ({n})",
                 "ts": ts, "channel": f"C{n % 13}", "event_ts": ts},
                f"Ev{n}",
            )  # fmt: skip
            headers = {"Content-Type": "application/json", **signed_headers(SECRET, body)}
            started = time.perf_counter()
            async with http.post(url, data=body, headers=headers) as response:
                assert response.status == 200
            latencies.append((time.perf_counter() - started) * 1000)

        await asyncio.gather(*(send(n) for n in range(conversations)))
        burst = latencies[:]
        latencies.clear()
        for n in range(conversations, conversations + events):
            await send(n)
            await asyncio.sleep(0.005)
    print(json.dumps([burst, latencies]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--events", type=int, default=400)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--client", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        asyncio.run(load(args.client, args.conversations, args.events))
    else:
        asyncio.run(main(args.conversations, args.events, args.latency))
