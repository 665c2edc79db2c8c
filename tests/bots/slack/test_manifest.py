"""deploy/slack-app-manifest.yml against the code: every event, command and shortcut the bolt app
listens to is in the manifest, with the scopes it needs, and so is every scope of the Web API
methods the bot calls while answering at each entry point. What the app listens to is read from
the listeners registered with bolt, not from a list kept by hand."""

from __future__ import annotations

import inspect
from pathlib import Path
from re import Pattern

import yaml
from slack_bolt.async_app import AsyncApp
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant

from tests.fakes.slack_api import BOT_USER, app_context_changed, assistant_thread, home_opened
from tests.helpers.locations import REPO
from tests.helpers.slack_harness import (
    AMBIGUOUS,
    CHANNEL,
    Harness,
    dm_message,
    next_ts,
    thread_messages,
    user_message,
)
from threadsage.bots.slack import SlackBot
from threadsage.bots.tokens import Signer
from threadsage.settings.environment import Settings

MANIFEST = REPO / "deploy" / "slack-app-manifest.yml"
# A listener of "message" receives the message.* events subscribed to: one per kind of conversation.
MESSAGE_EVENTS = ["message.channels", "message.groups", "message.im", "message.mpim"]
# The scope each bot event needs (docs.slack.dev/reference/events/<event>).
EVENT_SCOPES = {
    "app_mention": "app_mentions:read",
    "app_home_opened": None,
    "app_context_changed": None,
    "assistant_thread_started": None,
    "assistant_thread_context_changed": None,
    "message.channels": "channels:history",
    "message.groups": "groups:history",
    "message.im": "im:history",
    "message.mpim": "mpim:history",
    "reaction_added": "reactions:read",
    "reaction_removed": "reactions:read",
    "channel_archive": "channels:read",
    "channel_deleted": "channels:read",
    "channel_left": "channels:read",
    "group_archive": "groups:read",
    "group_deleted": "groups:read",
    "group_left": "groups:read",
}
# The scopes each Web API method needs (docs.slack.dev/reference/methods/<method>); reading a thread
# back needs the history scope of each kind of conversation it may be in.
HISTORY = {"channels:history", "groups:history", "im:history", "mpim:history"}
METHOD_SCOPES: dict[str, set[str]] = {
    "auth.test": set(),
    "chat.postMessage": {"chat:write"},
    "chat.update": {"chat:write"},
    "chat.postEphemeral": {"chat:write"},
    "chat.delete": {"chat:write"},
    "chat.startStream": {"chat:write"},
    "chat.appendStream": {"chat:write"},
    "chat.stopStream": {"chat:write"},
    "chat.getPermalink": set(),
    "reactions.add": {"reactions:write"},
    "reactions.remove": {"reactions:write"},
    "views.publish": set(),
    "conversations.open": {"im:write"},
    "conversations.replies": HISTORY,
    "conversations.history": HISTORY,
    "assistant.threads.setStatus": {"chat:write"},  # or assistant:write, for the time being
    "assistant.threads.setSuggestedPrompts": {"assistant:write"},
    "assistant.threads.setTitle": {"assistant:write"},
    "users.info": {"users:read"},
    "conversations.members": {"channels:read", "groups:read"},  # a public channel's, a private one's
}
# The assistant experience's events: handled for an app still on assistant_view, not in our manifest
# (agent_view); an app on agent_view receives `app_context_changed` and `app_home_opened` instead.
ASSISTANT_VIEW_ONLY = {"assistant_thread_started", "assistant_thread_context_changed"}
# bolt's Assistant middleware holds listeners of its own, one list per event it routes.
ASSISTANT_EVENTS = {
    "_thread_started_listeners": "assistant_thread_started",
    "_thread_context_changed_listeners": "assistant_thread_context_changed",
}


