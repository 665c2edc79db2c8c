"""A conversation's memory copied under another session key (Slack's "Share in channel" and
"Continue in a DM"): the copy continues it; a session with a conversation of its own keeps it."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.conversation import QUESTION, service
from threadsage.chat import ReplyKind, Turn, session_config


async def test_a_copied_conversation_continues_and_an_existing_one_is_kept(
    tmp_path: Path, pg_url: str, handbook_kb
) -> None:
    async with service(tmp_path, pg_url, handbook_kb) as chat:  # the Postgres checkpointer, as deployed
        [answer] = await chat.handle(Turn("test", "private", "U1", "m1", text=QUESTION))
        assert answer.kind is ReplyKind.ANSWER
        assert await chat.copy_session("private", "shared")
        copied = (await chat.graph.aget_state(session_config("shared"))).values
        assert copied["question"] == QUESTION and copied["messages"]
        [follow_up] = await chat.handle(Turn("test", "shared", "U2", "m2", text="and for shorter flights?"))
        assert follow_up.kind is ReplyKind.ANSWER

        await chat.handle(Turn("test", "other", "U3", "m3", text="What is the rate limit per API key?"))
        assert not await chat.copy_session("private", "other")  # its own conversation stays
        assert not await chat.copy_session("nothing-here", "fresh")
        assert not await chat.has_conversation("fresh")
