"""What a search asks and returns, shared by the two back-ends (`embedded.py`, `server.py`), and
the reciprocal-rank fusion (k = 60) both use for hybrid search, `reciprocal_rank_fusion` (score
Σ 1/(k + rank), ranks from 1, the first list's on ties; Milvus's `RRFRanker` computes the same).

With embeddings, up to three rankings are fused (`rankings_to_fuse`): BM25; the dense one over every
passage (`THREADSAGE_DENSE_SEARCH=all`); and, for a question in none of the documents' languages
(`THREADSAGE_DOCUMENT_LANGUAGES`), the dense one over the passages in another language than the
question's. That last one is what lets a Chinese question reach English pages: BM25 shares no word
with them, and in one dense ranking over all passages those in the question's own language sit
nearer to it and fill the top 5 (docs/performance.md, "Other languages offline"). A question in
one of the documents' languages is searched as without it: even a single passage in another
language would take a place in every such question's top 5 (a CMRC paragraph of English song
titles did).

Whatever the ranking, its k results are k places (`by_place`): a PDF page or a long section is
split into several chunks, and the chunks of one place among the best are returned as one hit.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from threadsage.adapters.knowledge.filters import FilterArgs
from threadsage.adapters.reasoner import Passage
from threadsage.support.text import index_terms

RRF_K = 60
# Candidates each retriever contributes before fusion: enough for RRF to reorder the top k.
CANDIDATES_PER_RETRIEVER = 40
# Hits asked for first, per place wanted (`places_known`): most questions' best hits fill their
# places well within this; the rest are asked again for `CANDIDATES_PER_RETRIEVER`.
FIRST_HITS_PER_PLACE = 3


@dataclass(frozen=True)
class Hit:
    id: str
    doc_id: str
    source: str
    path: str
    title: str
    heading: str
    chunk_index: int
    category: str
    text: str
    score: float
    url: str = ""  # where the document can be read on the web, if anywhere


def passage(hit: Hit) -> Passage:
    """The hit as the graph keeps it in state."""
    return Passage(
        id=hit.id,
        path=hit.path,
        source=hit.source,
        title=hit.title,
        heading=hit.heading,
        text=hit.text,
        score=hit.score,
        url=hit.url,
    )


HIT_FIELDS = [
    "doc_id", "source", "path", "title", "heading", "chunk_index", "category", "text",
]  # fmt: skip


@dataclass(frozen=True)
class Query:
    indexed: str  # the query in `index_form`, as BM25 sees it
    terms: list[str]  # what BM25 counts of it (`text.index_terms`)
    vector: list[float] | None  # the dense query vector, for hybrid search
    k: int
    filter: FilterArgs  # the Milvus filter for categories and paths, as the server takes it
    categories: Sequence[str] | None
    paths: Sequence[str] | None
    fields: list[str]  # the hit fields the Milvus collection has (older ones lack the link)
    # The filter of the dense ranking over the passages in another language than the question's;
    # None: no such ranking (BM25 only, a question in one of the documents' languages, or a
    # collection made before passages had a language).
    other_languages: FilterArgs | None = None
    dense_everywhere: bool = True  # the dense ranking over every passage is fused too

    @property
    def pool(self) -> int:
        """How many candidates each retriever gives the fusion."""
        return max(self.k, CANDIDATES_PER_RETRIEVER)


def rankings_to_fuse(lexical: list[str], everywhere: list[str], other: list[str]) -> list[list[str]]:
    """The non-empty rankings the query fuses, in the order ties go (ids; `everywhere` and `other`
    empty when the query asks for neither): the other-language passages first, as a translation's
    hits win ties (`questions/translation.py`); a passage BM25 ranks too counts twice — BM25 reaches
    a page in another language only through the Latin words of the question (VPN, a product's
    name), so agreeing is a sign."""
    return [r for r in (other, lexical, everywhere) if r]


def by_place(hits: Sequence[Hit], k: int) -> list[Hit]:
    """The best hits of `k` places (a section or PDF page, `heading`, of one document), best first:
    a hit from a place already among them is joined to that place's hit, in document order,
    instead of taking a place of its own.

    Chunks split a page or a long section, so the best few passages were often two or three
    pieces of one place: five results should be five places (what someone reading search results
    expects, and what a question needing two sections needs), and no text the best hits had is
    lost — a page's second piece often holds the answer. Measured on Northwind's 50 answerable
    questions: page recall@5 0.47 → 0.49 (docs/performance.md)."""
    places: dict[tuple[str, str], list[Hit]] = {}
    for hit in hits:
        place = (hit.doc_id, hit.heading)
        if place not in places:
            if len(places) == k:
                break
            places[place] = []
        places[place].append(hit)
    return [_joined(group) for group in places.values()]


def searched_with_gloss(
    request: Query, gloss: str, some_in_its_language: bool, places: Callable[[Query], list[Hit]], k: int
) -> list[Hit]:
    """The places for a question glossed into the documents' language (`i18n.glossing`).

    Where no page is in the question's language: one BM25 ranking over the question's words,
    counted twice, and their gloss (only it: the ranking of the words alone would be thrown away).
    The scores stay BM25's (the answerer weighs their margins), and a page in the question's own
    language that matches it stays first (counted once, the English page it summarises often came
    first; recall@5 0.86 then, 0.67 now).

    Where some pages are in the question's language: they often summarise what the others hold in
    full (a Chinese page beside the English one) and, searched with the question's words counted
    in, took every place. So the ranking of its words and that of its gloss keep their places in
    turn, its own words first."""
    if some_in_its_language:
        glossed_only = replace(request, indexed=gloss, terms=index_terms(gloss))
        return _alternating(places(request), places(glossed_only), k)
    expanded = f"{request.indexed} {request.indexed} {gloss}"
    return places(replace(request, indexed=expanded, terms=index_terms(expanded)))


def _alternating(first: Sequence[Hit], second: Sequence[Hit], k: int) -> list[Hit]:
    """The places of two rankings taken in turn (the first's first), each place once, k at most."""
    kept: dict[tuple[str, str], Hit] = {}
    for pair in itertools.zip_longest(first, second):
        for hit in pair:
            if hit is not None:
                kept.setdefault((hit.doc_id, hit.heading), hit)
    return list(kept.values())[:k]


def places_known(hits: Sequence[Hit], asked: int, k: int) -> bool:
    """Whether `by_place(hits, k)` is already what a longer list of the same ranking would give:
    the ranking ended before `asked` hits, or a place beyond the k-th begins among them (after it
    `by_place` reads nothing). Otherwise a later hit may still join one of the places or take one.

    Why ask in two steps: sending and reading each hit's text is most of a search's cost, and
    asking for `CANDIDATES_PER_RETRIEVER` hits every time multiplied it for the few that fill k
    places (docs/performance.md, "Checkpoints and round trips a turn")."""
    if len(hits) < asked:
        return True
    return len({(hit.doc_id, hit.heading) for hit in hits}) > k


def _joined(group: list[Hit]) -> Hit:
    """One hit for pieces of one place: the best's, with their texts in document order, the
    overlap a piece repeats from the one before it (`chunking.split_text`) said once."""
    if len(group) == 1:
        return group[0]
    pieces = sorted(group, key=lambda hit: hit.chunk_index)
    text = pieces[0].text
    for before, piece in itertools.pairwise(pieces):
        adjacent = piece.chunk_index == before.chunk_index + 1
        text = f"{text}{piece.text[_overlap(text, piece.text) :] if adjacent else chr(10) * 2 + piece.text}"
    return replace(group[0], text=text)


def _overlap(text: str, following: str) -> int:
    """The length of the longest end of `text` that `following` starts with."""
    opening = following[:40]
    at = text.rfind(opening)
    while at >= 0:
        if following.startswith(text[at:]):
            return len(text) - at
        at = text.rfind(opening, 0, at)
    return 0


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]]) -> list[tuple[str, float]]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, id_ in enumerate(ranking, start=1):
            scores[id_] = scores.get(id_, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda item: item[1], reverse=True)


def row_hit(row: dict[str, Any], score: float) -> Hit:
    return Hit(id=row["id"], score=score, url=row.get("url") or "", **{f: row[f] for f in HIT_FIELDS})
