"""A help channel under a burst, and the experts' loop (issue 38).

    PYTHONPATH=. .venv/bin/python bench/help_channels.py [--questions 50]

The demo handbook, the offline back-end (`make run`'s), the real bolt app against the fake Slack
(which answers 429 past Slack's documented limits). --questions people ask at once, at the top of
a help channel and without a mention, the demo handbook's fact questions (covered) and its
unanswerable ones (not covered) in turn. Prints: the time from each question to its answer (or to
its escalation in the experts' channel), p50/p95; then every escalation gets an expert's reply at
once: the time from each reply to its relay into the asker's thread; then one expert's reply is
saved as the verified answer, and the same question and a paraphrase of it are asked again.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.slack_api import FakeSlack  # noqa: E402
from tests.helpers.slack_harness import Harness, ephemeral_click, next_ts, running  # noqa: E402
from threadsage.adapters.knowledge import open_knowledge_base  # noqa: E402
from threadsage.bots.slack.help import ESCALATION_EVENT, RELAY_EVENT  # noqa: E402
from threadsage.ingestion.pipeline import Ingestor  # noqa: E402
from threadsage.settings.environment import Settings  # noqa: E402

HELP, EXPERTS = "C0HELPDESK", "C0EXPERTS"
FORM = "application/x-www-form-urlencoded"


def percentiles(seconds: list[float]) -> str:
    if not seconds:
        return "–"
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered):.2f} s, p95 {p95:.2f} s (n={len(ordered)})"


async def say(slack: Harness, text: str, user: str, channel: str = HELP, thread: str | None = None) -> str:
    ts = next_ts()
    event = {"type": "message", "channel": channel, "user": user, "text": text, "ts": ts, "event_ts": ts}
    event |= {"channel_type": "channel", **({"thread_ts": thread} if thread else {})}
    await slack.event(slack.fake.person_said(event))
    return ts


def marked(slack: Harness, channel: str, event_type: str) -> list[dict]:
    return [m for m in slack.fake.current(channel) if (m.get("metadata") or {}).get("event_type") == event_type]


async def main(count: int) -> None:
    rows = [json.loads(line) for line in (ROOT / "demo" / "handbook-questions-typed.jsonl").read_text().splitlines()]
    covered = [r["question"] for r in rows if r["type"] == "fact"]
    uncovered = [r["question"] for r in rows if r["type"] == "unanswerable"]
    asked = [(covered + uncovered)[n % (len(covered) + len(uncovered))] for n in range(count)]
    with tempfile.TemporaryDirectory() as scratch:
        settings = Settings(THREADSAGE_DATA_DIR=Path(scratch) / "kb", THREADSAGE_EMBEDDINGS="none", _env_file=None)
        kb = open_knowledge_base(settings)
        Ingestor(kb, settings.chunk_chars, settings.chunk_overlap).ingest_paths([ROOT / "demo" / "handbook"])
        fake = FakeSlack().start()
        options = {"THREADSAGE_HELP_CHANNELS": {HELP: "answer"}, "THREADSAGE_EXPERTS": f"*={EXPERTS}"}
        async with running(Path(scratch), kb, fake=fake, **options) as slack:
            began = time.monotonic()
            sent = [(await say(slack, text, f"U0ASK{n:04d}"), text, time.monotonic()) for n, text in enumerate(asked)]
            answered: dict[str, float] = {}
            while len(answered) < count and time.monotonic() - began < 120:
                now = time.monotonic()
                escalated = {m["metadata"]["event_payload"]["ts"] for m in marked(slack, EXPERTS, ESCALATION_EVENT)}
                for ts, _, _ in sent:
                    if ts not in answered and (ts in escalated or [m for m in fake.current(HELP, ts) if m["ts"] != ts]):
                        answered[ts] = now
                await asyncio.sleep(0.02)
            await slack.settle()
            escalations = marked(slack, EXPERTS, ESCALATION_EVENT)
            out = {m["metadata"]["event_payload"]["ts"] for m in escalations}
            answers = [answered[ts] - at for ts, _, at in sent if ts in answered and ts not in out]
            escalated_in = [answered[ts] - at for ts, _, at in sent if ts in out]
            print(
                f"\n{count} questions at once in a help channel, {len(covered)} covered and {len(uncovered)} "
                "not covered in turn (the demo handbook's fact and unanswerable questions):"
            )
            print(f"- answered in their thread: {percentiles(answers)}")
            print(f"- escalated to the experts: {percentiles(escalated_in)}")
            print(f"- nothing at all (not read as a question): {count - len(answered)}")
            print(f"- Slack calls refused (429): {len(fake.rate_limited())}")

            replied: dict[str, float] = {}
            for n, escalation in enumerate(escalations):
                await say(slack, f"Expert answer {n}: ask the team lead.", f"U0EXP{n:03d}", EXPERTS, escalation["ts"])
                replied[escalation["metadata"]["event_payload"]["ts"]] = time.monotonic()
            relayed: dict[str, float] = {}
            while len(relayed) < len(replied) and time.monotonic() - began < 300:
                for ts in replied:
                    if ts not in relayed and [m for m in fake.current(HELP, ts) if m["ts"] != ts]:
                        relayed[ts] = time.monotonic()
                await asyncio.sleep(0.02)
            await slack.settle()
            print(f"- an expert's reply to its relay: {percentiles([relayed[t] - replied[t] for t in relayed])}")
            print(f"- relays: {len(marked(slack, HELP, RELAY_EVENT))} of {len(replied)}")

            if escalations:
                question = escalations[0]["metadata"]["event_payload"]["question"]
                offer = next(m for m in fake.of("chat.postEphemeral") if m.get("user") == "U0EXP000" and "blocks" in m)
                blocks = json.loads(offer["blocks"]) if isinstance(offer["blocks"], str) else offer["blocks"]
                [button] = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
                await slack.send(
                    ephemeral_click(offer, "U0EXP000", button["value"], button["action_id"]), content_type=FORM
                )
                await slack.settle()
                for label, text in (
                    ("the same question", question),
                    ("in other words", f"Quick one: {question.lower()}"),
                ):
                    ts = await say(slack, text, "U0AGAIN")
                    await slack.settle()
                    reply = " ".join(m.get("text", "") for m in fake.current(HELP, ts) if m["ts"] != ts)
                    print(
                        f"- asked again, {label}: {'verified answer' if 'Expert answer 0' in reply else 'not from it'}"
                    )
        fake.stop()
        kb.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=50)
    asyncio.run(main(parser.parse_args().questions))
