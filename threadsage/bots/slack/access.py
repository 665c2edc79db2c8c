"""Slack Connect: people from another organisation are not answered unless
`THREADSAGE_SLACK_ALLOW_EXTERNAL` is true.

A channel shared with another organisation brings its people within the bot's reach, but the
knowledge base is this organisation's. Slack names each person's team: an event's `user_team`
(`team` in payloads without it), an interactive payload's `user.team_id`, a slash command's
`team_id`/`enterprise_id` (see `command_is_external`). A team other than the
bot's own (auth.test's workspace, or its Enterprise Grid organisation) is external. An event that
names no team counts as external in a channel Slack marks `is_ext_shared_channel`.

What an external person is told: when they address the bot (a mention, a DM, a button), an
ephemeral notice (`slack_external` in `threadsage.i18n`, in the language they wrote in) — seen by
them alone, it reveals nothing of the documents and explains the silence. Their other messages in
a thread the bot takes part in get nothing: those are meant for the people there.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any


def person_team(body: dict[str, Any], event: dict[str, Any] | None) -> str | None:
    """The team of the person behind an event (`event` given) or an interactive payload."""
    if event is not None:
        return event.get("user_team") or event.get("team")
    user = body.get("user")
    return user.get("team_id") if isinstance(user, dict) else None


def is_external(body: dict[str, Any], event: dict[str, Any] | None, own_teams: Collection[str]) -> bool:
    """Whether the person behind a delivery belongs to another organisation (Slack Connect)."""
    team = person_team(body, event)
    if team is None:
        return bool(body.get("is_ext_shared_channel"))
    return team not in own_teams


def command_is_external(command: dict[str, Any], own_teams: Collection[str]) -> bool:
    """Whether the person behind a slash command belongs to another organisation.

    A slash command's payload has no `user_team`: Slack documents `team_id` (and `enterprise_id`
    on Enterprise Grid) as "where the user was in Slack" when they typed it. A person can only be
    in a workspace of their own organisation — a Slack Connect partner sees the shared channel
    from their own workspace — so those fields name the invoker's side. One of them being the
    bot's workspace or organisation makes them a colleague; neither (or no team at all) does not.
    """
    teams = {command.get("team_id"), command.get("enterprise_id")} - {None, ""}
    return not teams & set(own_teams)
