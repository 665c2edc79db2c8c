"""Backfilling a Slack source, and keeping it current (issue 38).

    PYTHONPATH=. .venv/bin/python bench/slack_backfill.py [--messages 10000] [--limited-threads 60]

A help channel of --messages messages on the fake Slack (threads of a question and four replies;
every third thread resolved by its asker's ✅ on a reply), read by the Slack source's connector
over HTTP into a fresh knowledge base, as the running bot's upkeep does. Prints, for the first
(full) sync, a later full sync, and one thread marked by an event: the time, the Web API calls by
method, and the documents indexed.

The first table runs with the fake's rate limits lifted: the work and the calls themselves. The
second reads --limited-threads threads with the fake answering 429 past Slack's documented limits
(Tier 3: 50 calls a minute per method), to show every 429 waited out (Retry-After) and nothing
lost: its time is what Slack's limits make of the calls, and the first table's calls divided by 50
a minute are the floor a real workspace puts under a backfill.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pydantic import SecretStr  # noqa: E402

from tests.fakes.slack_api import TIERS, FakeSlack  # noqa: E402
from threadsage.adapters.knowledge import open_knowledge_base  # noqa: E402
from threadsage.delivery.coordination import LocalCoordinator  # noqa: E402
from threadsage.ingestion.connectors import connector_for  # noqa: E402
from threadsage.ingestion.connectors.slack import SlackThreadsConnector, threads_key  # noqa: E402
from threadsage.ingestion.engine import SyncEngine  # noqa: E402
from threadsage.ingestion.spec import SourceSpec  # noqa: E402
from threadsage.ingestion.state import StateStore  # noqa: E402
from threadsage.settings.environment import Settings  # noqa: E402

HELP = "C0HELPDESK"
TOPICS = ["VPN token", "printer", "expense form", "parking permit", "laptop refresh", "badge access", "wiki login"]


def fill(slack: FakeSlack, messages: int) -> int:
    """Threads of five messages; every third resolved. Returns how many are resolved."""
    resolved = 0
    for n in range(messages // 5):
        root = f"{1700000000 + n}.000100"
        topic = TOPICS[n % len(TOPICS)]
        slack.person_said(
            {"channel": HELP, "ts": root, "user": f"U{n % 97}", "text": f"How do I fix my {topic}, case {n}?"}
        )
        for r in range(1, 5):
            reply = {"channel": HELP, "ts": f"{1700000000 + n}.00010{r}", "user": f"U{(n + r) % 89 + 100}",
                     "text": f"Try step {r} for the {topic} (case {n}).", "thread_ts": root}  # fmt: skip
            if r == 4 and n % 3 == 0:
                reply["reactions"] = [{"name": "white_check_mark", "users": [f"U{n % 97}"], "count": 1}]
                resolved += 1
            slack.person_said(reply)
    return resolved


async def timed_sync(engine: SyncEngine, connector: SlackThreadsConnector, slack: FakeSlack) -> tuple[float, str]:
    connector.calls.clear()
    limited = len(slack.rate_limited())
    started = time.perf_counter()
    status = await engine.sync(connector)
    seconds = time.perf_counter() - started
    calls = ", ".join(f"{method} {n}" for method, n in sorted(connector.calls.items()))
    shown = f"new {status.new}, unchanged {status.unchanged}, removed {status.removed}, failures {len(status.failures)}"
    return (
        seconds,
        f"{calls}; 429s waited out {len(slack.rate_limited()) - limited}; {shown}; error {status.error or '–'}",
    )


async def run(messages: int, limited: bool, every: str) -> list[tuple[str, float, str]]:
    slack = FakeSlack().start()
    saved = dict(TIERS)
    if not limited:
        TIERS.clear()
    try:
        resolved = fill(slack, messages)
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings(THREADSAGE_DATA_DIR=Path(tmp), THREADSAGE_EMBEDDINGS="none", _env_file=None)
            settings = settings.model_copy(
                update={"slack_bot_token": SecretStr("xoxb-bench"), "slack_api_url": slack.api_url}
            )
            marks = LocalCoordinator()
            spec = SourceSpec(name="help", type="slack", channels=(HELP,), category="it", every=every)
            kb = open_knowledge_base(settings)
            try:
                engine = SyncEngine(kb, StateStore(Path(tmp) / "state"), 1200, 200, asyncio.Lock())
                connector = connector_for(spec, settings, settings.data_dir, settings, marks)
                assert isinstance(connector, SlackThreadsConnector)
                rows = [
                    (
                        f"first sync ({messages:,} messages, {resolved} resolved)",
                        *await timed_sync(engine, connector, slack),
                    )
                ]
                if not limited:
                    await asyncio.sleep(spec.interval)  # the schedule's next full sync
                    rows.append(("next full sync (nothing changed)", *await timed_sync(engine, connector, slack)))
                    reply = slack.people[(HELP, "1700000001.000104")]
                    reply["reactions"] = [{"name": "white_check_mark", "users": ["U1"], "count": 1}]
                    await marks.mark(threads_key(HELP), "1700000001.000104", 60)  # the bot saw the ✅ on a reply
                    rows.append(("a thread marked by an event", *await timed_sync(engine, connector, slack)))
            finally:
                kb.close()
    finally:
        TIERS.update(saved)
        slack.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--limited-threads", type=int, default=60)
    args = parser.parse_args()
    print("| run | time | Web API calls; result |\n|---|---|---|")
    for name, seconds, shown in asyncio.run(run(args.messages, limited=False, every="2s")):
        print(f"| {name}, no limits | {seconds:.1f} s | {shown} |")
    for name, seconds, shown in asyncio.run(run(args.limited_threads * 5, limited=True, every="1h")):
        print(f"| {name}, Slack's limits | {seconds:.1f} s | {shown} |")


if __name__ == "__main__":
    main()
