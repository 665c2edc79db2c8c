"""`threadsage run` with a Slack token, as an operator runs it: a real process serving the Events
API over HTTP, stopped with SIGTERM after answering."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from tests.fakes.slack_api import FakeSlack
from tests.helpers.locations import HANDBOOK
from tests.helpers.served import serve

SECRET = "0123456789abcdef0123456789abcdef"


async def test_slack_http_mode_process_answers_and_stops_cleanly(tmp_path: Path) -> None:
    fake = FakeSlack().start()
    env = {
        "THREADSAGE_DATA_DIR": str(tmp_path / "data"),
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": fake.api_url,
    }
    served = serve(["run", "--demo", str(HANDBOOK)], env, tmp_path)
    try:
        async with aiohttp.ClientSession() as http:
            await served.healthy(http)
            assert await served.mention(http, SECRET, "What is the rate limit per API key?") == 200
            [answer] = await fake.wait_for("chat.postMessage", timeout=60)
            assert answer["thread_ts"] == "1710000000.000001" and "api-style-guide" in str(answer["blocks"])
        code, output = served.stop()
        assert code == 0, output[-3000:]
        assert "knowledge base was empty; ingested" in output and "Traceback" not in output
    finally:
        if served.process.poll() is None:
            served.process.kill()
        fake.stop()
