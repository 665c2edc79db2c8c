"""The console's door under attack: a cookie of non-ASCII bytes is no session (and no traceback),
wrong passwords are throttled per address and logged once a window, a short token refuses to
start, and a session is server-side — rotated at sign-in, ended by signing out in every process
on the database, kept across a restart, gone when the token changes or it expires."""

from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack
from pathlib import Path

import aiohttp
import pytest

from tests.helpers.console import TOKEN, Served, console_served, console_settings
from threadsage.console import console_routes
from threadsage.console.auth import COOKIE
from threadsage.console.sessions import Sessions
from threadsage.console.throttle import SignInThrottle
from threadsage.memory.checkpoints import open_checkpointer


async def raw_get(url: str, path: str, header: bytes) -> tuple[int, bytes]:
    """GET `path` with one header line sent as the bytes given (aiohttp would encode it)."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(
        b"GET " + path.encode() + b" HTTP/1.1\r\nHost: console\r\n" + header + b"\r\nConnection: close\r\n\r\n"
    )
    await writer.drain()
    response = await reader.read()
    writer.close()
    await writer.wait_closed()
    return int(response.split(b" ", 2)[1]), response


async def sign_in(
    console: Served, token: str = TOKEN, http: aiohttp.ClientSession | None = None
) -> aiohttp.ClientResponse:
    async with (http or console.http).post(
        console.url + "/console/signin", data={"token": token}, allow_redirects=False
    ) as response:
        return response


async def signed_in(console: Served, cookie: str) -> bool:
    """Whether `cookie` (a session id) opens a page, sent by a client that has no other cookie."""
    async with (
        aiohttp.ClientSession() as fresh,
        fresh.get(
            console.url + "/console/questions", headers={"Cookie": f"{COOKIE}={cookie}"}, allow_redirects=False
        ) as response,
    ):
        assert response.status in (200, 303), response.status
        return response.status == 200


def session_cookie(response: aiohttp.ClientResponse) -> str:
    return response.cookies[COOKIE].value


async def test_a_non_ascii_cookie_is_not_signed_in_and_logs_no_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        async with console_served(console_settings(tmp_path)) as console:
            for path in ("/console", "/console/gaps", "/console/signin"):
                status, response = await raw_get(console.url, path, b"Cookie: " + COOKIE.encode() + b"=\xe9\xe9")
                assert status in (200, 303), response
            status, _ = await raw_get(
                console.url, "/console/api/overview", b"Cookie: " + COOKIE.encode() + b"=\xe9\xe9"
            )
            assert status == 401
            status, _ = await raw_get(console.url, "/console/api/overview", b"Authorization: Bearer \xe9\xe9")
            assert status == 401
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


async def test_wrong_passwords_are_throttled_per_address_and_logged_once_a_window(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="threadsage.console"):
        async with console_served(console_settings(tmp_path)) as console:
            statuses = []
            for attempt in range(30):
                async with console.http.post(
                    console.url + "/console/signin", data={"token": f"guess-{attempt}"}, allow_redirects=False
                ) as response:
                    statuses.append(response.status)
                    retry = response.headers.get("retry-after")
            assert statuses == [401] * 5 + [429] * 25
            assert retry is not None and 1 <= int(retry) <= 60
            response = await sign_in(console)  # the right password too: guessing must not go on
            assert response.status == 429 and COOKIE not in response.cookies
            async with console.http.get(
                console.url + "/console/api/gaps", headers={"Authorization": f"Bearer {TOKEN}"}
            ) as response:
                assert response.status == 429 and "retry-after" in response.headers
            other = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))  # another address is not held back
            async with aiohttp.ClientSession(connector=other) as elsewhere:
                assert (await sign_in(console, http=elsewhere)).status == 303
    lines = [r for r in caplog.records if "wrong" in r.getMessage()]
    assert len(lines) == 2 and all(r.levelno == logging.WARNING for r in lines), caplog.text
    assert TOKEN not in caplog.text and "guess-" not in caplog.text


def test_the_throttle_forgets_an_address_when_its_window_ends() -> None:
    now = [1000.0]
    throttle = SignInThrottle(limit=5, window=60, clock=lambda: now[0])
    assert [throttle.failed("10.0.0.1") for _ in range(5)] == [1, 2, 3, 4, 5]
    assert throttle.retry_after("10.0.0.1") == 60 and throttle.retry_after("10.0.0.2") == 0
    now[0] += 59.5
    assert throttle.retry_after("10.0.0.1") == 1
    now[0] += 0.5
    assert throttle.retry_after("10.0.0.1") == 0 and throttle.failed("10.0.0.1") == 1
    throttle.succeeded("10.0.0.1")
    assert throttle.failed("10.0.0.1") == 1


def test_the_throttle_keeps_a_bounded_number_of_addresses() -> None:
    throttle = SignInThrottle(limit=5, window=60, capacity=100, clock=lambda: 0.0)
    for n in range(10_000):
        throttle.failed(f"10.0.{n // 256}.{n % 256}")
    assert len(throttle) <= 100


async def test_a_token_shorter_than_24_characters_refuses_to_start(tmp_path: Path) -> None:
    async with AsyncExitStack() as stack:
        with pytest.raises(ValueError, match="at least 24 characters"):
            await console_routes(console_settings(tmp_path, token="x" * 23), stack)
        assert await console_routes(console_settings(tmp_path, token="x" * 24), stack)


async def test_signing_out_ends_the_session_in_every_process(tmp_path: Path, database_url: str) -> None:
    settings = console_settings(tmp_path, database_url)
    async with console_served(settings) as one, console_served(settings) as two:
        first = session_cookie(await sign_in(one))
        second = session_cookie(await sign_in(one))  # rotated: a new session id at every sign-in
        assert first != second and TOKEN not in first
        assert not await signed_in(one, first)  # the browser's old session went with the new sign-in
        assert await signed_in(one, second) and await signed_in(two, second)  # the other process knows it
        async with one.http.post(two.url + "/console/signout", allow_redirects=False) as response:
            assert response.status == 303
        assert not await signed_in(one, second) and not await signed_in(two, second)


async def test_a_session_outlives_a_restart_not_a_new_token(tmp_path: Path, database_url: str) -> None:
    settings = console_settings(tmp_path, database_url)
    async with console_served(settings) as console:
        cookie = session_cookie(await sign_in(console))
    async with console_served(settings) as restarted:
        assert await signed_in(restarted, cookie)
    async with console_served(console_settings(tmp_path, database_url, token="another-console-password-1")) as other:
        assert not await signed_in(other, cookie)


async def test_a_session_expires(tmp_path: Path, database_url: str) -> None:
    async with open_checkpointer(console_settings(tmp_path, database_url)) as checkpointer:
        sessions = Sessions(checkpointer, TOKEN, lifetime=3600)
        await sessions.setup()
        session = await sessions.open(now=1000.0)
        assert await sessions.valid(session, now=1000.0 + 3599)
        assert not await sessions.valid(session, now=1000.0 + 3600)
        later = await sessions.open(now=1000.0 + 7200)  # expired sessions are deleted as others open
        assert await sessions.count() == 1 and await sessions.valid(later, now=1000.0 + 7200)
        for forged in ("", "éé", "\x00", "a" * 10_000, session + "'; DROP TABLE x; --"):
            assert not await sessions.valid(forged, now=1000.0)
