"""Text in comparable form: content terms, and the form the BM25 index sees.

English words are lower-cased and stemmed ("resetting" → "reset"); Chinese runs are left to
jieba. `terms` also drops stop words: the offline back-end compares questions with passages by
them. `index_form` keeps every word: it is what the knowledge base indexes and searches with, so
that "passwords" finds "password" (measured: better recall on every GitLab question subset).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TypeVar

import jieba
import snowballstemmer

jieba.setLogLevel(logging.WARNING)
_STEMMER = snowballstemmer.stemmer("english")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_TOKEN = re.compile(
    r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[^\W_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+(?:['’][a-z]+)?"
)

# The project's one list of stop words. BM25 drops only the commonest (`adapters/knowledge/schema.py`): its
# IDF discounts the others, and dropping them all there measured worse (GitLab negation questions,
# recall@5 0.64 → 0.52). `terms`, which the offline back-end compares by, has no IDF and drops all.
COMMONEST_WORDS = frozenset(
    """a an the and or of to in on for is are was be it its by as at with from this that do does i you we what which how
    的 了 是 在 和""".split()  # noqa: SIM905 - word lists read best as text
)
STOP_WORDS = COMMONEST_WORDS | frozenset(
    """about above after again against all am any aren't because been before being below between both
    but can can't cannot could couldn't did didn't doesn't doing don't down during each few further
    get gets got had hadn't has hasn't have haven't having he her here hers herself him himself his
    i'm if into isn't it's itself let's me more most my myself no nor not off once only other ought
    our ours ourselves out over own same she should shouldn't so some such than that's their theirs
    them themselves then there there's these they those through too under until up very wasn't were
    weren't what's when where while who whom why will won't would wouldn't your yours yourself
    yourselves s t please tell know need want like also much many anyone someone thing things way
    与 或 吗 呢 吧 啊 我 你 他 她 它 我们 你们 什么 怎么 如何 哪 哪些 多少 几 有 要 会 能 可以 应该 需要 一个""".split()  # noqa: SIM905
)


T = TypeVar("T")


def first_cue(cues: Sequence[tuple[re.Pattern[str], T]], text: str, default: T) -> T:
    """What the first pattern found in the text stands for, else the default: the offline back-end
    reads intent and tone from lexical cues, earlier cues winning over later ones."""
    return next((meaning for cue, meaning in cues if cue.search(text)), default)


@lru_cache(maxsize=50_000)
def _stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


def terms(text: str) -> list[str]:
    """The content terms of `text`, in order, with repeats."""
    out: list[str] = []
    for token in _TOKEN.findall(text.lower()):
        if _CJK_RUN.fullmatch(token):
            out.extend(w for w in jieba.cut_for_search(token) if w not in STOP_WORDS)
        elif token not in STOP_WORDS:
            out.append(_stem(token.replace("’", "'").split("'")[0]))
    return out


def term_set(text: str) -> frozenset[str]:
    return frozenset(terms(text))


def index_form(text: str) -> str:
    """Stemmed, lower-cased words and untouched Chinese runs, space-separated."""
    return " ".join(
        token if _CJK_RUN.fullmatch(token) else _stem(token.replace("’", "'").split("'")[0])
        for token in _TOKEN.findall(text.lower())
    )


@lru_cache(maxsize=100_000)
def _segments(word: str) -> tuple[str, ...]:
    kept = (t.strip().lower() for t in jieba.cut_for_search(word))
    return tuple(t for t in kept if t and t not in COMMONEST_WORDS)


def index_terms(form: str) -> list[str]:
    """The terms BM25 counts in `form` (an `index_form` text), with repeats: what Milvus's
    analyzer (`schema.ANALYZER_PARAMS`: jieba in search mode, lower-case, the commonest
    words dropped) makes of it — checked token for token against Milvus Lite's on the GitLab
    handbook and CMRC. Jieba segments space-separated words one by one, so each distinct word is
    segmented once and cached: ingestion no longer runs jieba over every chunk."""
    return [term for word in form.split() for term in _segments(word)]


def warm_up() -> None:
    """Load jieba's dictionary now (about a second of CPU) rather than in the first turn, where it
    would stall everything else the process is doing."""
    jieba.initialize()


# Where one sentence, list item or line ends and the next begins.
SENTENCE_BREAK = re.compile(r"(?<=[.!?。！？])\s+|\n+")
WRAPPED_CHARS = 50  # a line this long that stops mid-sentence was wrapped (a PDF's text, a hard-wrapped file)
_LINE_ENDS = (".", "!", "?", "。", "！", "？", ":", "：", "|", ";", "；")
_STARTS_ITS_OWN = re.compile(r"\s*(?:[-*•|#>]|```|\d+[.)]\s)")


def unwrapped(text: str) -> str:
    """The text with wrapped lines joined back into their sentences: PDF text comes a line at a
    time ("…calling the Compliance Hotline at 1-" / "800-…"), and the sentence that answers is cut
    in two. A short line (a heading) and a line that ends a sentence stay; so do list items, table
    rows and code."""
    out: list[str] = []
    fenced = False
    for line in text.split("\n"):
        fence = line.lstrip().startswith("```")
        previous = out[-1].rstrip() if out else ""
        wrapped = len(previous.strip()) >= WRAPPED_CHARS and not previous.endswith(_LINE_ENDS)
        # A list item runs on only into a line that continues a sentence (not a new paragraph).
        item = bool(_STARTS_ITS_OWN.match(previous)) and not line.strip()[:1].islower()
        if wrapped and not item and not fenced and not fence and line.strip() and not _STARTS_ITS_OWN.match(line):
            out[-1] = f"{previous} {line.strip()}"
        else:
            out.append(line)
        fenced ^= fence
    return "\n".join(out)
