"""The scaled deployment as operators run it: `threadsage serve` and `threadsage worker` as real
processes sharing Redis, Postgres and a Milvus Lite *server* (several processes cannot share a
Lite data directory), talking to a fake Slack and a slow fake model over HTTP.

What must hold: a worker killed mid-turn or right after posting → exactly one answer; two turns of
one thread → answered in order; Redis restarted → queued turns survive and the processes recover;
Postgres away for a few seconds → the turn is retried, not lost.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from pathlib import Path

import aiohttp

from tests.helpers.deployment import QUESTION, SECRET, Stack
from tests.helpers.served import Served, free_port, wait_for_port


def niceness(served: Served) -> int:
    return int(Path(f"/proc/{served.process.pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def turn_of(message: dict) -> str:
    return message["metadata"]["event_payload"]["turn"]


async def test_a_worker_killed_mid_turn_hands_it_over_and_it_is_answered_once(stack: Stack) -> None:
    front, doomed = stack.start("serve"), stack.start("worker")
    async with aiohttp.ClientSession() as http:
        await stack.ready(http, front, doomed)
        assert await front.mention(http, SECRET, QUESTION) == 200
        deadline = time.monotonic() + 60
        while len(stack.llm.chat_kinds()) < 2:  # the worker is inside the graph
            assert time.monotonic() < deadline, stack.output()
            await asyncio.sleep(0.02)
        doomed.process.kill()  # kill -9
        calls_before = len(stack.llm.chat_kinds())
        rescuer = stack.start("worker")
        await stack.ready(http, rescuer)
        [answer] = await stack.wait_for_answers(1)
        await asyncio.sleep(2)
    assert len(stack.answers()) == 1 and turn_of(answer) == "C1:1710000000.000001"
    assert "api-style-guide" in str(answer["blocks"])
    code, output = rescuer.stop()
    assert code == 0 and "resumed from its last checkpoint" in output, output[-3000:]
    # Finished from the checkpoint: the rescuer did not start the turn over.
    assert len(stack.llm.chat_kinds()) - calls_before < 4


async def test_a_worker_killed_after_posting_does_not_post_twice(stack: Stack) -> None:
    stack.slack.hold["chat.postMessage"] = 30  # the answer is posted; the worker waits for the reply
    front, doomed = stack.start("serve"), stack.start("worker")
    async with aiohttp.ClientSession() as http:
        await stack.ready(http, front, doomed)
        assert await front.mention(http, SECRET, QUESTION) == 200
        [posted] = await stack.wait_for_answers(1)
        doomed.process.kill()
        stack.slack.hold.clear()
        rescuer = stack.start("worker")
        await stack.ready(http, rescuer)
        deadline = time.monotonic() + 40
        # The fake Slack records calls in a list: there is no event to wait on.
        while time.monotonic() < deadline and not stack.slack.of("conversations.replies"):  # noqa: ASYNC110
            await asyncio.sleep(0.1)  # the rescuer takes the turn over after the timeout...
        await asyncio.sleep(3)
    assert stack.slack.of("conversations.replies"), "the turn was never redelivered"
    assert stack.answers() == [posted]  # ...finds the answer in the thread and posts nothing
    code, output = rescuer.stop()
    assert code == 0 and "already posted" in output, output[-3000:]


async def test_two_turns_of_one_thread_are_answered_in_order_by_two_workers(stack: Stack) -> None:
    front = stack.start("serve")
    workers = [stack.start("worker"), stack.start("worker")]
    async with aiohttp.ClientSession() as http:
        await stack.ready(http, front, *workers)
        root = "1710000100.000001"
        assert await front.mention(http, SECRET, QUESTION, ts=root) == 200
        assert (
            await front.mention(
                http, SECRET, "And what about the VPN password?", ts="1710000100.000002", thread_ts=root
            )
            == 200
        )
        answers = await stack.wait_for_answers(2)
    assert [turn_of(a) for a in answers] == [f"C1:{root}", "C1:1710000100.000002"]
    assert all(a["thread_ts"] == root for a in answers)
    # the workers yield the CPU to the front-end (THREADSAGE_WORKER_NICENESS, 10 by default)
    assert [niceness(w) - niceness(front) for w in workers] == [10, 10]
    for served in (front, *workers):
        code, output = served.stop()
        assert code == 0 and "Traceback" not in output, output[-3000:]


async def test_redis_restarted_loses_no_turn(stack: Stack, tmp_path: Path) -> None:
    """Redis with its append-only file (as in docker-compose.yml) restarted: a turn queued before
    the restart is answered after it, a delivery refused while Redis is down is answered when Slack
    retries it, the processes reconnect by themselves, and a worker started meanwhile waits."""
    port = free_port()
    redis_dir = tmp_path / "redis"
    redis_dir.mkdir()
    command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
               "--appendfsync", "always", "--dir", str(redis_dir)]  # fmt: skip
    redis = subprocess.Popen(command, stdout=subprocess.DEVNULL)  # noqa: ASYNC220 - returns at once
    try:
        wait_for_port(port, redis)
        stack.env["REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
        front, worker = stack.start("serve"), stack.start("worker")
        async with aiohttp.ClientSession() as http:
            await stack.ready(http, front, worker)
            worker.process.send_signal(signal.SIGSTOP)  # frozen: the next turn stays in the queue
            assert await front.mention(http, SECRET, QUESTION, ts="1710000200.000001") == 200
            redis.send_signal(signal.SIGTERM)
            redis.wait(timeout=30)
            assert await front.mention(http, SECRET, "Who approves expenses?", ts="1710000200.000002") >= 500
            late = stack.start("worker")  # starts while Redis is away: it must wait for it
            await late.healthy(http)
            async with http.get(f"{late.url}/readyz") as response:
                assert response.status == 503
            redis = subprocess.Popen(command, stdout=subprocess.DEVNULL)  # noqa: ASYNC220 - returns at once
            wait_for_port(port, redis)
            worker.process.send_signal(signal.SIGCONT)
            await late.ready(http)
            deadline = time.monotonic() + 30
            while await front.mention(http, SECRET, "Who approves expenses?", ts="1710000200.000002", retry=1) != 200:
                assert time.monotonic() < deadline, "the front-end did not recover"  # Slack retries
                await asyncio.sleep(0.5)
            await stack.wait_for_answers(2)
            await asyncio.sleep(1)
        assert sorted(turn_of(a) for a in stack.answers()) == ["C1:1710000200.000001", "C1:1710000200.000002"]
        code, output = late.stop()
        assert code == 0 and "Traceback" not in output, output[-3000:]  # it waited (503 above), then served
        assert worker.stop()[0] == 0 and front.stop()[0] == 0
    finally:
        redis.kill()
        redis.wait(timeout=30)


class FlakyProxy:
    """A TCP proxy in front of Postgres that can drop every connection and refuse new ones."""

    def __init__(self, target_port: int = 5432) -> None:
        self.target_port = target_port
        self.port = free_port()
        self.server: asyncio.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()

    async def up(self) -> None:
        self.server = await asyncio.start_server(self._connect, "127.0.0.1", self.port)

    async def down(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in list(self.writers):
            writer.close()
        self.writers.clear()
        await self.server.wait_closed()

    async def _connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self.writers |= {writer, upstream_writer}

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            try:
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                sink.close()

        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))


async def test_postgres_away_for_a_few_seconds_the_turn_is_retried_not_lost(stack: Stack) -> None:
    proxy = FlakyProxy()
    await proxy.up()
    database = stack.env["DATABASE_URL"].replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
    assert database != stack.env["DATABASE_URL"]
    front = stack.start("serve")
    worker = stack.start("worker", DATABASE_URL=database, THREADSAGE_TURN_MAX_TRIES="5")
    async with aiohttp.ClientSession() as http:
        await stack.ready(http, front, worker)
        await proxy.down()
        assert await front.mention(http, SECRET, QUESTION, ts="1710000300.000001") == 200
        await asyncio.sleep(4)
        await proxy.up()
        [answer] = await stack.wait_for_answers(1, timeout=60)
    assert "api-style-guide" in str(answer["blocks"]), answer  # the answer, not an apology
    code, output = worker.stop()
    assert code == 0 and "retrying" in output, output[-3000:]
    await proxy.down()


async def test_telegram_reply_chains_continue_across_workers(stack: Stack) -> None:
    """Telegram's webhook on `serve`, updates answered by workers; which session a bot message
    belongs to is shared through Redis, so a reply chain continues on whichever worker."""
    from tests.fakes.telegram_api import FakeBotAPI
    from tests.helpers.telegram_harness import ANN, BOB, GROUP, TOKEN, WEBHOOK_SECRET, mention
    from threadsage.bots.tokens import Signer
    from threadsage.memory.sessions import session_key

    fake = await FakeBotAPI(TOKEN).start()
    stack.env.update(
        TELEGRAM_BOT_TOKEN=TOKEN,
        TELEGRAM_API_URL=fake.url,
        TELEGRAM_WEBHOOK_URL="https://bot.example/telegram/webhook",
        TELEGRAM_WEBHOOK_SECRET=WEBHOOK_SECRET,
        THREADSAGE_TELEGRAM_ALLOWED=str(GROUP["id"]),
    )
    update_ids = iter(range(1, 100))

    async def say(
        http: aiohttp.ClientSession, front: Served, user: dict, text: str, reply_to: dict | None = None
    ) -> tuple[dict, dict]:
        since = len(fake.sent(GROUP["id"]))
        message = fake.message(GROUP, user, text, reply_to=reply_to)
        update = {"update_id": next(update_ids), "message": message}
        headers = {"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET}
        async with http.post(f"{front.url}/telegram/webhook", json=update, headers=headers) as response:
            assert response.status == 200
        # the answer's words show first in a message that becomes the answer, keyboard and all
        replies = await fake.wait_for(
            lambda: [m for m in fake.sent(GROUP["id"])[since:] if m.get("reply_markup")], timeout=60
        )
        return message, replies[0]

    try:
        front, first = stack.start("serve"), stack.start("worker")
        async with aiohttp.ClientSession() as http:
            await stack.ready(http, front, first)
            assert fake.webhook == {"url": "https://bot.example/telegram/webhook", "secret_token": WEBHOOK_SECRET}
            question, answer = await say(http, front, ANN, mention(QUESTION))
            _, second_answer = await say(http, front, BOB, "And for the Tidewater API?", reply_to=answer)
            assert first.stop()[0] == 0
            second = stack.start("worker")
            await stack.ready(http, second)
            _, third_answer = await say(http, front, ANN, "Thanks, and who owns that API?", reply_to=second_answer)
        root = session_key("telegram", "-", str(GROUP["id"]), str(question["message_id"]))
        signer = Signer(stack.env["THREADSAGE_SECRET"].encode())
        for reply in (answer, second_answer, third_answer):
            [[up, _down]] = reply["reply_markup"]["inline_keyboard"]
            signer.verify(up["callback_data"], root)  # raises unless the button names the chain's session
        assert second.stop()[0] == 0
    finally:
        await fake.stop()


async def test_queue_depth_and_age_are_metrics(stack: Stack) -> None:
    front = stack.start("serve")

    async def gauges(http: aiohttp.ClientSession) -> dict[str, float]:
        async with http.get(f"{front.url}/metrics") as response:
            text = await response.text()
        return {
            name: float(line.split()[-1])
            for line in text.splitlines()
            for name in ("threadsage_queue_depth", "threadsage_queue_oldest_age_seconds")
            if line.startswith(name + " ")
        }

    async def until(http: aiohttp.ClientSession, condition) -> dict[str, float]:
        deadline = time.monotonic() + 30
        while not condition(values := await gauges(http)):
            assert time.monotonic() < deadline, values
            await asyncio.sleep(0.5)
        return values

    async with aiohttp.ClientSession() as http:
        await stack.ready(http, front)
        assert await front.mention(http, SECRET, QUESTION) == 200  # no worker yet: it waits
        waiting = await until(http, lambda v: v.get("threadsage_queue_depth") == 1)
        assert waiting["threadsage_queue_oldest_age_seconds"] > 0
        worker = stack.start("worker")
        await stack.wait_for_answers(1)
        await until(http, lambda v: v == {"threadsage_queue_depth": 0, "threadsage_queue_oldest_age_seconds": 0})
    assert worker.stop()[0] == 0


async def test_a_clarification_and_its_click_go_through_the_queue(stack: Stack) -> None:
    from tests.fakes.slack_api import action_body, signed_headers

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):  # the offline back-end asks back here
        del stack.env[name]
    front, worker = stack.start("serve"), stack.start("worker")
    async with aiohttp.ClientSession() as http:
        await stack.ready(http, front, worker)
        assert await front.mention(http, SECRET, "How do I reset my password?", ts="1710000400.000001") == 200
        [ask] = await stack.wait_for_answers(1)
        buttons = next(b for b in ask["blocks"] if b["type"] == "actions")["elements"]
        vpn = next(b for b in buttons if "VPN" in b["text"]["text"])
        body = action_body(ask, "C1", "U1", vpn["action_id"], vpn["value"], vpn["text"]["text"], "1710000401.000001")
        headers = {"Content-Type": "application/x-www-form-urlencoded", **signed_headers(SECRET, body)}
        async with http.post(f"{front.url}/slack/events", data=body, headers=headers) as response:
            assert response.status == 200
        [_, answer] = await stack.wait_for_answers(2)
    [update] = stack.slack.of("chat.update")
    assert update["ts"] == ask["ts"] and "chose" in str(update["blocks"])
    assert answer["thread_ts"] == "1710000400.000001" and "it/vpn.md" in str(answer["blocks"])
    assert worker.stop()[0] == 0


async def test_a_turn_that_kills_every_worker_is_apologised_for_and_the_thread_goes_on(stack: Stack) -> None:
    front, doomed = stack.start("serve"), stack.start("worker", THREADSAGE_TURN_MAX_TRIES="1")
    async with aiohttp.ClientSession() as http:
        await stack.ready(http, front, doomed)
        root = "1710000500.000001"
        assert await front.mention(http, SECRET, QUESTION, ts=root) == 200
        deadline = time.monotonic() + 60
        while not stack.llm.chat_kinds():  # inside the graph
            assert time.monotonic() < deadline, stack.output()
            await asyncio.sleep(0.02)
        doomed.process.kill()  # its one try
        assert await front.mention(http, SECRET, "And the VPN password?", ts="1710000500.000002", thread_ts=root) == 200
        rescuer = stack.start("worker", THREADSAGE_TURN_MAX_TRIES="1")
        await stack.ready(http, rescuer)
        deadline = time.monotonic() + 60
        while len(stack.slack.posted()) < 2:
            assert time.monotonic() < deadline, stack.slack.posted()
            await asyncio.sleep(0.1)
    apology, answer = stack.slack.posted()
    assert apology["text"] == "Sorry — something went wrong while answering. Please try again in a moment."
    assert apology["thread_ts"] == root and turn_of(answer) == "C1:1710000500.000002"
    code, output = rescuer.stop()
    assert code == 0 and "given up after 1 tries" in output, output[-3000:]