def listened(app: AsyncApp) -> dict[str, set[str]]:
    """The event types, slash commands and shortcut callback ids the app's listeners match: the
    values bolt's matcher functions closed over when the listeners were registered."""
    kinds = {"event_type": "events", "command": "commands", "callback_id": "shortcuts"}
    found: dict[str, set[str]] = {kind: set() for kind in kinds.values()}
    for listener in app._async_listeners:
        for matcher in listener.matchers:
            test = inspect.getclosurevars(matcher.func).nonlocals.get("func")  # bolt wraps it for asyncio
            for name, value in inspect.getclosurevars(test).nonlocals.items() if test else ():
                if name in kinds:
                    found[kinds[name]].add(value.pattern if isinstance(value, Pattern) else value)
    for middleware in app._async_middleware_list:
        if isinstance(middleware, AsyncAssistant):
            found["events"] |= {event for lists, event in ASSISTANT_EVENTS.items() if getattr(middleware, lists)}
            found["assistant"] = {"assistant_view"}
    return found


def missing_from(manifest: dict, app: AsyncApp) -> list[str]:
    """What the app listens to (and the scopes that takes) that the manifest does not declare."""
    listens = listened(app)
    features, settings = manifest["features"], manifest["settings"]
    subscribed = set(settings["event_subscriptions"]["bot_events"])
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    commands = {c["command"] for c in features.get("slash_commands", [])}
    shortcuts = {s["callback_id"] for s in features.get("shortcuts", []) if s["type"] == "message"}
    missing = []
    for event in sorted(listens["events"] - (ASSISTANT_VIEW_ONLY if "agent_view" in features else set())):
        for bot_event in MESSAGE_EVENTS if event == "message" else [event]:
            scope = EVENT_SCOPES.get(bot_event, f"unknown: add {bot_event} to EVENT_SCOPES")
            missing += [f"event {bot_event}"] if bot_event not in subscribed else []
            missing += [f"scope {scope} ({bot_event})"] if scope not in scopes | {None} else []
    missing += [f"command {c}" for c in listens["commands"] - commands]
    missing += [f"message shortcut {s}" for s in listens["shortcuts"] - shortcuts]
    if (listens["commands"] or listens["shortcuts"]) and "commands" not in scopes:
        missing.append("scope commands")
    if listens.get("assistant"):  # the agent DM (or AI panel): the feature, and the scope its methods take
        missing += [] if {"agent_view", "assistant_view"} & set(features) else ["feature agent_view"]
        missing += [] if "assistant:write" in scopes else ["scope assistant:write"]
    return sorted(missing)


def load_manifest() -> dict:
    return yaml.safe_load(MANIFEST.read_text())


def a_bot(tmp_path: Path) -> SlackBot:
    settings = Settings(
        THREADSAGE_DATA_DIR=tmp_path, SLACK_BOT_TOKEN="xoxb-test", SLACK_SIGNING_SECRET="s", _env_file=None
    )
    return SlackBot(settings, None, signer=Signer(b"k" * 32), dispatch=lambda job: None)  # type: ignore[arg-type,return-value]


async def test_the_manifest_declares_what_the_bot_listens_to(tmp_path: Path) -> None:
    bot = a_bot(tmp_path)
    listens = listened(bot.app)
    assert {"app_mention", "message", "app_home_opened"} <= listens["events"]  # the listeners were found
    assert {"assistant_thread_started", "assistant_thread_context_changed"} <= listens["events"]  # both sets handled
    assert "app_context_changed" in listens["events"]
    assert listens["commands"] == {"/ask"} and listens["shortcuts"] == {"ask_threadsage"}
    manifest = load_manifest()
    assert missing_from(manifest, bot.app) == []
    assert manifest["features"]["agent_view"]["agent_description"] and "assistant_view" not in manifest["features"]
    assert len(manifest["features"]["agent_view"]["agent_description"]) <= 300
    assert not ASSISTANT_VIEW_ONLY & set(manifest["settings"]["event_subscriptions"]["bot_events"])
    home = manifest["features"]["app_home"]
    assert home["messages_tab_enabled"] and not home["messages_tab_read_only_enabled"] and home["home_tab_enabled"]
    assert manifest["settings"]["interactivity"]["is_enabled"]
    await bot._session.close()


