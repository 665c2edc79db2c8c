"""An `ask` over MCP against the same question in the terminal: time and answer.

    .venv/bin/python bench/mcp_ask.py [--runs 3]

The embedded default (`make run`) over the demo handbook, one process: the terminal's way — the
turn driven through the chat service by `run_shown`, as `threadsage chat` drives it — and the MCP
server's — the official SDK's client calling `ask` over Streamable HTTP on localhost, one client
session for all calls (an editor keeps its connection). Each question is asked in a conversation
of its own on both sides, --runs times; the table gives the median and p95 of each side (ms), the
difference, and how many answers were the same text.
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
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402
from mcp.client.client import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from threadsage.adapters.knowledge import open_knowledge_base  # noqa: E402
from threadsage.app.runtime import open_chat_service  # noqa: E402
from threadsage.bots.mcp import mcp_endpoint  # noqa: E402
from threadsage.chat.showing import Collecting, run_shown  # noqa: E402
from threadsage.chat.turns import Turn  # noqa: E402
from threadsage.http.thread import http_server  # noqa: E402
from threadsage.ingestion.pipeline import Ingestor  # noqa: E402
from threadsage.settings.environment import Settings  # noqa: E402

TOKEN = "bench-token-0123456789abcdefgh"
QUESTIONS = [
    "How much annual leave do contractors get?",
    "How do I reset my password?",
    "What is the rate limit per API key?",
    "Who approves expenses over 500 euros?",
    "How do I connect to the VPN?",
    "What should I do if my laptop is stolen?",
    "How long is parental leave?",
    "When are deploys frozen?",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


async def main(runs: int) -> None:
    data = Path(tempfile.mkdtemp(prefix="mcp-bench-"))
    settings = Settings(
        THREADSAGE_DATA_DIR=data,
        MILVUS_URI=None,
        DATABASE_URL=None,
        OPENAI_API_KEY=None,
        THREADSAGE_MCP_TOKENS=json.dumps({TOKEN: ["*"]}),
        rate_limit_per_minute=1000,  # the same two askers, dozens of questions a minute
        THREADSAGE_HTTP_PORT=free_port(),
        _env_file=None,
    )
    kb = open_knowledge_base(settings)
    Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([ROOT / "demo" / "handbook"])
    terminal: list[float] = []
    mcp_times: list[float] = []
    same = 0
    async with open_chat_service(settings, kb) as chat:
        served = mcp_endpoint(settings, chat, kb, asyncio.Event())
        async with (
            http_server(settings, served.routes, None, served.running),
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http,
            Client(streamable_http_client(f"http://127.0.0.1:{settings.http_port}/mcp", http_client=http)) as client,
        ):
            for _ in range(runs):
                for question in QUESTIONS:
                    key = f"terminal:local:{uuid.uuid4().hex}:-"
                    started = time.perf_counter()
                    replies = await run_shown(
                        chat, Turn("terminal", key, "me", uuid.uuid4().hex, text=question), Collecting()
                    )
                    terminal.append((time.perf_counter() - started) * 1000)
                    started = time.perf_counter()
                    result = await client.call_tool("ask", {"question": question})
                    mcp_times.append((time.perf_counter() - started) * 1000)
                    assert result.structured_content is not None, result.content
                    same += result.structured_content["text"] == "\n\n".join(r.text for r in replies)
    kb.close()
    print(f"{len(QUESTIONS)} questions × {runs} runs, the embedded default over the demo handbook\n")
    print("| way | median ms | p95 ms |")
    print("|---|---|---|")
    print(f"| terminal (`run_shown` on the chat service) | {statistics.median(terminal):.0f} | {p95(terminal):.0f} |")
    print(f"| MCP `ask` over HTTP (SDK client) | {statistics.median(mcp_times):.0f} | {p95(mcp_times):.0f} |")
    differences = [m - t for m, t in zip(mcp_times, terminal, strict=True)]
    print(
        f"\nMCP − terminal, per question: median {statistics.median(differences):.0f} ms, p95 {p95(differences):.0f} ms"
    )
    print(f"same answer text: {same}/{len(terminal)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    asyncio.run(main(parser.parse_args().runs))
