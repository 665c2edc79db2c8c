"""`threadsage` as operators run it: a real process, its HTTP port, and a clean stop by signal."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from tests.fakes.slack_api import BOT_USER, event_body, signed_headers

# Variables of ours that the test process may carry and a served process must not inherit.
OURS = ("TELEGRAM_", "THREADSAGE_", "OPENAI_", "DATABASE_", "MILVUS_", "SLACK_", "REDIS_", "LANGSMITH_")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Served:
    process: subprocess.Popen
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def healthy(self, http: aiohttp.ClientSession, timeout: float = 60) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            try:
                async with http.get(f"{self.url}/healthz") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
        raise AssertionError(f"no /healthz on port {self.port}")

    async def mention(self, http: aiohttp.ClientSession, secret: str, text: str, ts: str = "1710000000.000001") -> None:
        """A signed Slack app_mention, as Slack posts it."""
        body = event_body(
            {"type": "app_mention", "user": "U1", "text": f"<@{BOT_USER}> {text}", "ts": ts, "channel": "C1", "event_ts": ts},
            f"Ev-{ts}",
        )
        headers = {"Content-Type": "application/json", **signed_headers(secret, body)}
        async with http.post(f"{self.url}/slack/events", data=body, headers=headers) as response:
            assert response.status == 200

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> tuple[int, str]:
        """Signal it and wait: (exit code, what it printed)."""
        self.process.send_signal(sig)
        output, _ = self.process.communicate(timeout=60)
        return self.process.returncode, output


def serve(args: list[str], env: dict[str, str], cwd: Path) -> Served:
    """Start `threadsage ARGS` with only `env` of our variables; stdout and stderr together."""
    port = free_port()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(OURS)}
    process = subprocess.Popen(
        [sys.executable, "-m", "threadsage.cli", *args],
        env={**clean, "THREADSAGE_HTTP_PORT": str(port), **env},
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    return Served(process, port)