async def test_a_listener_whose_event_the_manifest_lacks_is_found(tmp_path: Path) -> None:
    bot = a_bot(tmp_path)
    without_mpim = load_manifest()
    without_mpim["settings"]["event_subscriptions"]["bot_events"].remove("message.mpim")
    assert missing_from(without_mpim, bot.app) == ["event message.mpim"]
    without_panel = load_manifest()
    del without_panel["features"]["agent_view"]
    without_panel["oauth_config"]["scopes"]["bot"].remove("assistant:write")
    without_panel["settings"]["event_subscriptions"]["bot_events"].remove("app_context_changed")
    assert missing_from(without_panel, bot.app) == [
        "event app_context_changed",
        "event assistant_thread_context_changed",  # without agent_view, the assistant experience's events
        "event assistant_thread_started",
        "feature agent_view",
        "scope assistant:write",
    ]

    async def listener() -> None: ...

    bot.app.event("member_joined_channel")(listener)
    bot.app.command("/forget")(listener)
    assert missing_from(load_manifest(), bot.app) == [
        "command /forget",
        "event member_joined_channel",
        "scope unknown: add member_joined_channel to EVENT_SCOPES (member_joined_channel)",
    ]
    await bot._session.close()


async def test_the_scopes_cover_every_method_called_at_every_entry_point(slack: Harness) -> None:
    ts = await slack.mention(AMBIGUOUS)  # a mention, its clarification and the click
    dm_ts = next_ts()
    await slack.event(
        {
            "type": "message",
            "channel": "D222",
            "user": "U222",
            "text": "What is the rate limit per API key?",
            "ts": dm_ts,
            "event_ts": dm_ts,
            "channel_type": "im",
        }
    )
    _, asked = await slack.ask("What is the rate limit per API key?")
    await slack.shortcut(user_message("What is the rate limit per API key?"))
    await slack.settle()
    [private] = slack.private(asked)  # shared in the channel, and continued in a DM
    await slack.click_private(private, "private:share")
    await slack.click_private(private, "private:move")
    [clarification] = thread_messages(slack.fake, ts)
    await slack.click(clarification, 0)
    await slack.event(home_opened("U222"))
    await slack.event(app_context_changed("U222", CHANNEL))  # the agent DM: the channel in view, then opened
    await slack.event(home_opened("U222", "messages"))
    panel_ts = next_ts()  # the AI panel: opened beside the channel, then asked in
    await slack.event(assistant_thread("assistant_thread_started", "U222", "D222", panel_ts, {"channel_id": CHANNEL}))
    await slack.settle()
    await slack.event(dm_message("What is the rate limit per API key?", "D222", thread_ts=panel_ts))
    await slack.settle()
    called = {name for name, _ in slack.fake.calls if "/" not in name and "#" not in name and name != "response_url"}
    assert {"chat.postMessage", "chat.update", "views.publish", "conversations.open", "chat.getPermalink"} <= called
    assert {"assistant.threads.setSuggestedPrompts", "assistant.threads.setTitle", "users.info"} <= called
    unknown = called - METHOD_SCOPES.keys()
    assert not unknown, f"add the scopes of {unknown} to METHOD_SCOPES (from Slack's method reference)"
    needed = set().union(*(METHOD_SCOPES[method] for method in called))
    assert needed <= set(load_manifest()["oauth_config"]["scopes"]["bot"])
    assert CHANNEL in {m["channel"] for m in slack.fake.posted()}


def group_dm_message(channel: str, text: str, thread_ts: str | None = None) -> dict:
    """A message event from message.mpim, by someone other than the asker."""
    ts = next_ts()
    event = {"type": "message", "channel": channel, "user": "U333", "text": text, "ts": ts, "event_ts": ts}
    return {**event, "channel_type": "mpim", **({"thread_ts": thread_ts} if thread_ts else {})}


async def test_in_a_group_dm_a_mention_is_answered_and_its_thread_followed(slack: Harness) -> None:
    """What message.mpim brings: follow-ups in group-DM threads (a mention arrives as app_mention)."""
    group = "G0GROUP"
    ts = next_ts()
    await slack.event(
        {
            "type": "app_mention",
            "user": "U222",
            "text": f"<@{BOT_USER}> What is the rate limit per API key?",
            "ts": ts,
            "event_ts": ts,
            "channel": group,
        }
    )
    await slack.settle()
    await slack.event(group_dm_message(group, "and when it is exceeded?", thread_ts=ts))
    await slack.event(group_dm_message(group, "lunch?"))
    await slack.settle()
    assert [m["channel"] for m in thread_messages(slack.fake, ts)] == [group, group]
    assert len(slack.fake.posted()) == 2  # top-level chatter in the group is not for the bot
