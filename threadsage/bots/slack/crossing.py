"""Slack's side of escalations across platforms (`threadsage.chat.escalations`, docs/help-channels.md).

- A Slack question whose experts are in a Telegram group: the neutral `Escalation` the Telegram
  bot shows them, with what only Slack knows — the asker's and the channel's names (a user id
  means nothing there) and the question's permalink (`escalation`).
- A question from another platform, shown in a Slack experts' channel as Slack escalations look,
  marked with the escalation's metadata naming only that platform and the question
  (`post_escalation`); and an expert's answer from another platform, relayed into the asker's
  thread, named and linked as a Slack expert's is (`relay`). The Slack notifier does these two.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_sdk.errors import SlackApiError

from threadsage.bots.replies import QUESTION_CHARS
from threadsage.bots.slack.escalations import ESCALATION_EVENT, RELAY_EVENT, Asked, escalation_blocks
from threadsage.bots.slack.sending import SlackSender
from threadsage.bots.slack.texts import escaped, unescaped
from threadsage.chat import Reply
from threadsage.chat.notify import Escalation, ExpertAnswer
from threadsage.i18n import Language, say

log = logging.getLogger(__name__)

_LINK = re.compile(r"<(https?://[^|>]+)\|([^>]*)>")  # mrkdwn's <url|label>


async def escalation(send: SlackSender, asked: Asked, attempt: Reply | None, language: Language) -> Escalation:
    """A Slack question as the experts of another platform are shown it."""
    return Escalation(
        ident=f"slack:{asked.channel}:{asked.ts}",
        asker=await person_name(send, asked.user),
        where=f"#{await channel_name(send, asked.channel)}",
        question=asked.text[:QUESTION_CHARS],
        link=await send.permalink(asked.channel, asked.ts) or "",
        language=language,
        attempt=attempt,
    )


def sources_of(message: dict[str, Any], language: Language) -> str:
    """The sources under a clicked answer (the context block that names them, as `blocks.sources`
    wrote it) as Markdown, for another platform's experts; "" when it cites none."""
    label = f"*{say('sources', language)}:*"
    for block in message.get("blocks") or []:
        for element in block.get("elements") or [] if block.get("type") == "context" else []:
            text = str(element.get("text", ""))
            if text.startswith(label):
                shown = f"**{say('sources', language)}:**{text.removeprefix(label)}"
                return unescaped(_LINK.sub(r"[\2](\1)", shown).replace(" · ", "\n"))
    return ""


async def post_escalation(send: SlackSender, escalation: Escalation, experts: str) -> str:
    """Another platform's question in the Slack experts' channel `experts`: its message's ts."""
    language = escalation.language
    quoted = escaped(escalation.question).replace("\n", "\n>")
    lead = say(
        "escalation" if escalation.link else "escalation_unlinked",
        language,
        asker=escaped(escalation.asker),
        channel=escaped(escalation.where),
        link=escalation.link,
        question=quoted,
    )
    payload = {"platform": escalation.platform, "question": escalation.question[:QUESTION_CHARS]}
    response = await send.client.chat_postMessage(
        channel=experts,
        text=f"{escalation.asker}: {escalation.question}"[:3000],
        blocks=escalation_blocks(lead, escalation.attempt, language),
        unfurl_links=False,
        metadata={"event_type": ESCALATION_EVENT, "event_payload": payload},
    )
    return str(response["ts"])


async def relay(send: SlackSender, escalation: Escalation, answer: ExpertAnswer) -> bool:
    """An expert's answer from another platform in the asker's thread; False when it is gone."""
    _, channel, ts = escalation.ident.split(":", 2)
    text = say(
        "relayed" if answer.link else "relayed_unlinked",
        escalation.language,
        expert=escaped(answer.expert),
        link=answer.link,
        answer=escaped(answer.text),
    )
    try:
        await send.client.chat_postMessage(
            channel=channel,
            thread_ts=ts,
            text=text,
            unfurl_links=False,
            metadata={"event_type": RELAY_EVENT, "event_payload": {"escalation": answer.escalation}},
        )
    except SlackApiError as exc:
        log.warning("an expert's reply from %s could not be relayed: %s", answer.escalation, exc.response.get("error"))
        return False
    return True


async def person_name(send: SlackSender, user: str) -> str:
    """A person's name as people read it (their display name, else their full name), or their id."""
    try:
        person = (await send.client.users_info(user=user)).get("user") or {}
    except SlackApiError as exc:
        log.info("could not read the name of %s: %s", user, exc.response.get("error"))
        return user
    profile = person.get("profile") or {}
    return str(profile.get("display_name") or profile.get("real_name") or person.get("real_name") or user)


async def channel_name(send: SlackSender, channel: str) -> str:
    """A channel's name (without its #), or its id."""
    try:
        info = (await send.client.conversations_info(channel=channel)).get("channel") or {}
    except SlackApiError as exc:
        log.info("could not read the name of %s: %s", channel, exc.response.get("error"))
        return channel
    return str(info.get("name") or channel)
