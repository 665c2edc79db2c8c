"""The bot against a real model server: twelve turns over the demo handbook, of every kind.

llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct (`bash scripts/model-server.sh`
installs it), behind the recording proxy of `tests/helpers/model_server.py`. The tiny model's answers
are often wrong; what this counts is how the bot behaves on a real server: apologies, turns over
60 s, requests without a token limit the server honours, requests that ran to the limit (runaways),
requests the bot abandoned, and answers that cite the documents. And where a turn's time goes: its
wall time against its model calls' own time (the union of the calls' spans as the proxy, in this
process, saw them: request received → reply passed on), the overhead being the rest (search,
checkpoints, the graph, the bot's own work; goal ≤ 10 % on the standard route), with the calls and
the tokens they generated, per turn and per route.

    .venv/bin/python bench/real_model.py [--timeout 60] [--intent HOW_TO --turns 3]

`--intent`: the proxy answers the router's call itself with this intent (HOW_TO: the standard route,
answer and judge), so that a route the tiny model seldom picks can be timed; its other calls are
the model's. `--turns N`: the script's first N turns only.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers.model_server import MODEL_NAME, Exchange, running_model_server
from threadsage.adapters.knowledge import open_knowledge_base
from threadsage.app.runtime import open_chat_service
from threadsage.chat import ChatService, ClarificationAnswer, Reply, ReplyKind, Turn
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings

HANDBOOK = Path(__file__).resolve().parents[1] / "demo" / "handbook"
# (session, what is said); "CLICK" answers the session's pending clarification with its first option.
SCRIPT = [
    ("a", "How many days of annual leave do employees get?"),
    ("a", "And contractors?"),
    ("b", "How do I reset my password?"),
    ("b", "CLICK"),
    ("c", "What is the hotel limit per night in Lisbon?"),
    ("d", "VPN 密码怎么重置？"),
    ("e", "Hi there, how are you?"),
    ("f", "What is the capital of Australia?"),
    ("g", "What is 17 * 23 + 4?"),
    ("h", "Compare the meal allowance in Lisbon and Toronto."),
    ("i", "How do I deploy Tidewater to production?"),
    ("j", "Thanks, that's all for now - bye!"),
]


async def run(timeout: float, intent: str | None, turns: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        kb_settings = Settings(THREADSAGE_DATA_DIR=Path(tmp) / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
        kb = open_knowledge_base(kb_settings)
        assert Ingestor(kb, kb_settings.chunk_chars, kb_settings.chunk_overlap).ingest_paths([HANDBOOK]).ok
        async with running_model_server() as server:
            server.intent = intent
            settings = Settings(
                THREADSAGE_DATA_DIR=Path(tmp) / "data",
                THREADSAGE_EMBEDDINGS="none",
                OPENAI_API_KEY="sk-local",
                OPENAI_BASE_URL=server.base_url,
                THREADSAGE_CHAT_MODEL=MODEL_NAME,
                THREADSAGE_LLM_TIMEOUT=timeout,
                DATABASE_URL=None,
                _env_file=None,
            )
            async with open_chat_service(settings, kb=kb) as chat:
                await talk(chat, server, timeout, SCRIPT[:turns])
        kb.close()


async def talk(chat: ChatService, server, timeout: float, script: list[tuple[str, str]]) -> None:
    pending: dict[str, str] = {}
    rows = []
    spent: list[tuple[str, float, float, int, int]] = []  # route, wall s, model s, calls, tokens
    for n, (session, said) in enumerate(script, start=1):
        key = f"bench:w:c:{session}"
        if said == "CLICK":
            if session not in pending:
                rows.append((n, said, "-", "no clarification to click", 0.0, 0, "", ""))
                print("| {} | {} | {} | {} | {:.1f} | {} | {} | {} |".format(*rows[-1]), flush=True)
                continue
            turn = Turn("bench", key, "U1", f"m{n}", answer=ClarificationAnswer(pending.pop(session), option=0))
        else:
            turn = Turn("bench", key, "U1", f"m{n}", text=said)
        first = len(server.exchanges)
        started = time.monotonic()
        replies: list[Reply] = await chat.handle(turn)
        seconds = time.monotonic() - started
        calls = server.chat_exchanges()[
            len([e for e in server.exchanges[:first] if e.path.endswith("/chat/completions")]) :
        ]
        reply = replies[0] if replies else None
        if reply is not None and reply.kind is ReplyKind.CLARIFICATION and reply.interrupt_id:
            pending[session] = reply.interrupt_id
        kind = "none" if reply is None else ("apology" if reply.fixed == "apology" else reply.kind.value)
        unbounded = sum(1 for e in calls if e.token_limit is None)
        runaway = sum(1 for e in calls if e.finish_reason == "length")
        text = "" if reply is None else " ".join(reply.text.split())[:70]
        cites = "" if reply is None else str(len(reply.citations))
        route = (reply.route if reply is not None else None) or "-"
        model, tokens = model_seconds(calls), sum(e.completion_tokens or 0 for e in calls)
        rows.append((n, said[:40], kind, text, seconds, len(calls), f"{unbounded}/{runaway}", cites))
        spent.append((route, seconds, model, len(calls), tokens))
        if n == 1:
            print(
                "| # | said | reply | text | s | model calls | unbounded/ran to limit | citations"
                " | route | model s | overhead | tokens |"
            )
            print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        print(
            "| {} | {} | {} | {} | {:.1f} | {} | {} | {} |".format(*rows[-1])
            + f" {route} | {model:.2f} | {overhead(seconds, model)} | {tokens} |",
            flush=True,
        )
    chats = server.chat_exchanges()
    print("\n| route | turns | model calls | tokens generated | wall | model calls' own | overhead |")
    print("|---|---|---|---|---|---|---|")
    for route in sorted({r[0] for r in spent}):
        mine = [r for r in spent if r[0] == route]
        wall, model = sum(r[1] for r in mine), sum(r[2] for r in mine)
        calls, tokens = sum(r[3] for r in mine), sum(r[4] for r in mine)
        print(
            f"| {route} | {len(mine)} | {calls} | {tokens} | {wall:.2f} s | {model:.2f} s | {overhead(wall, model)} |"
        )
    print()
    print(
        f"turns: {len(rows)}; apologies: {sum(r[2] == 'apology' for r in rows)}; "
        f"turns over {timeout:.0f} s: {sum(r[4] > timeout for r in rows)}; model requests: {len(chats)}; "
        f"without a token limit: {sum(e.token_limit is None for e in chats)}; "
        f"ran to the limit: {sum(e.finish_reason == 'length' for e in chats)}; "
        f"abandoned: {sum(e.abandoned for e in chats)}; HTTP errors: {sum(e.status >= 400 for e in chats)}; "
        f"answers with citations: {sum(1 for r in rows if r[2] == 'answer' and r[7] not in ('', '0'))}"
    )


def model_seconds(calls: list[Exchange]) -> float:
    """The time some model call of the turn was running: the union of their spans."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted((e.started, e.started + e.seconds) for e in calls):
        total += max(0.0, stop - max(start, end))
        end = max(end, stop)
    return total


def overhead(wall: float, model: float) -> str:
    return f"{(wall - model) * 1000:.0f} ms ({(wall - model) / model:+.1%})" if model else f"{wall * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=60, help="THREADSAGE_LLM_TIMEOUT, and a turn's limit")
    parser.add_argument("--intent", help="the route's intent, decided by the proxy instead of the model")
    parser.add_argument("--turns", type=int, default=len(SCRIPT), help="the script's first N turns")
    args = parser.parse_args()
    asyncio.run(run(args.timeout, args.intent, args.turns))


if __name__ == "__main__":
    main()
