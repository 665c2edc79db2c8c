"""Which language the Telegram bot speaks to whom (the words themselves, in every language, are in
`threadsage.i18n`).

A question is answered in its own language; what is said about anything else (a refusal, a
file without a caption) in the language of the message that triggered it when it has words,
else in the language the person's Telegram app is set to, which Telegram sends with each update
as `language_code` (/start and /help always speak that one). A click speaks the language of the
bot's message holding the button (the answer's or the clarification's: the question's), else the
person's.
"""

from __future__ import annotations

from telegram import Message, User

from threadsage.i18n import Language, language_of, language_of_code


def person_language(user: User | None) -> Language:
    """The language the person's Telegram app is set to; English when it is not one we speak."""
    return language_of_code(user.language_code if user else None)


def message_language(message: Message | None, user: User | None) -> Language:
    """The language of a message's text (or a file's caption), a command's name aside ("/start"
    says nothing of its sender's language), else the person's."""
    text = (message.text or message.caption or "") if message is not None else ""
    if text.startswith("/"):
        text = text.partition(" ")[2]
    return language_of(text, person_language(user))
