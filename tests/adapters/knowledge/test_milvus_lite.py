"""Milvus Lite's expected log noise is dropped, and nothing else: no logger's level changes, and
other records of the loggers concerned still arrive."""

from __future__ import annotations

import logging

from tests.helpers.locations import HANDBOOK
from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.adapters.knowledge import base as knowledge
from threadsage.ingestion.pipeline import Ingestor

LOGGERS = ("pymilvus.client.iterator.query_iterator", "grpc._server", "milvus_lite.server_manager")


def test_importing_the_knowledge_base_leaves_log_levels_alone() -> None:
    assert knowledge.KnowledgeBase is KnowledgeBase  # imported, here and by conftest
    assert [logging.getLogger(name).level for name in LOGGERS] == [logging.NOTSET] * 3


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
    assert sorted((r.name, r.getMessage()) for r in seen) == sorted(
        (name, "something else went wrong") for name in LOGGERS
    )
    assert all(logging.getLogger(name).level == logging.NOTSET for name in LOGGERS)
