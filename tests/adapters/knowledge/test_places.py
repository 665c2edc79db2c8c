"""Search results are places: the pieces of one section or PDF page among the best hits come back
as one hit (`search.by_place`)."""

from __future__ import annotations

from pathlib import Path

from threadsage.adapters.documents.chunking import split_text
from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.adapters.knowledge.search import (
    CANDIDATES_PER_RETRIEVER,
    FIRST_HITS_PER_PLACE,
    Hit,
    Query,
    by_place,
    places_known,
)
from threadsage.ingestion.pipeline import Ingestor


def hit(doc: str, heading: str, index: int, text: str, score: float) -> Hit:
    return Hit(f"{doc}-{index}", doc, doc, f"{doc}.pdf", doc, heading, index, "", text, score)


def test_pieces_of_one_page_are_one_hit_in_document_order_and_k_places_come_back() -> None:
    text = " ".join(f"Sentence number {n} of the page says something about claims." for n in range(60))
    first, second, third = split_text(text, 1200, 200)[:3]
    hits = [
        hit("plan", "Page 7", 1, second, 9.0),
        hit("plan", "Page 8", 3, "Another page.", 8.0),
        hit("plan", "Page 7", 0, first, 7.0),
        hit("plan", "Page 7", 2, third, 6.5),
        hit("other", "Page 7", 0, "Same heading, another document.", 6.0),
        hit("plan", "Page 9", 4, "A third page.", 5.0),
        hit("plan", "Page 10", 5, "Not reached: three places were asked for.", 4.0),
    ]
    places = by_place(hits, 3)
    assert [(p.doc_id, p.heading) for p in places] == [("plan", "Page 7"), ("plan", "Page 8"), ("other", "Page 7")]
    page = places[0]
    assert (page.id, page.score) == ("plan-1", 9.0)  # the best piece's identity and score
    said = " ".join(page.text.split())  # the three pieces, their overlaps said once: the page as written
    assert said == " ".join(text.split())[: len(said)] and said.endswith(" ".join(third.split()))


def test_pieces_that_are_not_neighbours_are_joined_apart_and_nothing_is_lost() -> None:
    hits = [hit("plan", "Page 3", 4, "The fourth piece.", 2.0), hit("plan", "Page 3", 1, "The first piece.", 1.0)]
    (page,) = by_place(hits, 5)
    assert page.text == "The first piece.\n\nThe fourth piece."


def test_a_long_page_split_in_pieces_fills_one_place_of_the_results(kb: KnowledgeBase, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    long = "\n\n".join(f"Parking rule {n}: permits for the garage are renewed every spring." for n in range(60))
    (docs / "parking.md").write_text(f"# Parking\n\n{long}\n", encoding="utf-8")
    for name in ("bikes", "lockers", "showers"):
        (docs / f"{name}.md").write_text(f"# {name.title()}\n\nThe garage also has {name}.\n", encoding="utf-8")
    assert Ingestor(kb, 1200, 200).ingest_paths([docs]).ok
    hits = kb.search_blocking("garage permits renewed", k=4)
    assert sorted(h.path for h in hits) == ["bikes.md", "lockers.md", "parking.md", "showers.md"]
    assert hits[0].path == "parking.md" and hits[0].text.count("Parking rule 0:") == 1


def test_the_first_hits_settle_the_places_only_once_a_place_beyond_k_begins_or_the_ranking_ends() -> None:
    pieces = [hit("plan", "Page 7", n, f"Piece {n}.", 9.0 - n) for n in range(3)]
    assert not places_known(pieces, 3, 2)  # a second place may still come, or a fourth piece of this one
    assert places_known(pieces[:2], 3, 2)  # the ranking ended: nothing more to read
    three_places = [*pieces[:1], hit("plan", "Page 8", 3, "", 5.0), hit("plan", "Page 9", 4, "", 4.0)]
    assert places_known(three_places, 3, 2) and not places_known(three_places, 3, 3)


def test_a_page_of_more_pieces_than_first_asked_still_leaves_room_for_the_other_places(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    rules = "\n\n".join(
        f"Garage permit rule {n}: garage permits for the garage are renewed at the garage office. " * 3
        for n in range(40)
    )
    (docs / "parking.md").write_text(f"# Parking\n\n{rules}\n", encoding="utf-8")
    (docs / "bikes.md").write_text("# Bikes\n\nBikes are kept by the garage.\n", encoding="utf-8")
    assert Ingestor(kb, 1200, 200).ingest_paths([docs]).ok
    asked: list[int] = []
    rank = kb._rank

    def counted(query: Query) -> list[Hit]:
        asked.append(query.k)
        return rank(query)

    kb._rank = counted  # type: ignore[method-assign]
    hits = kb.search_blocking("garage permits", k=2)
    assert [h.path for h in hits] == ["parking.md", "bikes.md"]  # the page's pieces took 6 first hits and more
    assert asked == [2 * FIRST_HITS_PER_PLACE, CANDIDATES_PER_RETRIEVER]
    asked.clear()
    assert [h.path for h in kb.search_blocking("bikes kept", k=2)] == ["bikes.md"]
    assert asked == [2 * FIRST_HITS_PER_PLACE]  # the ranking ended within the first hits
