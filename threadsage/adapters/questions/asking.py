"""Whether a message in a help channel asks something, so that the bot answers it unasked.

In a help channel the bot answers without a mention, so it must keep out of conversation: a
statement ("Deploy is done, thanks all"), small talk, an announcement. A message asks when it has a
question mark, opens as a question or a request does ("how do I…", "can someone…", "is there…",
"does anyone know…", "I need help with…", "怎么…", "请问…"), or ends with a Chinese question
particle ("…吗"). Short replies between people ("ok?", "lunch?") are not questions for the
documents: a question mark alone needs `MIN_WORDS` content words ("Who is the CFO?" opens as one).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from threadsage.adapters.questions.small_talk import is_small_talk
from threadsage.support.text import term_set, terms

MIN_WORDS = 2  # content words: "ok?" and "lunch?" are for the people in the channel
NEW_QUESTION_WORDS = 3  # content words of a question of its own, typed while a clarification waits

_QUESTION_MARK = re.compile(r"[?？]\s*\S{0,3}\s*$|[?？]\s")
_OPENS_AS_QUESTION = re.compile(
    r"^\s*(?:hi|hello|hey|quick question|question)?[\s,:!-]*"
    r"(how|what|what's|whats|where|when|who|whom|whose|why|which|can|could|may|might|should|shall|would|will|"
    r"is|are|was|were|am|do|does|did|has|have|had|any(?:one|body)|some(?:one|body)|"
    r"i need|we need|i'm looking for|im looking for|looking for|need help|help|please|pls|"
    r"is there|are there|does anyone|do we|do i|how do|how can|where can|who can|who do)\b",
    re.IGNORECASE,
)
_CHINESE_ASKS = re.compile(
    r"^\s*(请问|请教|问一下|有没有|有人知道|谁知道|怎么|如何|为什么|哪里|哪儿|什么|能否|可否|是否)|[吗呢么][\s。.!！]*$"
)
_CHINESE_ASKING_WORD = re.compile(r"怎么|如何|为什么|哪里|哪儿|哪个|哪些|什么|多少|几|谁|是否|能不能|可不可以|有没有")


def asks_something(text: str) -> bool:
    """Whether `text` asks a question the documents might answer (see the module)."""
    stripped = text.strip()
    words = len(terms(stripped))
    if not words or is_small_talk(stripped):
        return False
    if _OPENS_AS_QUESTION.match(stripped) or (words >= MIN_WORDS and _QUESTION_MARK.search(stripped + " ")):
        return True
    return bool(_CHINESE_ASKS.search(stripped)) or (
        bool(_CHINESE_ASKING_WORD.search(stripped)) and not stripped.endswith(("。", "！", "!"))
    )


def asks_anew(text: str, options: Sequence[str]) -> bool:
    """Whether a message typed while a clarification waits is a question of its own rather than
    the answer: it asks something, in `NEW_QUESTION_WORDS` content words or more, none of which is in
    an option. "the VPN one", "for contractors?" and "2" answer; "And what if my laptop is stolen
    on a trip?" asks anew (taken as the answer, it was appended to the question it did not answer)."""
    asked = term_set(text)
    named = frozenset().union(*(term_set(option) for option in options))
    return len(asked) >= NEW_QUESTION_WORDS and not asked & named and asks_something(text)
