"""Throughput of `threadsage serve` + N `threadsage worker` processes, Slack ack latency under that
load, and what an idle session costs.

    .venv/bin/python bench/worker_pool.py [--workers 1 2 4] [--sessions 200] [--latency 0.3] [--concurrency N]
        [--set NAME=VALUE ...]

Real processes as deployed: one front-end, N workers, Redis and Postgres of this machine, the demo
handbook in a Milvus Lite server; the fake Slack Web API and the fake OpenAI-compatible server
(every model call takes --latency seconds; the router picks the standard retrieval: route,
answer and judge, and a follow-up's contextualise: 3-4 calls a turn) run in this process.
--sessions Slack threads each ask two questions: every thread's first mention, then every
thread's follow-up, posted at --rate per second (100 by default: faster than the workers answer,
so the queue stays full). Reports per worker count:

- turns/s: turns answered ÷ (last answer − first post);
- ack p50/p99/max: signed event POST → HTTP 200 from the front-end, measured while the workers
  are busy (it includes recording the turn in Redis), by a poster in a process of its own (the
  fake servers' threads, in this one, must not delay what it times);
- Postgres per session: growth of the schema's tables (`pg_total_relation_size`, checkpoints and
  feedback, indexes included) from before the load to after both turns of every session ÷ sessions;
- worker RSS per session: growth of the workers' resident memory from before the load to after
  it, ÷ sessions (the workers keep no per-session state; this shows what is left behind);
- CPU ms per turn, per process (user + system time from /proc, from the first post to the last
  answer, ÷ turns): `serve`, the workers together, the Postgres backends of this run's
  connections (by application_name), the Milvus Lite server, and Redis — the machine's one Redis,
  whose figure includes whatever else used it meanwhile; and, apart from "all", this bench's own
  process: the fake Slack and model servers and the poster of events, which share the 2 cores;
- the calls a turn makes to the fake model and Slack servers, by method.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import aiohttp
import psycopg
from redis import Redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.fakes.slack_api import FakeSlack  # noqa: E402
from tests.helpers.served import Served, milvus_server, post_mention, serve  # noqa: E402
from threadsage.bots.slack.sending import REPLY_EVENT  # noqa: E402

SECRET = "bench-signing-secret-0123456789ab"
POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
REDIS = "redis://127.0.0.1:6379/0"
QUESTIONS = [
    "What is the rate limit per API key?",
    "How many days of annual leave do I get?",
    "Which cabin class may I book for a long flight?",
    "How do I rotate my VPN password?",
]


def rss_mb(served: Served) -> float:
    for line in Path(f"/proc/{served.process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def cpu_ms(pid: int) -> float:
    """User + system CPU time of a process so far (0 for one that has gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().decode(errors="replace")
    except OSError:  # gone meanwhile
        return ""


def cpu_by_role(front: Served, pool: list[Served], application: str, milvus_data: Path) -> dict[str, float]:
    """CPU ms so far of each role's processes (see the module's docstring)."""
    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        backends = [
            r[0] for r in conn.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s", (application,))
        ]
    milvus = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and str(milvus_data) in cmdline(p)]
    redis_pid = int(Redis.from_url(REDIS).info("server")["process_id"])
    return {
        "serve": cpu_ms(front.process.pid),
        "workers": sum(cpu_ms(w.process.pid) for w in pool),
        "postgres": sum(cpu_ms(pid) for pid in backends),
        "milvus": sum(cpu_ms(pid) for pid in milvus),
        "redis": cpu_ms(redis_pid),
    }


def schema_bytes(schema: str) -> int:
    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        return conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(quote_ident(schemaname) || '.' || quote_ident(tablename))), 0)"
            " FROM pg_tables WHERE schemaname = %s",
            (schema,),
        ).fetchone()[0]


