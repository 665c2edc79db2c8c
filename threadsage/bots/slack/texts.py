"""How the Slack bot writes its own words and reads people's: the catalogue keys of its progress
labels (the words themselves, in every language, are in `threadsage.i18n`), Slack's escaping, and
a message's text as a question."""

import re

_MENTION = re.compile(r"<@[A-Z0-9]+>")


def escaped(text: str) -> str:
    """Text shown as written: Slack's three control characters escaped (so a question's `<!channel>`
    pings nobody), nothing else."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescaped(text: str) -> str:
    """Text as Slack sends it (the three control characters escaped) as it was written."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def question_text(text: str | None) -> str:
    """A message's text as a question: mentions of the bot (or anyone) removed."""
    return _MENTION.sub("", text or "").strip()
