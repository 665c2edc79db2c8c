"""A worker killed at any step of a turn, its turn redelivered: exactly one reply, the one an
undisturbed run gives — never empty, never the thread's previous answer — and no model call
made again whose result had been saved.

The kill is exact and covers every boundary: the worker's checkpointer lets `lives` saves reach
Postgres and then no more (each save is one transaction, so a SIGKILL leaves it whole or absent),
and the run is cancelled there. Every route is killed after each of its saves; the worker that
takes the turn over is killed once more after its first save, and a third one finishes it, as a
queue redelivers a turn whose workers died. Real Postgres, the language-model back-end against a
fake model over HTTP.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAI, user_text
from threadsage.app.runtime import open_chat_service
from threadsage.chat import ChatService, ClarificationAnswer, Reply, ReplyKind, Turn
from threadsage.delivery.current import Delivery, current_delivery
from threadsage.graph.build import build_graph
from threadsage.memory.checkpoints import PostgresSaver
from threadsage.settings.environment import Settings

pytestmark = pytest.mark.slow  # every route killed after each of its saves

OPENING = "Is there a canteen?"  # answered first in every thread: a stale answer would show


class Mortal(PostgresSaver):
    """The checkpointer of a worker that dies after `lives` saves (None: it never dies)."""

    def __init__(self, pool: Any) -> None:
        super().__init__(pool)
        self.revive(None)

    def revive(self, lives: int | None) -> None:
        """A new worker process, on the same database."""
        self.lives = lives
        self.saves = 0
        self.dead = asyncio.Event()
        self._buried = asyncio.Event()

    def bury(self) -> None:
        self._buried.set()

    async def aput(self, *args: Any, **kwargs: Any) -> Any:
        await self._live()
        return await super().aput(*args, **kwargs)

    async def aput_writes(self, *args: Any, **kwargs: Any) -> None:
        await self._live()
        await super().aput_writes(*args, **kwargs)

    async def _live(self) -> None:
        if self.lives is not None and self.saves >= self.lives:
            self.dead.set()
            await self._buried.wait()  # a dead process saves nothing more
            raise RuntimeError("this worker is dead")
        self.saves += 1


@dataclass
class Case:
    """A route to kill: the model's script, the turns before, and the turn (made from the replies
    before it) that is killed."""

    name: str
    script: dict[str, Any]
    turn: Callable[[str, list[Reply]], Turn]
    before: list[str] = field(default_factory=list)


def question_of(request: dict) -> str:
    return user_text(request).split("Question: ", 1)[-1].splitlines()[0]


def answer_of(request: dict) -> str:
    """An answer that names its question: the previous turn's answer cannot pass for this one."""
    return f"For «{question_of(request)[:80]}» see [1]."


def route_to(intent: str, **extra: Any) -> dict:
    return {"intent": intent, "confidence": 0.9, "reasoning": "scripted", **extra}


def asks_back(request: dict) -> dict:
    """Clarify a question until it has been restated with a choice."""
    if "(" in question_of(request):
        return route_to("HOW_TO")
    return route_to(
        "HOW_TO", clarify=True, clarify_prompt="Which password?", clarify_options=["VPN password", "E-mail password"]
    )


def ask(text: str) -> Callable[[str, list[Reply]], Turn]:
    return lambda session, _: Turn("slack", session, "U1", "killed-turn", text=text)


def click(option: int) -> Callable[[str, list[Reply]], Turn]:
    def turn(session: str, before: list[Reply]) -> Turn:
        pending = before[-1].interrupt_id
        assert pending is not None
        return Turn("slack", session, "U1", "killed-turn", answer=ClarificationAnswer(pending[:8], option))

    return turn


POOR = {"grounded": 0.2, "useful": 0.1, "reasoning": "weak"}
CASES = [
    Case("fast_retrieval", {"RouteDecision": route_to("FACT_LOOKUP")}, ask("Who approves expenses?")),
    Case("standard_retrieval", {"RouteDecision": route_to("HOW_TO")}, ask("How do I request a security exception?")),
    Case(
        "self_check_loop",
        {"RouteDecision": route_to("HOW_TO"), "Verdict": POOR},
        ask("How do I request a security exception?"),
    ),
    Case("deep_search", {"RouteDecision": route_to("COMPARISON")}, ask("Compare the VPN and e-mail password resets")),
    Case("code_search", {"RouteDecision": route_to("CODE_SEARCH")}, ask("Show me the curl command for the API")),
    Case("direct_reply", {"RouteDecision": route_to("CHIT_CHAT")}, ask("Hello there")),
    Case("fallback", {"RouteDecision": route_to("UNKNOWN")}, ask("What is the weather on Mars?")),
    Case("clarify", {"RouteDecision": asks_back}, ask("How do I reset my password?")),
    Case("click", {"RouteDecision": asks_back}, click(0), before=["How do I reset my password?"]),
    Case("typed_answer", {"RouteDecision": asks_back}, ask("the e-mail one"), before=["How do I reset my password?"]),
]


