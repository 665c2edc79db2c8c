"""Milvus Lite's expected log noise is dropped, and nothing else: no logger's level changes, and
other records of the loggers concerned still arrive."""

from __future__ import annotations

import logging
import subprocess
import sys

from tests.conftest import HANDBOOK
from threadsage.adapters.ingest import Ingestor
from threadsage.adapters.knowledge import KnowledgeBase

LOGGERS = ("pymilvus.client.iterator.query_iterator", "grpc._server", "milvus_lite.server_manager")


def test_importing_the_knowledge_base_leaves_log_levels_alone() -> None:
    code = (
        "import logging, threadsage.adapters.knowledge as k\n"
        f"print([logging.getLogger(n).level for n in {LOGGERS!r}], logging.getLogger().level)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[0,", "0,", "0]", str(logging.WARNING)]  # NOTSET, and the root's default


def test_milvus_lite_noise_is_dropped_and_nothing_else(kb: KnowledgeBase) -> None:
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    keep = Keep(logging.DEBUG)
    for name in LOGGERS:  # on the loggers themselves: pymilvus' may not propagate to the root
        logging.getLogger(name).addHandler(keep)
    try:
        Ingestor(kb, chunk_chars=1200, chunk_overlap=200).ingest_paths([HANDBOOK])
        assert kb.count() > 0  # query iterators: the noise, were it not dropped
        for name in LOGGERS:
            logging.getLogger(name).error("something else went wrong")
    finally:
        for name in LOGGERS:
            logging.getLogger(name).removeHandler(keep)
    assert sorted((r.name, r.getMessage()) for r in seen) == sorted((name, "something else went wrong") for name in LOGGERS)
    assert all(logging.getLogger(name).level == logging.NOTSET for name in LOGGERS)