async def run(
    workers: int,
    sessions: int,
    latency: float,
    rate: float,
    concurrency: int | None,
    milvus_uri: str,
    scratch: Path,
    settings: dict[str, str],
) -> dict:
    milvus_data = scratch / "milvus"
    slack, llm = FakeSlack().start(), FakeOpenAI(latency=latency).start()
    llm.script["RouteDecision"] = {"intent": "HOW_TO", "confidence": 0.9, "reasoning": "bench"}
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    env = {
        "THREADSAGE_DATA_DIR": str(scratch / "data"),
        "DATABASE_URL": f"{POSTGRES}?application_name={schema}&options=-csearch_path%3D{schema}",
        "REDIS_URL": REDIS,
        "THREADSAGE_REDIS_PREFIX": f"{schema}:",
        "MILVUS_URI": milvus_uri,
        "SLACK_BOT_TOKEN": "xoxb-bench",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": slack.api_url,
        "OPENAI_API_KEY": "sk-bench",
        "OPENAI_BASE_URL": llm.base_url,
        "THREADSAGE_SECRET": "bench-buttons-" + uuid.uuid4().hex,
        "THREADSAGE_RATE_LIMIT_PER_MINUTE": "1000000",
        "THREADSAGE_LOG_LEVEL": "WARNING",
    }
    if concurrency is not None:
        env["THREADSAGE_WORKER_CONCURRENCY"] = str(concurrency)
    env.update(settings)
    processes = [serve(["serve"], env, scratch)] + [serve(["worker"], env, scratch) for _ in range(workers)]
    front, pool = processes[0], processes[1:]
    try:
        async with aiohttp.ClientSession() as http:
            for served in processes:
                try:
                    await served.ready(http, timeout=120)
                except AssertionError:
                    print(served.process.communicate()[0][-3000:], file=sys.stderr)
                    raise
            rss_before = sum(rss_mb(w) for w in pool)
            pg_before = schema_bytes(schema)
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as poster:
                await asyncio.wrap_future(poster.submit(time.time))  # started before the clocks
                cpu_before = cpu_by_role(front, pool, schema, milvus_data)
                bench_before = cpu_ms(os.getpid())
                first_post = time.time()
                acks, poster_cpu_ms = await asyncio.wrap_future(poster.submit(post_all, front.url, sessions, rate))
            total = 2 * sessions
            while len(answers := answered(slack)) < total:  # noqa: ASYNC110 - they arrive from other processes
                await asyncio.sleep(0.1)
            elapsed = time.time() - first_post
            cpu_after = cpu_by_role(front, pool, schema, milvus_data)
            bench_cpu = cpu_ms(os.getpid()) - bench_before + poster_cpu_ms
            apologies = sum("Sorry" in str(a.get("text")) for a in answers)
            await asyncio.sleep(2)  # let the workers settle before reading their memory
            rss_after = sum(rss_mb(w) for w in pool)
        pg_bytes = schema_bytes(schema) - pg_before
        acks.sort()
        return {
            "workers": workers,
            "turns": total,
            "turns_per_s": total / elapsed,
            "apologies": apologies,
            "ack_p50_ms": statistics.median(acks) * 1000,
            "ack_p99_ms": acks[int(0.99 * (len(acks) - 1))] * 1000,
            "ack_max_ms": acks[-1] * 1000,
            "pg_kb_per_session": pg_bytes / 1024 / sessions,
            "worker_kb_per_session": (rss_after - rss_before) * 1024 / sessions,
            "worker_rss_mb": rss_after / workers,
            "cpu_ms_per_turn": {role: (cpu_after[role] - cpu_before[role]) / total for role in cpu_after},
            "bench_cpu_ms_per_turn": bench_cpu / total,
            "slack_calls_per_turn": {m: n / total for m, n in Counter(method for method, _ in slack.calls).items()},
            "model_calls_per_turn": len(llm.requests) / total,
        }
    finally:
        for served in processes:
            if served.process.poll() is None:
                served.stop()
        slack.stop()
        llm.stop()
        with psycopg.connect(POSTGRES, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
        redis = Redis.from_url(REDIS)
        keys = list(redis.scan_iter(match=f"*{schema}:*"))
        if keys:
            redis.delete(*keys)


def answered(slack: FakeSlack) -> list[dict]:
    """The turns' replies in Slack as it is now: each answer (its first message, a stream finished
    and made the reply included) and each apology. Not what was posted: a streamed answer is no
    chat.postMessage, and a placeholder is one but no answer."""
    replies = []
    for message in slack.current("C1"):
        metadata = message.get("metadata") or {}
        metadata = json.loads(metadata) if isinstance(metadata, str) else metadata
        tag, first = metadata.get("event_type"), not metadata.get("event_payload", {}).get("part")
        if not message.get("streaming") and ((tag == REPLY_EVENT and first) or "Sorry" in str(message.get("text"))):
            replies.append(message)
    return replies


def post_all(url: str, sessions: int, rate: float) -> tuple[list[float], float]:
    """Every session's first mention, then every follow-up, at `rate` a second: the ack time of
    each, and this process's CPU ms. A process of its own, so that what it measures is not slowed
    by the fake servers' threads in the bench's (they answer hundreds of requests a second)."""

    async def posting() -> list[float]:
        acks: list[float] = []
        async with aiohttp.ClientSession() as http:

            async def post(i: int, follow_up: bool) -> None:
                root = f"1720000000.{i:06d}"
                ts = f"1720000001.{i:06d}" if follow_up else root
                question = QUESTIONS[(i + follow_up) % len(QUESTIONS)]
                started = time.perf_counter()
                status = await post_mention(http, url, SECRET, question, ts, root if follow_up else None)
                acks.append(time.perf_counter() - started)
                assert status == 200, status

            first_post, tasks = time.perf_counter(), []
            order = [(i, False) for i in range(sessions)] + [(i, True) for i in range(sessions)]
            for n, (i, follow_up) in enumerate(order):
                tasks.append(asyncio.create_task(post(i, follow_up)))
                await asyncio.sleep(max(0.0, first_post + (n + 1) / rate - time.perf_counter()))
            await asyncio.gather(*tasks)
        return acks

    started = time.process_time()
    acks = asyncio.run(posting())
    return acks, (time.process_time() - started) * 1000


async def main(
    counts: list[int], sessions: int, latency: float, rate: float, concurrency: int | None, settings: dict[str, str]
) -> None:
    with (
        tempfile.TemporaryDirectory() as scratch,
        milvus_server(Path(scratch) / "milvus", ROOT / "demo" / "handbook") as milvus_uri,
    ):
        rows = [await run(n, sessions, latency, rate, concurrency, milvus_uri, Path(scratch), settings) for n in counts]
    print(
        f"\n{sessions} sessions × 2 turns, model call {latency * 1000:.0f} ms (3-4 calls a turn),"
        f" events posted at {rate:.0f}/s, turns a worker runs at once: {concurrency or 'the default'}"
        + "".join(f", {name}={value}" for name, value in settings.items())
        + "\n"
    )
    print(
        "| workers | turns/s | apologies | ack p50 | ack p99 | ack max"
        " | Postgres / session | worker RSS / session | worker RSS |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['workers']} | {r['turns_per_s']:.1f} | {r['apologies']} | {r['ack_p50_ms']:.1f} ms"
            f" | {r['ack_p99_ms']:.1f} ms | {r['ack_max_ms']:.1f} ms | {r['pg_kb_per_session']:.1f} KB"
            f" | {r['worker_kb_per_session']:.1f} KB | {r['worker_rss_mb']:.0f} MB |"
        )
    roles = list(rows[0]["cpu_ms_per_turn"])
    print("\nCPU ms per turn, by process (Redis: the machine's shared one)\n")
    print("| workers | " + " | ".join(roles) + " | all | this bench (fakes, poster) |")
    print("|---|" + "---|" * (len(roles) + 2))
    for r in rows:
        cpu = r["cpu_ms_per_turn"]
        print(
            f"| {r['workers']} | "
            + " | ".join(f"{cpu[k]:.1f}" for k in roles)
            + f" | {sum(cpu.values()):.1f} | {r['bench_cpu_ms_per_turn']:.1f} |"
        )
    print("\nCalls a turn to the fake servers\n")
    for r in rows:
        slack_calls = ", ".join(f"{m} {n:.2f}" for m, n in sorted(r["slack_calls_per_turn"].items()))
        print(f"- {r['workers']} workers: model {r['model_calls_per_turn']:.2f}; Slack {slack_calls}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--concurrency", type=int, help="THREADSAGE_WORKER_CONCURRENCY (default: the product's)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="a setting of the served processes"
    )
    args = parser.parse_args()
    settings = dict(item.split("=", 1) for item in args.set)
    asyncio.run(main(args.workers, args.sessions, args.latency, args.rate, args.concurrency, settings))
