"""What the Slack bot says in its own words (answers come from the chat service)."""

from threadsage.chat import Step

ASK_USAGE = (
    "Ask me about the documents: `/ask <question>` posts your question here and I answer in its thread; "
    "`/ask -p <question>` answers you privately, in our direct message; `/ask new` starts our direct "
    "conversation over."
)
ASKED = "<@{user}> asked: {question}"
ASKED_PRIVATELY = "You asked in <#{channel}>: {question}"
ANSWERING_PRIVATELY = "I'll answer you in our direct message."
NOT_A_MEMBER_ASK = "I'm not a member of this conversation, so I'm answering you in our direct message."
NOT_A_MEMBER = (
    "I'm not a member of this conversation: invite me (`/invite @threadsage`), or ask me in a direct message."
)
NO_TEXT = "That message has no text I could take as a question."
NEW_STARTED = "Started a new conversation — ask away."
NEW_ELSEWHERE = "Every `/ask` here starts a thread of its own; `/ask new` starts our direct conversation over."
STEPS = {
    Step.SEARCHING: "Looking in the documents…",
    Step.CHECKING: "Checking what I found…",
    Step.WRITING: "Writing the answer…",
}


def escaped(text: str) -> str:
    """Text shown as written: Slack's three control characters escaped (so a question's `<!channel>`
    pings nobody), nothing else."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescaped(text: str) -> str:
    """Text as Slack sends it (the three control characters escaped) as it was written."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