class Deployment:
    """The workers of a deployment, one after another, on the same Postgres: each new one starts
    on the checkpoints the ones before saved."""

    def __init__(self, chat: ChatService, llm: FakeOpenAI) -> None:
        self.saver = Mortal(chat.checkpointer.conn)
        self.worker = dataclasses.replace(chat, graph=build_graph(self.saver))
        self.llm = llm
        self.jobs = itertools.count()

    def calls(self) -> int:
        return len(self.llm.chat_kinds())

    async def deliver(self, turn: Turn, job: str, attempt: int = 1, lives: int | None = None) -> list[Reply] | None:
        """`turn` handled by a worker whose process dies after `lives` saves: its replies, or None
        when it died first."""
        self.saver.revive(lives)
        token = current_delivery.set(Delivery(job, attempt=attempt, final=False))
        try:
            run = asyncio.create_task(self.worker.handle(turn))
        finally:
            current_delivery.reset(token)
        death = asyncio.create_task(self.saver.dead.wait())
        await asyncio.wait([run, death], return_when=asyncio.FIRST_COMPLETED)
        death.cancel()
        if run.done():
            return run.result()
        run.cancel()  # SIGKILL: nothing more of this worker runs, nothing more is saved
        self.saver.bury()
        with suppress(asyncio.CancelledError):
            await run
        return None

    async def thread(self, case: Case, session: str) -> list[Reply]:
        """A new thread with its opening question answered and the case's turns before."""
        script = self.llm.script.copy()
        self.llm.script["RouteDecision"] = route_to("FACT_LOOKUP")  # an answer naming its question
        opening = await self.deliver(Turn("slack", session, "U1", "opening", text=OPENING), f"job{next(self.jobs)}")
        self.llm.script = script
        replies = []
        for n, text in enumerate(case.before):
            replies = await self.deliver(
                Turn("slack", session, "U1", f"before-{n}", text=text), f"job{next(self.jobs)}"
            )
        assert opening and replies is not None
        return replies


@pytest.fixture
async def deployment(tmp_path: Path, pg_url: str, handbook_kb) -> AsyncIterator[Deployment]:
    llm = FakeOpenAI().start()
    settings = Settings(
        THREADSAGE_DATA_DIR=tmp_path / "data",
        DATABASE_URL=pg_url,
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=llm.base_url,
        _env_file=None,
    )
    try:
        async with open_chat_service(settings, kb=handbook_kb) as service:
            yield Deployment(dataclasses.replace(service, rate_limit_per_minute=1_000_000), llm)
    finally:
        llm.stop()


def shown(replies: list[Reply]) -> list[tuple]:
    """What a person sees of the replies (interrupt ids differ from thread to thread)."""
    return [(r.kind, r.text, r.route, tuple(c.label for c in r.choices), r.citations) for r in replies]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
async def test_a_turn_killed_after_any_save_is_answered_once_by_the_next_workers(
    deployment: Deployment, case: Case
) -> None:
    deployment.llm.script = {"answer": answer_of, **case.script}
    before = await deployment.thread(case, "slack:T:C:clean")
    calls = deployment.calls()
    clean = await deployment.deliver(case.turn("slack:T:C:clean", before), "job-clean")
    expected, model_calls, saves = shown(clean or []), deployment.calls() - calls, deployment.saver.saves
    assert len(expected) == 1 and expected[0][1].strip() and expected[0][0] is not ReplyKind.NOTICE, expected
    assert case.name not in ("click", "typed_answer") or "«" in expected[0][1]  # the resumed turn answers
    assert saves >= 4

    for lives in range(saves):
        session = f"slack:T:C:{case.name}-{lives}"
        turn = case.turn(session, await deployment.thread(case, session))
        job = f"job-{case.name}-{lives}"
        calls = deployment.calls()
        died = await deployment.deliver(turn, job, lives=lives)
        again = await deployment.deliver(turn, job, attempt=2, lives=1)
        replies = await deployment.deliver(turn, job, attempt=3)
        assert died is None, f"killed after {lives} saves, it still finished"
        where = f"{case.name} killed after {lives} of {saves} saves"
        assert again is None or shown(again) == expected, where
        assert shown(replies or []) == expected, f"{where}: {replies}"
        # Each death repeats at most the step that was running: one model call.
        assert deployment.calls() - calls <= model_calls + 2, f"{where}: {deployment.llm.chat_kinds()[calls:]}"
