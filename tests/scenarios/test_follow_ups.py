"""Follow-ups on the GitLab anaphora questions: the previous user turn, then "and for the next
one?". The thread's memory must carry the topic; the same question in a fresh thread cannot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from threadsage.app.runtime import open_chat_service
from threadsage.chat import Turn
from threadsage.settings.environment import Settings

pytestmark = pytest.mark.slow  # the GitLab corpus and its anaphora questions


async def test_anaphora_follow_ups_cite_the_gold_file(tmp_path: Path, eval_dir: Path, gitlab_kb) -> None:
    rows = [
        json.loads(line)
        for line in (eval_dir / "gitlab-handbook" / "questions" / "contextual_anaphora.jsonl").read_text().splitlines()
    ]
    settings = Settings(THREADSAGE_DATA_DIR=tmp_path, DATABASE_URL=None, OPENAI_API_KEY=None, _env_file=None)
    with_memory = without = 0
    async with open_chat_service(settings, kb=gitlab_kb) as chat:
        for i, row in enumerate(rows):
            gold = {path for entry in row["retrieval"][1:] for path in entry}  # [0] is a decoy
            thread = f"eval:gitlab:anaphora:{i}"
            asker = f"U{i}"  # one person per conversation: the rate limit is per person
            await chat.handle(Turn("test", thread, asker, f"{i}-context", text=row["context"]))
            [reply] = await chat.handle(Turn("test", thread, asker, f"{i}-question", text=row["question"]))
            with_memory += any(c["path"] in gold for c in reply.citations)
            [fresh] = await chat.handle(Turn("test", f"{thread}:fresh", f"V{i}", f"{i}-fresh", text=row["question"]))
            without += any(c["path"] in gold for c in fresh.citations)
    assert len(rows) == 25
    assert with_memory >= 0.7 * len(rows), (with_memory, without)
    assert without <= 0.3 * len(rows), (with_memory, without)
