"""The ceiling on request bodies: over real HTTP (uvicorn, as served), for bodies with a
Content-Length and for chunked ones, and in a real `threadsage serve` process under a 64 MiB POST."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest
import uvicorn
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from tests.fakes.slack_api import FakeSlack
from tests.helpers.served import serve
from threadsage.http.limits import MAX_BODY_BYTES
from threadsage.http.server import ReadinessCheck, create_app

CHUNK = 64 * 1024


@asynccontextmanager
async def served(routes: list[Route], ready: ReadinessCheck | None = None) -> AsyncIterator[str]:
    server = uvicorn.Server(
        uvicorn.Config(create_app(routes, ready), host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    )
    serving = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110 - uvicorn sets a flag, it has no event to wait on
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        await serving


class Counting:
    """An endpoint that reads its body as a stream and remembers how much of it it saw."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    async def read(self, request: Request) -> Response:
        self.seen.append(0)
        async for chunk in request.stream():
            self.seen[-1] += len(chunk)
        return PlainTextResponse(str(self.seen[-1]))


async def chunks(total: int) -> AsyncIterator[bytes]:
    for start in range(0, total, CHUNK):
        yield b"x" * min(CHUNK, total - start)


async def refused(http: aiohttp.ClientSession, url: str, data: object, **kwargs: object) -> bool:
    """Whether the server refused the body: a 413, or a connection it closed on a client still
    sending (it reads no further; the client may see the reset before the 413)."""
    try:
        async with http.post(url, data=data, **kwargs) as response:
            return response.status == 413
    except (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError):
        return True


async def test_a_declared_length_over_the_limit_is_refused_before_the_endpoint_runs() -> None:
    endpoint = Counting()
    async with served([Route("/in", endpoint.read, methods=["POST"])]) as url, aiohttp.ClientSession() as http:
        # With `Expect: 100-continue` the client waits for a go-ahead before sending: the 413 comes instead.
        async with http.post(f"{url}/in", data=b"x" * (MAX_BODY_BYTES + 1), expect100=True) as response:
            assert response.status == 413
        assert await refused(http, f"{url}/in", b"x" * (MAX_BODY_BYTES + 1))
        async with http.post(f"{url}/in", data=b"x" * MAX_BODY_BYTES) as response:
            assert (response.status, await response.text()) == (200, str(MAX_BODY_BYTES))
    assert endpoint.seen == [MAX_BODY_BYTES]


async def test_a_chunked_body_is_cut_off_at_the_limit() -> None:
    endpoint = Counting()
    async with served([Route("/in", endpoint.read, methods=["POST"])]) as url, aiohttp.ClientSession() as http:
        assert await refused(http, f"{url}/in", chunks(8 * MAX_BODY_BYTES))
        async with http.post(f"{url}/in", data=chunks(MAX_BODY_BYTES)) as response:
            assert response.status == 200
    cut, accepted = endpoint.seen
    assert cut <= MAX_BODY_BYTES
    assert accepted == MAX_BODY_BYTES


async def test_every_path_of_the_app_has_the_limit() -> None:
    """A route that never reads a body may answer a chunked one without reading it (405 here); a
    declared length over the limit is refused on every path alike."""

    async def ready() -> bool:
        return True

    async with served([], ready) as url, aiohttp.ClientSession() as http:
        for path in ("/healthz", "/readyz", "/metrics", "/nowhere"):
            async with http.post(f"{url}{path}", data=b"x" * (2 * MAX_BODY_BYTES), expect100=True) as response:
                assert response.status == 413, path
            async with http.get(f"{url}{path}") as response:
                assert response.status == (404 if path == "/nowhere" else 200), path


@pytest.mark.slow
async def test_a_64_mib_unsigned_post_does_not_grow_a_served_process(tmp_path: Path) -> None:
    """`threadsage serve` (the queue's front-end): its peak memory stays where it was."""
    slack = FakeSlack().start()
    env = {
        "THREADSAGE_DATA_DIR": str(tmp_path / "data"),
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "THREADSAGE_REDIS_PREFIX": f"threadsage-test-{uuid.uuid4().hex[:8]}:",
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": "0123456789abcdef0123456789abcdef",
        "SLACK_API_URL": slack.api_url,
        "THREADSAGE_SECRET": "buttons-" + uuid.uuid4().hex,
    }
    process = serve(["serve"], env, tmp_path)
    try:
        async with aiohttp.ClientSession() as http:
            await process.ready(http)
            before = peak_mib(process.process.pid)
            for body in (b"x" * (64 << 20), chunks(64 << 20)):
                assert await refused(
                    http, f"{process.url}/slack/events", body, headers={"Content-Type": "application/json"}
                )
            assert peak_mib(process.process.pid) - before < 8
    finally:
        code, output = process.stop()
        slack.stop()
    assert code == 0, output


def peak_mib(pid: int) -> int:
    """The process's peak resident memory (VmHWM) so far."""
    line = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1]) // 1024
