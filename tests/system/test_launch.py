"""`threadsage run` as an operator runs it, with a Slack token or only MCP tokens: a real process
serving the Events API or the MCP server over HTTP, stopped with SIGTERM after answering."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

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


async def test_run_with_only_mcp_tokens_serves_the_mcp_server_and_stops_cleanly(tmp_path: Path) -> None:
    """No platform configured, an MCP token set: `threadsage run` serves /mcp (not the terminal
    chat), answers an editor's `ask` with its citations, and stops on SIGTERM."""
    token = "editor-token-0123456789abcdef"
    env = {"THREADSAGE_DATA_DIR": str(tmp_path / "data"), "THREADSAGE_MCP_TOKENS": json.dumps({token: ["*"]})}
    served = serve(["run", "--demo", str(HANDBOOK)], env, tmp_path)
    try:
        async with aiohttp.ClientSession() as http:
            await served.healthy(http)
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as client,
            Client(streamable_http_client(f"{served.url}/mcp", http_client=client)) as mcp,
        ):
            result = await mcp.call_tool("ask", {"question": "What is the rate limit per API key?"})
        assert not result.is_error and result.structured_content is not None
        assert result.structured_content["kind"] == "answer"
        assert any("api-style-guide" in c["source"] for c in result.structured_content["citations"])
        code, output = served.stop()
        assert code == 0, output[-3000:]
        assert "Traceback" not in output and token not in output
    finally:
        if served.process.poll() is None:
            served.process.kill()
