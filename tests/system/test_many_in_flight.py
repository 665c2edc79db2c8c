"""Five hundred conversations in flight in one process, against one Milvus Lite knowledge base: every
turn ends with exactly one reply, and the run ends. (Under such load pymilvus' keep-alive pings
made Milvus Lite's in-process gRPC server close the channel with GOAWAY `too_many_pings`, and a
run hung: `threadsage/adapters/knowledge/milvus_lite.py`, CLIENT_GRPC_OPTIONS.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.helpers.locations import HANDBOOK
from threadsage.adapters.knowledge import open_knowledge_base
from threadsage.app.runtime import open_chat_service
from threadsage.chat import ReplyKind, Turn
from threadsage.ingestion.pipeline import Ingestor
from threadsage.settings.environment import Settings

IN_FLIGHT = 500
QUESTIONS = [
    "How do I rotate my VPN password?",
    "How many days of annual leave do I get?",
    "Which cabin class may I book for a long flight?",
    "What is the rate limit per API key?",
]


async def test_500_conversations_in_flight_all_finish_with_one_reply_each(tmp_path: Path) -> None:
    settings = Settings(
        THREADSAGE_DATA_DIR=tmp_path,
        THREADSAGE_EMBEDDINGS="none",
        DATABASE_URL=None,
        OPENAI_API_KEY=None,
        _env_file=None,
    )
    kb = open_knowledge_base(settings)  # this test's own: every turn's searches on one client and one server
    try:
        assert Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([HANDBOOK]).ok
        async with open_chat_service(settings, kb=kb) as chat:
            turns = [
                Turn("test", f"load:{n}", f"U{n}", f"m{n}", text=QUESTIONS[n % len(QUESTIONS)])
                for n in range(IN_FLIGHT)
            ]
            replies = await asyncio.wait_for(asyncio.gather(*(chat.handle(t) for t in turns)), timeout=300)
    finally:
        kb.close()
    assert [len(r) for r in replies] == [1] * IN_FLIGHT
    assert {r[0].kind for r in replies} <= {ReplyKind.ANSWER, ReplyKind.CLARIFICATION}
    # Load changes nothing: every copy of a question gets the reply the first copy got.
    for n, [reply] in enumerate(replies):
        assert (reply.kind, reply.text) == (replies[n % len(QUESTIONS)][0].kind, replies[n % len(QUESTIONS)][0].text)
