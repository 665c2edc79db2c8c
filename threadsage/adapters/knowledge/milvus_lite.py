"""Milvus Lite: Milvus in this process, on a file under the data directory (`MILVUS_URI` unset).

Besides the client it takes two things: releasing its in-process server (and the file's lock)
when done, and leaving out the log records it produces that are not problems, which would
otherwise reach every console. Those are dropped by a filter on the three loggers concerned,
only once a Milvus Lite file is opened and only for the exact records below: every other record
of those loggers, and every logger's level, stay as they are.
"""

from __future__ import annotations

import logging
from pathlib import Path

from milvus_lite.server_manager import server_manager_instance

_EXPECTED = {
    # Milvus Lite has no MVCC timestamps, so every query iterator warns (then does without).
    "pymilvus.client.iterator.query_iterator": "failed to get mvccTs",
    # It serves gRPC in-process and lacks AllocTimestamp, which every iterator asks for first:
    # gRPC's server logs that as an error with a traceback.
    "grpc._server": "Exception calling application: Method not implemented",
    # A failure to start is reported by `open_knowledge_base`, with what to do about it.
    "milvus_lite.server_manager": "Failed to start MilvusLite server",
}


class _ExpectedNoise(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        expected = _EXPECTED.get(record.name)
        return expected is None or not record.getMessage().startswith(expected)


def quiet_expected_noise() -> None:
    """Drop the records above from now on (once per process, however many files are opened)."""
    for name in _EXPECTED:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _ExpectedNoise) for f in logger.filters):
            logger.addFilter(_ExpectedNoise())


def release(path: Path) -> None:
    """Stop the in-process server of `path`: Milvus Lite keeps it (and the file's lock) until told."""
    server_manager_instance.release_server(str(path))


# pymilvus pings its server every 10 s, with or without calls in flight; Milvus Lite's gRPC server
# keeps gRPC's default policy (at most one ping per 5 minutes without data from it, 2 strikes), so
# under load — its Python handlers starved of the interpreter, a response slower than the client's
# pings — it closes the channel with GOAWAY `too_many_pings`, failing the calls on it. A server in
# this very process cannot vanish unseen: no keep-alive pings to it at all. (BDP pings follow data
# from the server, which clears the strikes, and stay: they size the window for ingestion.)
CLIENT_GRPC_OPTIONS = {
    "grpc.keepalive_time_ms": 2**31 - 1,  # gRPC's "never"
    "grpc.keepalive_permit_without_calls": 0,
}


def grpc_options(uri: str) -> dict[str, int]:
    """The client's channel options for `uri`: CLIENT_GRPC_OPTIONS for a Milvus Lite file."""
    return CLIENT_GRPC_OPTIONS if is_lite_file(uri) else {}


def is_lite_file(uri: str) -> bool:
    return bool(uri) and not uri.startswith(("http://", "https://", "tcp://")) and Path(uri).suffix == ".db"


ONE_PROCESS_HINT = (
    " Milvus Lite allows one process per data directory: if a threadsage bot is running on it, "
    "stop it first (or set MILVUS_URI to a Milvus server shared by all processes)."
)
