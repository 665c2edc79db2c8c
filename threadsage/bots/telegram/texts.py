"""What the Telegram bot says in its own words (answers come from the chat service)."""

INVALID_BUTTON = "This button is not valid."
THANKS = {1: "Thanks for the feedback! 👍", 0: "Thanks — noted. 👎"}
HINT_PRIVATE = "Tap an option, or just type your answer."
HINT_GROUP = "Tap an option, or reply to this message with your answer."
NEW_STARTED = "Started a new conversation — ask away."
NEW_IN_GROUP = "In a group every new mention starts a fresh conversation; reply to one of my messages to continue one."
START = (
    "Hi! I answer questions from your organisation's documents, with sources. "
    "Just type a question — or send a document (PDF, Word, Markdown, text) with your question as its caption, "
    "and I answer from it too. /help shows what else I can do."
)
COVERS = "What I can answer here:"
NOTHING_COVERED = "There are no documents I may use here yet."
HELP = """Ask me a question about the documents and I answer with sources.
• Here in a private chat, just type. /new starts a fresh conversation.
• In a group, mention me (@{username}), use /ask <question>, or reply to one of my messages to follow up.
• Send a document with your question as its caption, or reply to one with a question: I read it for this chat only.
• When a question is ambiguous I ask back: tap an option or answer in your own words.
• 👍/👎 under an answer tell the maintainers whether it helped."""
NOT_ALLOWED = (
    "Sorry, I can't answer here yet: I only answer chats that whoever runs this bot has allowed.\n"
    "Your user id: {user}\n"
    "This chat's id: {chat}\n"
    "If you should have access, send these ids to them: they add yours (for a private chat) or this chat's "
    "(for a group) to THREADSAGE_TELEGRAM_ALLOWED."
)
NOT_ALLOWED_CLICK = "Sorry, I can't answer here yet: whoever runs this bot has to allow this chat ({chat}) first."
