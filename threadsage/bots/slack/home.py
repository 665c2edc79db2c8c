"""The App Home tab (`app_home_opened` → `views.publish`): what the bot can answer, how to ask, and
the person's recent questions with links to their threads.

"What I can answer" lists the categories a direct message may read (THREADSAGE_DEFAULT_CATEGORIES
once channels are scoped) with their document counts. Recent questions are the last few each
person asked anywhere, kept in the coordinator as JSON for 30 days (a small list per person; two
questions asked in the same instant may keep only one). Their links come from `chat.getPermalink`
when the tab is drawn: Slack's own link, which opens the thread at the message.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, dataclass
from typing import Any

from threadsage.bots.coverage import coverage_lines
from threadsage.bots.replies import place_categories
from threadsage.bots.slack.blocks import context, section
from threadsage.bots.slack.sending import SlackSender
from threadsage.bots.slack.texts import escaped
from threadsage.chat import ChatService
from threadsage.delivery.coordination import Coordinator
from threadsage.i18n import Language, language_of, say
from threadsage.settings.sections import AccessSettings

RECENT = 5
RECENT_TTL = 30 * 24 * 3600.0
QUESTION_CHARS = 120
CATEGORY_LINES = 40


@dataclass(frozen=True)
class Asked:
    """A question as the Home tab lists it: its text and the message to link to."""

    text: str
    channel: str
    ts: str


class RecentQuestions:
    def __init__(self, coordinator: Coordinator) -> None:
        self.coordinator = coordinator

    async def add(self, team: str, user: str, asked: Asked) -> None:
        kept = [a for a in await self.of(team, user) if (a.channel, a.ts) != (asked.channel, asked.ts)]
        asked = Asked(asked.text[:QUESTION_CHARS], asked.channel, asked.ts)
        value = json.dumps([asdict(a) for a in [asked, *kept][:RECENT]])
        await self.coordinator.remember(_key(team, user), value, RECENT_TTL)

    async def of(self, team: str, user: str) -> list[Asked]:
        """Newest first."""
        value = await self.coordinator.recall(_key(team, user))
        return [Asked(**a) for a in json.loads(value)] if value else []


def _key(team: str, user: str) -> str:
    return f"slack-recent:{team}:{user}"


class Home:
    def __init__(self, settings: AccessSettings, chat: ChatService, send: SlackSender, recent: RecentQuestions) -> None:
        self.settings = settings
        self.chat = chat
        self.send = send
        self.recent = recent

    async def publish(self, team: str, user: str, bot_user: str) -> None:
        categories = place_categories(self.settings, "", True)  # what a direct message reads
        counts = await self.chat.documents_by_category(categories)
        asked = await self.recent.of(team, user)
        links = await asyncio.gather(*(self.send.permalink(a.channel, a.ts) for a in asked))
        language = language_of(asked[0].text) if asked else "en"  # the language the person last asked in
        scoped = bool(self.settings.channel_categories)
        view = home_view(counts, list(zip(asked, links, strict=True)), bot_user, scoped, language)
        await self.send.client.views_publish(user_id=user, view=view)


def home_view(
    counts: dict[str, int], asked: list[tuple[Asked, str | None]], bot_user: str, scoped: bool, language: Language
) -> dict[str, Any]:
    def text(key: str, **fields: object) -> str:
        return say(key, language, **fields)

    blocks: list[dict[str, Any]] = [_header(text("home_can_answer"))]
    if counts:
        lines = [f"• {line}" for line in coverage_lines(counts, lambda c: f"*{escaped(c)}*", language)]
        more = len(lines) - CATEGORY_LINES
        shown = lines[:CATEGORY_LINES] + ([text("home_more", count=more)] if more > 0 else [])
        blocks.append(section("\n".join(shown)))
        if scoped:
            blocks.append(context(text("home_scoped")))
    else:
        blocks.append(section(text("home_nothing")))
    blocks += [_header(text("home_how")), section(text("home_how_lines", bot=bot_user)), _header(text("home_recent"))]
    if asked:
        blocks.append(section("\n".join(f"• {_linked(a.text, link)}" for a, link in asked)))
    else:
        blocks.append(section(text("home_none_yet")))
    return {"type": "home", "blocks": blocks}


def _linked(text: str, link: str | None) -> str:
    shown = escaped(" ".join(text.split())).replace("|", "¦")  # a "|" would end the link
    return f"<{link}|{shown}>" if link else shown


def _header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text", "text": text}}
