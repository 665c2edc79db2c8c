"""Background work after the acknowledgement: the tasks of one key run one after another in the
order they were spawned, whatever each awaits; other keys run beside them; a failure does not stop
the next."""

from __future__ import annotations

import asyncio

from threadsage.support.background import BackgroundTasks


async def test_tasks_of_one_key_run_in_order_and_other_keys_beside_them() -> None:
    tasks, done = BackgroundTasks(), []

    async def work(name: str, seconds: float) -> None:
        await asyncio.sleep(seconds)
        done.append(name)

    tasks.spawn_in_order("dm", work("file, read slowly", 0.2))
    tasks.spawn_in_order("dm", work("question right after", 0.0))
    tasks.spawn_in_order("other", work("another conversation", 0.05))
    await tasks.drain(5)
    assert done == ["another conversation", "file, read slowly", "question right after"]


async def test_a_failed_task_does_not_stop_the_next_of_its_key() -> None:
    tasks, done = BackgroundTasks(), []

    async def fails() -> None:
        raise RuntimeError("boom")

    async def works() -> None:
        done.append("next")

    tasks.spawn_in_order("dm", fails())
    tasks.spawn_in_order("dm", works())
    await tasks.drain(5)
    assert done == ["next"] and tasks.pending == 0 and not tasks._last
