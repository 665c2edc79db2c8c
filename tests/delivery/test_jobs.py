"""A bot's table of job handlers: each kind to its handler with its payload read into the kind's
type; a kind it does not know, or a payload it cannot read, is logged and finished — never
raised to the queue, which would try it again and hold up the conversation behind it."""

from __future__ import annotations

import logging

import pytest
from pydantic import BaseModel

from threadsage.delivery.jobs import Handler, Handlers, Job


class Greeting(BaseModel):
    name: str
    times: int


class Table:
    """Handlers that note what they were given."""

    def __init__(self) -> None:
        self.done: list[tuple[str, object]] = []
        self.handlers = Handlers(
            "chat",
            [
                Handler("greet", Greeting.model_validate, self.greet, self.sorry),
                Handler("wave", str, self.wave),  # nobody to apologise to
            ],
        )

    async def greet(self, greeting: Greeting) -> None:
        self.done.append(("greet", greeting))

    async def sorry(self, greeting: Greeting) -> None:
        self.done.append(("sorry", greeting))

    async def wave(self, payload: str) -> None:
        self.done.append(("wave", payload))


async def test_each_kind_goes_to_its_handler_with_its_payload_typed() -> None:
    table = Table()
    await table.handlers.perform(Job("chat", "greet", {"name": "Ann", "times": 2}, "k"))
    await table.handlers.give_up(Job("chat", "greet", {"name": "Bo", "times": 1}, "k"))
    await table.handlers.perform(Job("chat", "wave", {"hand": "left"}, "k"))
    await table.handlers.give_up(Job("chat", "wave", {"hand": "left"}, "k"))  # no apology for this kind
    assert table.done == [
        ("greet", Greeting(name="Ann", times=2)),
        ("sorry", Greeting(name="Bo", times=1)),
        ("wave", "{'hand': 'left'}"),
    ]


@pytest.mark.parametrize("finish", ["perform", "give_up"])
async def test_a_kind_it_does_not_know_is_logged_and_finished(finish: str, caplog: pytest.LogCaptureFixture) -> None:
    table = Table()
    with caplog.at_level(logging.ERROR, "threadsage.delivery.jobs"):
        await getattr(table.handlers, finish)(Job("chat", "reaction", {"emoji": "+1"}, "k"))
    assert table.done == []
    [record] = caplog.records
    assert record.getMessage() == "chat job of unknown kind 'reaction' dropped (this version handles greet, wave)"


@pytest.mark.parametrize("finish", ["perform", "give_up"])
async def test_a_payload_it_cannot_read_is_logged_without_its_values_and_finished(
    finish: str, caplog: pytest.LogCaptureFixture
) -> None:
    table = Table()
    with caplog.at_level(logging.ERROR, "threadsage.delivery.jobs"):
        await getattr(table.handlers, finish)(Job("chat", "greet", {"name": "Ann", "times": "my password"}, "k"))
        await getattr(table.handlers, finish)(Job("chat", "greet", ["not", "a", "dict"], "k"))  # type: ignore[arg-type]
    assert table.done == []
    messages = [record.getMessage() for record in caplog.records]
    assert messages[0].startswith("chat greet job dropped: its payload cannot be read (times: Input should be")
    assert messages[1].startswith("chat greet job dropped: its payload cannot be read (payload: Input should be")
    assert "my password" not in caplog.text
