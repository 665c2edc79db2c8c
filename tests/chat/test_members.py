"""Members-only knowledge (a private Slack channel's threads): what a turn may read, fail-closed."""

from __future__ import annotations

import pytest

from threadsage.adapters.knowledge.collection import members_category
from threadsage.chat.members import MembersOnly

SECRET, OTHER = members_category("G0SECRET1"), members_category("G0OTHER01")


class Shelf:
    """A knowledge base's category counts (what `MembersOnly` reads of one)."""

    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts

    def category_counts(self) -> dict[str, int]:
        return dict(self.counts)


async def test_members_only_categories_are_taken_out_unless_the_person_is_vouched_for() -> None:
    members = MembersOnly(Shelf({"": 3, "it": 4, SECRET: 1, OTHER: 2}))  # type: ignore[arg-type]
    assert await members.readable(None, frozenset()) == ("", "it")
    assert await members.readable(None, frozenset({"G0SECRET1"})) == ("", "it", SECRET)
    assert await members.readable(("it", SECRET), frozenset()) == ("it",)  # whatever the place names
    assert await members.readable(("it",), frozenset({"G0SECRET1"})) == ("it",)  # nor more than it names
    assert sorted(await members.channels()) == ["G0OTHER01", "G0SECRET1"]
    assert await members.counts(None) == {"": 3, "it": 4}  # their names are never listed


async def test_without_members_only_knowledge_nothing_changes() -> None:
    members = MembersOnly(Shelf({"it": 4}))  # type: ignore[arg-type]
    assert await members.readable(None, frozenset()) is None
    assert await members.readable(("it",), frozenset()) == ("it",)


async def test_categories_that_cannot_be_read_fail_the_turn() -> None:
    class Away:
        def category_counts(self) -> dict[str, int]:
            raise RuntimeError("the knowledge base is down")

    with pytest.raises(RuntimeError, match="down"):
        await MembersOnly(Away()).readable(None, frozenset())  # type: ignore[arg-type]
