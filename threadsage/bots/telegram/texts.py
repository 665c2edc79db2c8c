"""What the Telegram bot says before it may answer anyone (the rest of its words, in every
language, are in `threadsage.i18n`)."""

NOT_ALLOWED = (
    "Sorry, I can't answer here yet: I only answer chats that whoever runs this bot has allowed.\n"
    "Your user id: {user}\n"
    "This chat's id: {chat}\n"
    "If you should have access, send these ids to them: they add yours (for a private chat) or this chat's "
    "(for a group) to THREADSAGE_TELEGRAM_ALLOWED."
)
NOT_ALLOWED_CLICK = "Sorry, I can't answer here yet: whoever runs this bot has to allow this chat ({chat}) first."
