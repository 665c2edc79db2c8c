"""A scaled deployment for the system tests and bench/: the environment of `serve`, `worker` and
`run` processes sharing Redis, Postgres and a Milvus Lite server, the fakes they talk to, and what
they answered; afterwards every process is killed and its Redis keys are dropped."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
from redis.asyncio import Redis

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_api import FakeSlack
from tests.helpers.served import Served, serve, slack_with_model

SECRET = "0123456789abcdef0123456789abcdef"
QUESTION = "What is the rate limit per API key?"


class Stack:
    """One deployment: its environment, its processes, and the fakes it talks to."""

    def __init__(self, tmp_path: Path, env: dict[str, str], slack: FakeSlack, llm: FakeOpenAI) -> None:
        self.tmp_path = tmp_path
        self.env = env
        self.slack = slack
        self.llm = llm
        self.processes: list[Served] = []

    def start(self, command: str, **env: str) -> Served:
        served = serve([command], {**self.env, **env}, self.tmp_path)
        self.processes.append(served)
        return served

    def answers(self) -> list[dict]:
        return [m for m in self.slack.posted() if (m.get("metadata") or {}).get("event_type") == "threadsage_reply"]

    async def wait_for_answers(self, count: int, timeout: float = 90) -> list[dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.answers()) >= count:
                return self.answers()
            await asyncio.sleep(0.1)
        raise AssertionError(f"expected {count} answers, got {self.slack.posted()}\n{self.output()}")

    async def ready(self, http: aiohttp.ClientSession, *processes: Served) -> None:
        """Until each process serves /readyz with 200; what they printed if one does not."""
        for served in processes:
            try:
                await served.ready(http)
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{self.output()}") from None

    def output(self) -> str:
        """What every process printed (for a failure's message): running ones are stopped."""
        lines = []
        for served in self.processes:
            if served.process.poll() is None:
                served.process.kill()
            output, _ = served.process.communicate(timeout=30)
            lines.append(output[-3000:])
        return "\n---\n".join(lines)


@asynccontextmanager
async def deployed(tmp_path: Path, pg_url: str, milvus_uri: str) -> AsyncIterator[Stack]:
    """A deployment's fakes and environment (its processes are started by the test); afterwards
    every process still running is killed and its Redis keys are dropped."""
    slack = FakeSlack().start()
    llm = FakeOpenAI(latency=0.4).start()
    prefix = f"threadsage-test-{uuid.uuid4().hex[:8]}:"
    env = {
        **slack_with_model(tmp_path / "data", slack, llm, SECRET),
        "DATABASE_URL": pg_url,
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "THREADSAGE_REDIS_PREFIX": prefix,
        "MILVUS_URI": milvus_uri,
        "THREADSAGE_SECRET": "buttons-" + uuid.uuid4().hex,
        "THREADSAGE_TURN_TIMEOUT": "6",
        # Answers as new messages: these tests count and hold chat.postMessage; the placeholder a
        # redelivered turn takes over is tested in tests/bots/slack/test_progress.py.
        "THREADSAGE_SLACK_PROGRESS": "false",
    }
    deployment = Stack(tmp_path, env, slack, llm)
    try:
        yield deployment
    finally:
        for served in deployment.processes:
            if served.process.poll() is None:
                served.process.kill()
                served.process.wait(timeout=30)
        slack.stop()
        llm.stop()
        await drop_keys(prefix)


async def drop_keys(prefix: str, url: str = "redis://127.0.0.1:6379/0") -> None:
    redis = Redis.from_url(url)
    try:
        keys = [key async for key in redis.scan_iter(match=f"*{prefix}*")]
        if keys:
            await redis.delete(*keys)
    finally:
        await redis.aclose()
