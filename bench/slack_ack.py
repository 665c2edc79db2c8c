"""Slack ack latency while many conversations are in flight.

    .venv/bin/python bench/slack_ack.py [--conversations 200] [--events 400] [--latency 0.3] [--one-loop]

The real bolt app behind uvicorn served as `threadsage run` serves it (its own thread and event
loop, `threadsage.http.thread`; --one-loop: on the turns' loop instead), the real slack_sdk client
against the fake Slack Web API, the
language-model back-end against the fake OpenAI server (each model call takes --latency seconds),
the demo handbook in Milvus Lite. First --conversations mentions are sent at once (so that many
turns are in flight), then --events more signed events while they run; the time from sending a
request to its HTTP 200 is the ack latency. Prints p50/p95/p99/max.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

import uvicorn
from starlette.routing import Route

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.fakes.slack_api import BOT_USER, FakeSlack, event_body, signed_headers  # noqa: E402
from threadsage.adapters.knowledge import open_knowledge_base  # noqa: E402
from threadsage.app.runtime import open_chat_service  # noqa: E402
from threadsage.bots.slack import SlackBot  # noqa: E402
from threadsage.bots.tokens import Signer, load_secret  # noqa: E402
from threadsage.delivery.coordination import LocalCoordinator  # noqa: E402
from threadsage.http.server import create_app  # noqa: E402
from threadsage.http.thread import http_server  # noqa: E402
from threadsage.ingestion.pipeline import Ingestor  # noqa: E402
from threadsage.settings.environment import Settings  # noqa: E402

SECRET = "bench-signing-secret-0123456789ab"


async def main(conversations: int, events: int, latency: float, one_loop: bool) -> None:
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
            THREADSAGE_HTTP_PORT=free_port(),
            _env_file=None,
        )
        kb = open_knowledge_base(settings)
        Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([ROOT / "demo" / "handbook"])
        coordinator = LocalCoordinator()
        async with (
            open_chat_service(settings, kb, coordinator) as chat,
            SlackBot(
                settings, chat, coordinator, Signer(load_secret(settings, settings.data_dir)), receive=False
            ).running() as bot,
        ):
            serving = AsyncExitStack()
            if one_loop:
                await serving.enter_async_context(same_loop_server(settings, bot.route()))
            else:
                await serving.enter_async_context(http_server(settings, [bot.route()]))
            url = f"http://127.0.0.1:{settings.http_port}/slack/events"
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
            await serving.aclose()
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


@asynccontextmanager
async def same_loop_server(settings: Settings, route: Route) -> AsyncIterator[None]:
    """uvicorn on this (the turns') loop: how `threadsage run` served before `http_thread`."""
    config = uvicorn.Config(create_app([route]), port=settings.http_port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110 - uvicorn sets a flag, it has no event to wait on
        await asyncio.sleep(0.01)
    yield
    server.should_exit = True
    await serving


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def load(url: str, conversations: int, events: int) -> None:
    """The client process: signed mentions, all at once first, then one every 5 ms. Requests are
    signed and their connections opened beforehand, and written as raw bytes: what is timed is
    the server, not this client's own HTTP machinery (a burst of 200 through aiohttp spent about
    as long in the client as in the server)."""
    target = urlsplit(url)

    def request(n: int) -> bytes:
        ts = f"1710000000.{n:06d}"
        body = event_body(
            {"type": "app_mention", "user": f"U{n % 97}",
             "text": f"<@{BOT_USER}> How do I request a security exception? ({n})",
             "ts": ts, "channel": f"C{n % 13}", "event_ts": ts},
            f"Ev{n}",
        )  # fmt: skip
        headers = {"Host": target.netloc, "Content-Type": "application/json", "Content-Length": str(len(body))}
        headers |= signed_headers(SECRET, body)
        head = f"POST {target.path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        return (head + "\r\n").encode() + body

    async def connect() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection(target.hostname, target.port)

    async def exchange(connection: tuple[asyncio.StreamReader, asyncio.StreamWriter], data: bytes) -> float:
        reader, writer = connection
        started = time.perf_counter()
        writer.write(data)
        status = await reader.readline()
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        await reader.readexactly(length)
        assert b" 200 " in status, status
        return (time.perf_counter() - started) * 1000

    connections = [await connect() for _ in range(conversations)]
    requests = [request(n) for n in range(conversations)]
    burst = await asyncio.gather(*(exchange(c, r) for c, r in zip(connections, requests, strict=True)))
    latencies = []
    for n in range(conversations, conversations + events):
        latencies.append(await exchange(connections[n % conversations], request(n)))
        await asyncio.sleep(0.005)
    for _, writer in connections:
        writer.close()
    print(json.dumps([burst, latencies]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--events", type=int, default=400)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--one-loop", action="store_true", help="serve HTTP on the turns' event loop")
    parser.add_argument("--client", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        asyncio.run(load(args.client, args.conversations, args.events))
    else:
        asyncio.run(main(args.conversations, args.events, args.latency, args.one_loop))
