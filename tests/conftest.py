"""The fixtures (tests/helpers/fixtures.py, loaded where tests run) and the guard of the test tiers."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.locations import EVAL, REPO


def pytest_configure(config: pytest.Config) -> None:
    """The shared fixtures load in every process that runs tests; xdist's controller (`-n N`, not a
    worker) runs none, and importing the product there would cost it about 5 s of CPU. Until the
    tests are collected the garbage collector is off: importing the product and every test module
    makes objects that live on, which its passes would only walk again (pytest_collection_finish)."""
    controller = not hasattr(config, "workerinput") and config.getoption("numprocesses", None)
    if not controller:
        gc.disable()
        config.pluginmanager.import_plugin("tests.helpers.fixtures")


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.enable()


# --- test tiers ----------------------------------------------------------------------------

# `make test-fast` runs `-m "not slow"`. Slow is marked where the test is: everything under
# tests/system/ (its conftest.py), `pytestmark = pytest.mark.slow` in a slow module, or
# `@pytest.mark.slow` on one test. So that a slow test cannot land in the fast tier unnoticed, a
# fast test fails when it asks for the eval corpora (at collection), reads a file under them, or
# starts a process other than the QUICK_TOOLS (git, uname), a file reader and the children listed below.
QUICK_CHILDREN = {
    # A spinning render must fail the test, not hang it: rendered in a child with a deadline (~0.5 s).
    "tests/bots/render/test_render.py::test_placeholder_lookalikes_render_promptly",
}
EVAL_FIXTURES = {"eval_dir", "gitlab_kb"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A fast test that needs the eval corpora is an error: mark it slow."""
    for item in items:
        needs = EVAL_FIXTURES & set(getattr(item, "fixturenames", ()))
        if needs and item.get_closest_marker("slow") is None:
            raise pytest.UsageError(f"{item.nodeid} reads the eval corpora ({', '.join(sorted(needs))}): mark it slow")


_seen: list[str] | None = None  # what the running fast test did that belongs in the slow tier
# Programs a fast test may start: git (the git connector's tool), uname (`platform.processor()`,
# which the openai SDK reads once a process for its request headers), and the product's own file
# readers (ingestion parses every file in one; the pool starts once a process, in about a second).
QUICK_TOOLS = {"git", "uname"}
READER = ["-m", "threadsage.adapters.documents.reader_process"]


def _watch(event: str, args: tuple) -> None:
    if _seen is None:
        return
    if event == "subprocess.Popen":
        executable, argv = args[0], args[1]
        command = [str(part) for part in (argv if isinstance(argv, list | tuple) else [argv or executable])]
        if Path(command[0]).name not in QUICK_TOOLS and command[1:3] != READER:
            _seen.append("started " + " ".join(command)[:120])
    elif event == "open" and isinstance(args[0], str | Path) and Path(args[0]).resolve().is_relative_to(EVAL):
        _seen.append(f"read {args[0]}")


sys.addaudithook(_watch)


@pytest.fixture(autouse=True)
def _fast_stays_fast(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fails a fast test (and its function-scoped fixtures) that starts a process or reads the eval corpora."""
    global _seen
    module = request.node.path.relative_to(REPO).as_posix()
    name = request.node.nodeid.rpartition("::")[2].partition("[")[0]
    if request.node.get_closest_marker("slow") or f"{module}::{name}" in QUICK_CHILDREN:
        yield
        return
    _seen = []
    try:
        yield
    finally:
        seen, _seen = _seen, None
    if seen:
        pytest.fail(
            f"a fast test {seen[0]}" + (f" (and {len(seen) - 1} more)" if len(seen) > 1 else "") + ": mark it slow"
        )
