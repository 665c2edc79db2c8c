"""The HTTP plumbing every fake server shares: a threaded server on 127.0.0.1 that hands each
POST to a function and writes back its JSON answer (or streams it, `Streamed`), and the start/stop
of a fake API built on it."""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

# (path, headers, raw body) -> (status, extra headers, JSON-able payload, a ready string, or bytes as they are)
Responder = Callable[[str, dict[str, str], bytes], tuple[int, dict[str, str], Any]]
DROP = 0  # the status with which a responder has the connection closed without an answer


@dataclass
class Slow:
    """A payload that takes `seconds` to be ready (a model computing its reply). Meanwhile the
    connection is watched: a client that closes it gets nothing, and `abandoned` is called — what
    a real server sees when the client gives up, and why it can stop generating."""

    seconds: float
    payload: Any
    abandoned: Callable[[], None]


@dataclass
class Streamed:
    """A reply sent as it is computed, in server-sent events over chunked transfer encoding (how
    OpenAI's API streams): nothing for `first_seconds` (the prompt being read), then one piece each
    `seconds_each`. A client that closes the connection meanwhile gets nothing more and `abandoned`
    is called; `cut_after` pieces, when set, the connection is closed without the end (a server
    killed mid-reply)."""

    first_seconds: float
    pieces: list[bytes]
    seconds_each: float
    abandoned: Callable[[], None]
    cut_after: int | None = None


def _closed_within(connection: socket.socket, seconds: float) -> bool:
    """Whether the client closes `connection` within `seconds` (it sends nothing more: a request
    body was read whole, so readable means end of stream)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([connection], [], [], min(left, 0.02))
        if readable:
            try:
                if connection.recv(1, socket.MSG_PEEK) == b"":
                    return True
            except OSError:
                return True
    return False


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # The socketserver default backlog is 5: a burst of connections, which a real API takes, would
    # be reset by the fake's own listen queue.
    request_queue_size = 1024


class JsonServer:
    def __init__(self, respond: Responder) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes: without TCP_NODELAY the body would wait
            # for the client's delayed ACK (~40 ms a call), which no real server makes anyone pay.
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, headers, payload = respond(self.path, dict(self.headers.items()), raw)
                if isinstance(payload, Streamed):
                    self._stream(status, headers, payload)
                    return
                if isinstance(payload, Slow):
                    if _closed_within(self.connection, payload.seconds):
                        payload.abandoned()
                        self.close_connection = True
                        return
                    payload = payload.payload
                if status == DROP:  # the connection lost before an answer: the client sees it closed
                    self.close_connection = True
                    return
                text = payload if isinstance(payload, str | bytes) else json.dumps(payload)
                data = text if isinstance(text, bytes) else text.encode()
                try:
                    self.send_response(status)
                    for name, value in {
                        "Content-Type": "application/json",
                        "Content-Length": str(len(data)),
                        **headers,
                    }.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def _stream(self, status: int, headers: dict[str, str], reply: Streamed) -> None:
                if _closed_within(self.connection, reply.first_seconds):
                    reply.abandoned()
                    self.close_connection = True
                    return
                try:
                    self.send_response(status)
                    for name, value in {
                        "Content-Type": "text/event-stream; charset=utf-8",
                        "Cache-Control": "no-cache",
                        "Transfer-Encoding": "chunked",
                        **headers,
                    }.items():
                        self.send_header(name, value)
                    self.end_headers()
                    for n, piece in enumerate(reply.pieces):
                        if n == reply.cut_after:
                            self.close_connection = True  # no last chunk: the client sees the body cut
                            return
                        if n and _closed_within(self.connection, reply.seconds_each):
                            raise BrokenPipeError
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    reply.abandoned()
                    self.close_connection = True

            def do_GET(self) -> None:
                self.do_POST()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = _Server(("127.0.0.1", 0), Handler)
        # serve_forever notices shutdown() only between polls: its default 0.5 s poll made every
        # test that stops a fake half a second slower.
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class ServedFake:
    """A fake API whose `_respond` answers on a JsonServer between `start()` and `stop()`; `url` is
    where it listens. One lifecycle for the fakes a test starts and stops around its run."""

    _server: JsonServer | None = None

    def _respond(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, str], Any]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the fake first"
        return self._server.url

    def start(self) -> Self:
        self._server = JsonServer(self._respond)
        return self

    def stop(self) -> None:
        if self._server:
            self._server.stop()
