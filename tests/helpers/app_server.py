"""uvicorn's server for a test's app, stopped without waiting for a tick.

uvicorn's own stop is polled: `should_exit` is looked at every 0.1 s by its main loop, which cost
each test that served the Slack bot or the console a twentieth of a second on average; here the
main loop waits for `stop()` instead."""

from __future__ import annotations

import asyncio

import uvicorn


class Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._stopping = asyncio.Event()

    async def main_loop(self) -> None:
        await self.on_tick(0)  # the default headers, as uvicorn's first tick sets them
        await self._stopping.wait()

    def stop(self) -> None:
        self.should_exit = True
        self._stopping.set()
