"""The bot against a real model server: twelve turns over the demo handbook, of every kind.

llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct (`bash scripts/model-server.sh`
installs it), behind the recording proxy of `tests/support/model_server.py`. The tiny model's answers
are often wrong; what this counts is how the bot behaves on a real server: apologies, turns over
60 s, requests without a token limit the server honours, requests that ran to the limit (runaways),
requests the bot abandoned, and answers that cite the documents.

    .venv/bin/python bench/real_model.py [--timeout 60]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.model_server import MODEL_NAME, running_model_server
from threadsage.adapters.knowledge import open_knowledge_base
from threadsage.app.runtime import open_chat_service
from threadsage.chat import ChatService, ClarificationAnswer, Reply, ReplyKind, Turn
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings

HANDBOOK = Path(__file__).resolve().parents[1] / "examples" / "handbook"
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


async def run(timeout: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        kb_settings = Settings(THREADSAGE_DATA_DIR=Path(tmp) / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
        kb = open_knowledge_base(kb_settings)
        assert Ingestor(kb, kb_settings.chunk_chars, kb_settings.chunk_overlap).ingest_paths([HANDBOOK]).ok
        async with running_model_server() as server:
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
                await talk(chat, server, timeout)
        kb.close()


async def talk(chat: ChatService, server, timeout: float) -> None:
    pending: dict[str, str] = {}
    rows = []
    for n, (session, said) in enumerate(SCRIPT, start=1):
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
        rows.append((n, said[:40], kind, text, seconds, len(calls), f"{unbounded}/{runaway}", cites))
        if n == 1:
            print("| # | said | reply | text | s | model calls | unbounded/ran to limit | citations |")
            print("|---|---|---|---|---|---|---|---|")
        print("| {} | {} | {} | {} | {:.1f} | {} | {} | {} |".format(*rows[-1]), flush=True)
    chats = server.chat_exchanges()
    print()
    print(
        f"turns: {len(rows)}; apologies: {sum(r[2] == 'apology' for r in rows)}; "
        f"turns over {timeout:.0f} s: {sum(r[4] > timeout for r in rows)}; model requests: {len(chats)}; "
        f"without a token limit: {sum(e.token_limit is None for e in chats)}; "
        f"ran to the limit: {sum(e.finish_reason == 'length' for e in chats)}; "
        f"abandoned: {sum(e.abandoned for e in chats)}; HTTP errors: {sum(e.status >= 400 for e in chats)}; "
        f"answers with citations: {sum(1 for r in rows if r[2] == 'answer' and r[7] not in ('', '0'))}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=60, help="THREADSAGE_LLM_TIMEOUT, and a turn's limit")
    asyncio.run(run(parser.parse_args().timeout))


if __name__ == "__main__":
    main()
