"""Whom to ask when the documents don't know: a person or channel per knowledge category.

`THREADSAGE_HANDOFF` maps categories to contacts, comma-separated, with `*` for the rest:
`it=#it-help,people=@hr-team,*=#help-desk`. A contact is a channel (`#…`), a person or group
(`@…`), or a few words of plain text (no commas). A Slack id may stand for the name, with the name
that plain-text platforms show after a `|`: `it=#C024BE91L|it-help`, `people=@S0123ABCD|hr-team`.
Slack then mentions it properly (`<#C…>`, `<@U…>`, `<!subteam^S…>`) when
THREADSAGE_HANDOFF_MENTION is on; everywhere else, and in Slack with mentions off, the contact is
shown by its name, so nobody is pinged unless the operator chose so.

This module reads no settings itself (config.py validates the value with `valid_handoff`), so it
can be imported from anywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ANY_CATEGORY = "*"
_SLACK_ID = re.compile(r"^[CGUWS][A-Z0-9]{6,}$")
_MENTION = {"C": "<#{id}>", "G": "<#{id}>", "U": "<@{id}>", "W": "<@{id}>", "S": "<!subteam^{id}>"}
_CATEGORY = re.compile(r"^(\*|[\w.-]{1,128})$")


@dataclass(frozen=True)
class Contact:
    sigil: str  # "#" a channel, "@" a person or group, "" plain text
    name: str  # as people read it, without the sigil
    slack_id: str = ""  # a Slack channel, user or user-group id, when one was given

    @property
    def plain(self) -> str:
        return f"{self.sigil}{self.name}"

    @property
    def slack_mention(self) -> str:
        """The Slack markup that mentions it (`<#C…>`, `<@U…>`, `<!subteam^S…>`); "" without an id."""
        return _MENTION[self.slack_id[0]].format(id=self.slack_id) if self.slack_id else ""


@dataclass(frozen=True)
class Handoff:
    """The contacts per category; `for_category` falls back to the `*` entry."""

    contacts: dict[str, Contact] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.contacts)

    def for_category(self, category: str | None) -> Contact | None:
        found = self.contacts.get(category) if category is not None else None
        return found or self.contacts.get(ANY_CATEGORY)


def parse_handoff(value: str) -> Handoff:
    """The map a THREADSAGE_HANDOFF value describes; ValueError naming the entry that is wrong."""
    contacts: dict[str, Contact] = {}
    for entry in filter(None, (e.strip() for e in value.split(","))):
        category, equals, target = (part.strip() for part in entry.partition("="))
        if not equals or not target or not _CATEGORY.match(category):
            raise ValueError(
                f"THREADSAGE_HANDOFF entry {entry!r} is not CATEGORY=CONTACT (e.g. it=#it-help, *=@help-desk)"
            )
        contacts[category] = _contact(target)
    return Handoff(contacts)


def valid_handoff(value: str) -> str:
    """`value`, once it reads as a map: a malformed THREADSAGE_HANDOFF fails at startup, naming its entry."""
    parse_handoff(value)
    return value


def _contact(target: str) -> Contact:
    sigil = target[0] if target[0] in "#@" else ""
    name = target[len(sigil) :].strip()
    given_id, bar, label = (part.strip() for part in name.partition("|"))
    if sigil and _SLACK_ID.match(given_id):
        return Contact(sigil, label if bar and label else given_id, given_id)
    return Contact(sigil, name)
