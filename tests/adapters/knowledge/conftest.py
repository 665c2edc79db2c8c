"""Fixtures of the knowledge-base tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.served import milvus_server


@pytest.fixture(scope="module")
def milvus_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An empty Milvus Lite server (a process of its own): the server back-end's tests."""
    with milvus_server(tmp_path_factory.mktemp("milvus")) as uri:
        yield uri
