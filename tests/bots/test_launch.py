"""`threadsage slack` as an operator runs it: a real process serving the Events API over HTTP,
stopped with SIGTERM after answering."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp

from tests.conftest import HANDBOOK
from tests.fakes.slack_api import BOT_USER, FakeSlack, event_body, signed_headers

SECRET = "0123456789abcdef0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_slack_http_mode_process_answers_and_stops_cleanly(tmp_path: Path) -> None:
    fake = FakeSlack().start()
    port = free_port()
    env = {
        **os.environ,
        "THREADSAGE_DATA_DIR": str(tmp_path / "data"),
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": fake.api_url,
        "THREADSAGE_HTTP_PORT": str(port),
    }
    for name in ("DATABASE_URL", "OPENAI_API_KEY", "MILVUS_URI", "SLACK_APP_TOKEN", "TELEGRAM_BOT_TOKEN"):
        env.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "threadsage.cli", "run", "--demo", str(HANDBOOK)],
        env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(600):
                try:
                    async with http.get(f"http://127.0.0.1:{port}/healthz") as response:
                        if response.status == 200:
                            break
                except aiohttp.ClientError:
                    await asyncio.sleep(0.1)
            body = event_body({"type": "app_mention", "user": "U1", "text": f"<@{BOT_USER}> What is the rate limit per API key?",
                               "ts": "1710000000.000001", "channel": "C1", "event_ts": "1710000000.000001"}, "Ev1")  # fmt: skip
            headers = {"Content-Type": "application/json", **signed_headers(SECRET, body)}
            async with http.post(f"http://127.0.0.1:{port}/slack/events", data=body, headers=headers) as response:
                assert response.status == 200
            [answer] = await fake.wait_for("chat.postMessage", timeout=60)
            assert answer["thread_ts"] == "1710000000.000001" and "api-style-guide" in str(answer["blocks"])
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=60)
        assert process.returncode == 0, output[-3000:]
        assert "knowledge base was empty; ingested" in output and "Traceback" not in output
    finally:
        if process.poll() is None:
            process.kill()
        fake.stop()
