"""How `threadsage search` shows the chunks a question retrieves."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from threadsage.adapters.knowledge import Hit

console = Console(soft_wrap=True)


def print_hits(hits: list[Hit]) -> None:
    """A table on a terminal; one line per hit (then its snippet) when piped, for scripts."""
    if not hits:
        console.print("no matching chunks")
        return
    rows = []
    for rank, hit in enumerate(hits, start=1):
        where = " > ".join(part for part in (hit.title, hit.heading) if part)
        snippet = " ".join(hit.text.split())
        snippet = snippet[:240] + ("…" if len(snippet) > 240 else "")
        rows.append((str(rank), f"{hit.score:.3f}", hit.url or hit.path, where, snippet))  # a link, when it has one
    if not console.is_terminal:
        for number, score, path, where, snippet in rows:
            console.print(f"{number}. [{score}] {path} ({where})\n   {snippet}", markup=False, highlight=False)
        return
    table = Table(show_lines=True)
    for column in ("#", "score", "source", "heading", "text"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row)
    console.print(table)
