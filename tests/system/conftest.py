"""System tests: real `threadsage` processes, servers beside them, load. All of them are slow: the
fast tier (`make test-fast`) leaves them out; `make test` runs them on three workers, but for those
marked `timed`, which run one at a time afterwards."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.helpers.deployment import Stack, deployed
from tests.helpers.locations import HANDBOOK
from tests.helpers.served import milvus_server

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def milvus_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Milvus Lite server holding the demo handbook, for every process of the system tests that
    run in this pytest process (the deployments only read it): one server and one ingest a worker,
    not one per module."""
    with milvus_server(tmp_path_factory.mktemp("milvus"), HANDBOOK) as uri:
        yield uri


@pytest.fixture
async def stack(tmp_path: Path, pg_url: str, milvus_uri: str) -> AsyncIterator[Stack]:
    """A deployment's fakes and environment on the module's Milvus server (its processes are
    started by the test)."""
    async with deployed(tmp_path, pg_url, milvus_uri) as deployment:
        yield deployment
