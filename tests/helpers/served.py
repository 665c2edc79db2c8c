"""`threadsage` as operators run it: a real process, its HTTP port, and a clean stop by signal."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_api import BOT_USER, FakeSlack, event_body, signed_headers

# Variables of ours that the test process may carry and a served process must not inherit.
OURS = ("TELEGRAM_", "THREADSAGE_", "OPENAI_", "DATABASE_", "MILVUS_", "SLACK_", "REDIS_", "LANGSMITH_")


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"process exited with {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port}")


@contextmanager
def milvus_server(data: Path, documents: Path | None = None) -> Iterator[str]:
    """A Milvus Lite server (`python -m milvus_lite server`) with `documents` ingested, if given: its
    URI. Several processes cannot share a Milvus Lite file; they can share this server."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "milvus_lite", "server", "--data-dir", str(data), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, server)
        uri = f"http://127.0.0.1:{port}"
        clean = {k: v for k, v in os.environ.items() if not k.startswith(OURS)}
        if documents is not None:
            subprocess.run(
                [sys.executable, "-m", "threadsage.cli", "ingest", str(documents)],
                env={**clean, "MILVUS_URI": uri, "THREADSAGE_DATA_DIR": str(data / "app")},
                check=True,
                capture_output=True,
            )
        yield uri
    finally:
        server.terminate()
        server.wait(timeout=30)


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A port for a process to listen on. Below Linux's ephemeral range (32768–60999), where
    outgoing connections take their local ports: a port picked there is free now but may be taken
    by some client before the process binds it (seen: a served process exiting at start). Each
    pytest-xdist worker draws from its own part of the range: a port one worker found free is not
    handed to another's process before the first binds it."""
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    width = 12000 // count
    while True:
        port = 20000 + width * worker + random.randrange(width)
        if port in _HANDED_OUT:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        _HANDED_OUT.add(port)
        return port


async def answers_ok(
    http: aiohttp.ClientSession, url: str, exited: Callable[[], int | None], timeout: float, every: float = 0.1
) -> bool:
    """Whether `url` answers 200 within `timeout` seconds, asked every `every`; the process serving
    it exiting first (`exited()`: its code, else None) fails the test."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if (code := exited()) is not None:
            raise AssertionError(f"the process serving {url} exited with {code}")
        try:
            async with http.get(url) as response:
                if response.status == 200:
                    return True
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(every)
    return False


@dataclass
class Served:
    process: subprocess.Popen
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def healthy(self, http: aiohttp.ClientSession, timeout: float = 60) -> None:
        if not await answers_ok(http, f"{self.url}/healthz", self.process.poll, timeout):
            raise AssertionError(f"no /healthz on port {self.port}")

    async def ready(self, http: aiohttp.ClientSession, timeout: float = 60) -> None:
        """Until /readyz says 200 (a front-end reaches Redis; a worker takes turns)."""
        await self.healthy(http, timeout)
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            async with http.get(f"{self.url}/readyz") as response:
                if response.status == 200:
                    return
            await asyncio.sleep(0.1)
        raise AssertionError(f"port {self.port} never became ready")

    async def mention(self, http: aiohttp.ClientSession, secret: str, text: str, **where: Any) -> int:
        """`post_mention` to this process (`ts`, `thread_ts`, `retry` as there)."""
        return await post_mention(http, self.url, secret, text, **where)

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> tuple[int, str]:
        """Signal it and wait: (exit code, what it printed)."""
        self.process.send_signal(sig)
        output, _ = self.process.communicate(timeout=60)
        return self.process.returncode, output


def slack_with_model(data: Path, slack: FakeSlack, llm: FakeOpenAI, signing_secret: str) -> dict[str, str]:
    """The variables of a process that answers the fake Slack with the fake model, logging as text
    (the tests read its output); a test adds what it is about."""
    return {
        "THREADSAGE_DATA_DIR": str(data),
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": signing_secret,
        "SLACK_API_URL": slack.api_url,
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": llm.base_url,
        "THREADSAGE_LOG_FORMAT": "text",
    }


def serve(args: list[str], env: dict[str, str], cwd: Path) -> Served:
    """Start `threadsage ARGS` with only `env` of our variables; stdout and stderr together.
    PYTHONPATH is made absolute: the process runs in `cwd`, where a relative one (`PYTHONPATH=.`)
    would name nothing and `threadsage` would come from the virtualenv's install (another checkout)."""
    port = free_port()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(OURS)}
    if clean.get("PYTHONPATH"):
        clean["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in clean["PYTHONPATH"].split(os.pathsep))
    process = subprocess.Popen(
        [sys.executable, "-m", "threadsage.cli", *args],
        env={**clean, "THREADSAGE_HTTP_PORT": str(port), **env},
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    return Served(process, port)


async def post_mention(
    http: aiohttp.ClientSession,
    url: str,
    secret: str,
    text: str,
    ts: str = "1710000000.000001",
    thread_ts: str | None = None,
    retry: int = 0,
    channel: str = "C1",
    user: str = "U1",
) -> int:
    """A signed Slack app_mention posted to the front-end at `url`, as Slack posts it (or re-posts
    it: `retry`); the status."""
    event = {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT_USER}> {text}",
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    body = event_body(event, f"Ev-{ts}")
    headers = {"Content-Type": "application/json", **signed_headers(secret, body)}
    if retry:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_error"}
    async with http.post(f"{url}/slack/events", data=body, headers=headers) as response:
        return response.status
