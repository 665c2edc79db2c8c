"""Small talk for the offline back-end: recognising it, and which short friendly reply fits.

Searching the documents for "How's your day going?" finds passages that mention days and
going, and quoting them is absurd. A message is small talk when it opens with a greeting or
thanks, when it is a short closing that thanks or says goodbye anywhere in it and asks nothing
("Ok, that's all for now — bye!", "好的，就这些，谢谢！"), or when every content word it has is
conversational ("day", "going", "weekend", "feel"…): nothing in it could be looked up.
"""

from __future__ import annotations

import re
from functools import cache

from threadsage.support.text import first_cue, term_set, terms

GREETING = re.compile(
    r"^\s*(hi|hello|hey|hiya|yo|good (morning|afternoon|evening|night)|thanks?( you)?|thx|cheers|bye|"
    r"goodbye|see you|who are you|what can you do|how are you|how's it going|what's up|nice to meet you|"
    r"你好|您好|谢谢|再见|早上好|晚安)\b[\s!.?,]*",
    re.IGNORECASE,
)
GREETING_TERMS = 3  # "hello, can you tell me the hotel limit?" is a question, not a greeting
CLOSING_TERMS = 5  # "thanks, and how many days of leave do I get" is a question that thanks first
_ASKS = re.compile(r"[?？]")


@cache
def _conversational() -> frozenset[str]:
    """Words of conversation, not of documents (stemmed as `terms` stems them). Made on first use:
    the Chinese ones load jieba's dictionary (about a second), which importing the command that
    only ingests or searches should not pay."""
    return term_set(
        """how's what's it's that's i'm you're hi hello hey day days going go doing today tonight weekend week
    morning afternoon evening night life things thing well fine good great ok okay cool nice awesome
    happy sad tired bored busy feel feeling hope hoping hopefully wish glad lol haha thanks thank cheers bye
    joke fun funny name bot human robot real doing job alright sure yes yeah nope now done
    今天 过得 怎么样 好 好的 你好 谢谢 哈哈 晚安 再见 拜拜 就 这些 没有 了""",
    )


_THANKS = re.compile(r"thank|thx|cheers|谢谢|多谢|感谢", re.IGNORECASE)
_BYE = re.compile(r"\b(bye|goodbye|see you|see ya|good night|take care)\b|再见|晚安|拜拜|回头见", re.IGNORECASE)
_HOW_ARE_YOU = re.compile(r"\bhow('s| is| are)\b.*\b(you|your|it going|things)\b|怎么样|好吗", re.IGNORECASE)
_REPLIES = ((_THANKS, "chat_thanks"), (_BYE, "chat_bye"), (_HOW_ARE_YOU, "chat_how_are_you"))


def is_small_talk(message: str) -> bool:
    words = terms(message)
    if GREETING.match(message) and len(words) <= GREETING_TERMS:
        return True
    closing = _THANKS.search(message) or _BYE.search(message)
    if closing and not _ASKS.search(message) and len(words) <= CLOSING_TERMS:
        return True
    return bool(words) and set(words) <= _conversational()


def reply_key(message: str) -> str:
    """The catalogue text (`threadsage.i18n`) that answers in kind, and says what the bot is for."""
    return first_cue(_REPLIES, message, "chat_hello")
