"""Questions that exclude something: "…other than X", "not counting Y", "X is not part of Z",
"除了X以外".

Searching with the whole question looks for the excluded topic too — its words are as good
search terms as any — so the search finds what the person ruled out (measured: the GitLab
`negation_exclusion` questions found their gold file in the top 5 less often than plain BM25).
`split_exclusion` separates the part to search for from the excluded phrases, and
`without_excluded` moves the passages that are about an excluded phrase, rather than about the
question, below the others.

A statement that sets the scene before a contrasting question ("The People Group's vision is
a results-driven culture. In contrast, which part … is not focused on culture?") describes the
excluded thing: it leaves the search query with the exclusion when the two share a word (or the
question says it is "different"). It does not rank passages down: a scene names many words, some
of which the answer's page shares (measured: GitLab negation questions answered from the gold
file 21/25 this way, 19/25 when scenes ranked passages down too).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from threadsage.adapters.reasoner import Passage
from threadsage.support.text import term_set

# The end of an excluded phrase: a clause boundary, a contrast ("but rather on …"), or a new question.
_UNTIL = (
    r"(?P<x>[^,;?!.。，；？！]+?)"
    r"(?=\s*(?:[,;?!。，；？！]|\.(?:\s|$)|\bbut\b|\band (?:is|are|does|do|which|that)\b|$))"
)
_MARKED = re.compile(
    r"\b(?:other than|except(?: for)?|excluding|not counting|not including|apart from|aside from|"
    r"leaving aside|ignoring|rather than|instead of|but not|unlike|in contrast to)\s+" + _UNTIL,
    re.IGNORECASE,
)
# "which is not a stage in the journey", "not part of the Finance team", "does not relate to X".
_NOT_A = re.compile(
    r"(?:\b(?:is|are|was|were|being)\s+|,\s*|\b(?:that|which|who)\s+)"
    r"not\s+(?:directly\s+|strictly\s+)?(?:(?:a|an|the|one of|part of|related to|relevant to|about|for|"
    r"focused on|a part of|among)\s+)" + _UNTIL,
    re.IGNORECASE,
)
_NOT_VERB = re.compile(
    r"\b(?:does|do|did)\s+not\s+(?:directly\s+)?(?:relate|belong|apply|refer)\s+to\s+" + _UNTIL,
    re.IGNORECASE,
)
# "not X but (rather) Y": X is what the question rules out.
_NOT_BUT = re.compile(r"\bnot\s+(?P<x>[^,;?!.]+?)\s+but(?:\s+rather)?\b", re.IGNORECASE)
_ZH_AROUND = re.compile(r"(?:除了|除去)(?P<x>[^，,。？?！!；;]+?)(?:以外|之外)")
_ZH = re.compile(r"(?:除了|除去|不包括|不算|不含)(?P<x>[^，,。？?！!；;]+?)(?=[，,。？?！!；;]|$)")
# A leading clause before the question proper: "While X, what …", "At GitLab, where X, which …".
_LEADING = re.compile(
    r"^(?!\s*(?:what|which|who|whom|whose|how|where|when|why)\b)(?P<x>.+?),\s*(?=(?:what|which|who|whom|whose|how)\b)",
    re.IGNORECASE,
)
# The question sets itself against what was said before it: "What is the *different* term …".
_CONTRAST = re.compile(r"\b(?:different|distinct|in contrast|by contrast|instead|on the other hand)\b", re.IGNORECASE)
SCENE_TERMS = 4  # a scene is a statement, not a short qualifier such as "For contractors,"
_LEFT_OVER = re.compile(r"\s*(?:[,;，；]\s*)+([,;，；?？.。])|\s+(?=[,;，；?？])")
_SENTENCES = re.compile(r"(?<=[.!。！])\s+(?=[A-Z\u4e00-\u9fff])")


@dataclass(frozen=True)
class Exclusion:
    query: str  # the question without what it excludes: what to search for
    excluded: tuple[str, ...]  # the excluded phrases
    scenes: tuple[str, ...] = ()  # statements setting the scene of an excluded phrase, left out too

    def __bool__(self) -> bool:
        return bool(self.excluded)


def split_exclusion(question: str) -> Exclusion:
    """The question to search with, and the phrases it excludes (none for most questions)."""
    text = " ".join(question.split())
    excluded: list[str] = []

    def cut(match: re.Match[str]) -> str:
        excluded.append(match.group("x").strip(" '\"‘’“”"))
        return " "

    for pattern in (_NOT_BUT, _MARKED, _NOT_A, _NOT_VERB, _ZH_AROUND, _ZH):
        text = pattern.sub(cut, text)
    excluded = [x for x in excluded if term_set(x)]
    if not excluded:
        return Exclusion(question, ())
    scenes: list[str] = []
    text = _without_scene(text, excluded, scenes)
    query = _LEFT_OVER.sub(r"\1", " ".join(text.split())).strip(" ,;，；")
    if not term_set(query):
        return Exclusion(question, ())  # everything was excluded: better the whole question
    return Exclusion(query, tuple(excluded), tuple(scenes))


def _without_scene(text: str, excluded: list[str], scenes: list[str]) -> str:
    """Drop the scene-setting statements that talk about an excluded phrase — leading sentences,
    and the clause before the question word — into `scenes`."""
    ruled_out = frozenset().union(*(term_set(x) for x in excluded))

    *leading, question = _SENTENCES.split(text)
    contrasted = bool(_CONTRAST.search(question))

    def sets_the_scene(part: str) -> bool:
        found = term_set(part)
        return len(found) >= SCENE_TERMS and (contrasted or bool(found & ruled_out))

    kept: list[str] = []
    for sentence in leading:
        (scenes if sets_the_scene(sentence) else kept).append(sentence)
    clause = _LEADING.match(question)
    if clause and sets_the_scene(clause.group("x")):
        scenes.append(clause.group("x"))
        question = question[clause.end() :]
    return " ".join([*kept, question])


def without_excluded(passages: Sequence[Passage], exclusion: Exclusion) -> list[Passage]:
    """The passages about an excluded phrase moved after the others, order kept within each group."""
    keep = [p for p in passages if not about_excluded(p, exclusion)]
    return keep + [p for p in passages if about_excluded(p, exclusion)]


def about_excluded(p: Passage, exclusion: Exclusion) -> bool:
    """Is the passage named after an excluded phrase? When its title or heading names a word only
    the excluded phrase has: "VPN" for "…other than the VPN", "Annual leave" for "…other than
    annual leave" (not "Sick leave": "leave" is a word the question wants)."""
    if not exclusion:
        return False
    wanted = term_set(exclusion.query)
    ruled_out = frozenset().union(*(term_set(x) for x in exclusion.excluded))
    named = term_set(f"{p['title']} {p['heading']}")
    return bool(named & (ruled_out - wanted))
