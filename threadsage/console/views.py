"""The console's views as HTML: overview, gaps, questions, clarifications, knowledge base, and the
sign-in page. Everything a person wrote is escaped; a person's id shows only when asked."""

from __future__ import annotations

from collections import Counter
from html import escape
from typing import Any

from threadsage.console.charts import COLOURS, LABELS, bars, stacked_days
from threadsage.console.filters import Filters
from threadsage.console.layout import page, when
from threadsage.console.queries import Overview

FUNNEL = (("chosen", "an option chosen"), ("typed", "answered in words"), ("abandoned", "abandoned"), ("open", "open"))


def sign_in(error: str = "", next_path: str = "/console") -> str:
    message = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    body = (
        '<form class="signin" method="post" action="/console/signin"><h2>threadsage console</h2>'
        f'{message}<label for="token">Console password</label>'
        '<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>'
        f'<input type="hidden" name="next" value="{escape(next_path)}"><button>Sign in</button></form>'
    )
    return page("Sign in", body)


def overview(view: Overview, filters: Filters) -> str:
    total = sum(view.outcomes.values())
    rate = f"{view.answer_rate:.0%}" if view.answer_rate is not None else "–"
    votes = view.up + view.down
    liked = f"{view.up / votes:.0%}" if votes else "–"
    latency = f"{view.latency_ms / 1000:.1f} s" if view.latency_ms is not None else "–"
    cards = "".join(
        f'<div class="card"><b>{value}</b><span>{label}</span></div>'
        for value, label in (
            (total, "turns"),
            (rate, "answer rate"),
            (liked, f"liked: {view.up} 👍 / {view.down} 👎"),
            (view.outcomes["not_covered"], "not covered"),
            (view.outcomes["clarified"], "clarifications"),
            (latency, "mean time to answer"),
        )
    )
    days = list(filters.day_range())
    asked = sum(view.funnel.values())
    funnel = [("asked", asked), *((label, view.funnel[key]) for key, label in FUNNEL)]
    channels = [(f"{p} · {c}", n) for p, c, n in view.channels]
    outcomes = [(LABELS.get(o, o), n) for o, n in view.outcomes.most_common()]
    return (
        f'<div class="cards">{cards}</div>'
        f'<section class="panel"><h2>Questions per day, by outcome</h2>'
        f"{stacked_days(view.per_day, days, 'Questions per day by outcome')}</section>"
        '<div class="grid">'
        f'<section class="panel"><h2>Clarification funnel</h2>{bars(funnel, "Clarification funnel", "#56B4E9")}'
        "</section>"
        f'<section class="panel"><h2>Busiest channels</h2>{bars(channels, "Busiest channels")}</section>'
        f'<section class="panel"><h2>Outcomes</h2>{bars(outcomes, "Outcomes", "#009E73")}</section>'
        f'<section class="panel"><h2>Feedback</h2>{bars([("👍", view.up), ("👎", view.down)], "Feedback")}</section>'
        "</div>"
    )


def gaps(groups: list[dict[str, Any]], filters: Filters) -> str:
    if not groups:
        return '<p class="empty">No gaps in this range: every question was answered and nobody gave a 👎.</p>'
    items = []
    for group in groups:
        turn = group["newest"]
        others = [w for w in group["wordings"] if w != turn.get("question")]
        also = (
            '<p class="muted">Also asked as: ' + "; ".join(f"<q>{escape(w)}</q>" for w in others) + "</p>"
            if others
            else ""
        )
        closest = turn.get("closest")
        near = (
            f'<p>Closest document: <b>{escape(closest["title"])}</b> <span class="muted">{escape(closest["path"])}'
            f" (score {closest['score']})</span></p>"
            if closest
            else ""
        )
        items.append(
            f'<article class="panel gap"><p>{_tag(turn.get("outcome", ""))} '
            f'<span class="muted">{group["count"]}× · newest {when(turn.get("at", 0))} · {_place(turn, filters)}'
            f"{' · ' + _votes(turn) if _votes(turn) else ''}</span></p>"
            f"<p><q>{_text(turn.get('question'))}</q></p>{also}"
            f'<div class="answer">{_text(turn.get("answer"))}</div>{_sources(turn)}{near}</article>'
        )
    return "".join(items)


def questions(turns: list[dict[str, Any]], filters: Filters) -> str:
    if not turns:
        return '<p class="empty">No questions in this range.</p>'
    rows = "".join(
        f"<tr><td>{when(t['at'])}</td><td>{_place(t, filters)}</td><td>{_text(t.get('question'))}</td>"
        f"<td>{_tag(t['outcome'])}</td><td>{escape(t['route'])}</td><td>{_confidence(t)}</td>"
        f"<td>{t['latency_ms'] / 1000:.1f} s</td><td>{_votes(t)}</td><td>{_sources(t)}</td></tr>"
        for t in turns
    )
    head = "<tr><th>When</th><th>Where</th><th>Question</th><th>Outcome</th><th>Route</th><th>Confidence</th>"
    head += "<th>Time</th><th>Votes</th><th>Sources</th></tr>"
    return f'<div class="panel table"><table>{head}{rows}</table></div>'


def clarifications(rows: list[dict[str, Any]], filters: Filters) -> str:
    if not rows:
        return '<p class="empty">No clarifications in this range.</p>'
    chosen: Counter[str] = Counter()
    disliked: Counter[str] = Counter()
    for row in rows:
        label = row["chosen"] or {"abandoned": "(abandoned)", None: "(open)"}.get(row["choice"], "(hidden)")
        chosen[label] += 1
        disliked[label] += 1 if row["down"] else 0
    summary = "".join(
        f"<tr><td>{escape(label)}</td><td>{n}</td><td>{disliked[label]}</td><td>{disliked[label] / n:.0%}</td></tr>"
        for label, n in chosen.most_common(20)
    )
    table = "".join(
        f"<tr><td>{when(r['at'])}</td><td>{_place(r, filters)}</td><td>{_text(r.get('question'))}</td>"
        f"<td>{_options(r)}</td><td>{escape(r['chosen'] or r['choice'] or 'open')}</td><td>{_votes(r)}</td></tr>"
        for r in rows
    )
    return (
        '<section class="panel table"><h2>Options people chose, and how often the answer then got a 👎</h2>'
        f"<table><tr><th>Chosen</th><th>Times</th><th>👎 after</th><th>👎 rate</th></tr>{summary}</table></section>"
        '<section class="panel table"><h2>Clarifications asked</h2><table><tr><th>When</th><th>Where</th>'
        f"<th>Question</th><th>Options shown</th><th>Chosen</th><th>Votes on the answer</th></tr>{table}</table>"
        "</section>"
    )


def knowledge(info: dict[str, Any]) -> str:
    facts = "".join(
        f'<div class="card"><b>{escape(str(value))}</b><span>{label}</span></div>'
        for label, value in (
            ("documents", info.get("documents", "–")),
            ("chunks", info.get("chunks", "–")),
            ("embeddings", info.get("embeddings", "–")),
            ("search", info.get("search", "–")),
        )
    )
    categories = [(c or "(no category)", n) for c, n in info.get("categories", {}).items()]
    sources = list(info.get("sources", {}).items())
    runs = info.get("ingestions", [])
    ingest_rows = "".join(
        f"<tr><td>{when(r['at'])}</td><td>{escape(r['summary'])}</td><td>{_failures(r['failures'])}</td></tr>"
        for r in runs
    )
    ingests = (
        f"<table><tr><th>When</th><th>What</th><th>Failures</th></tr>{ingest_rows}</table>"
        if runs
        else '<p class="empty">No ingestion recorded yet (`threadsage ingest` records each run).</p>'
    )
    synced = "".join(
        f"<tr><td>{escape(r['name'])}</td><td>{when(r['at']) if r['at'] else '–'}</td><td>{escape(r['summary'])}</td>"
        f"<td>{_failures(r['failures'])}</td></tr>"
        for r in info.get("sources_synced", [])
    )
    if synced:
        ingests += "<h2>Live-synced sources</h2><table><tr><th>Source</th><th>Last sync</th><th>What</th>"
        ingests += f"<th>Failures</th></tr>{synced}</table>"
    note = f'<p class="muted">{escape(info["note"])}</p>' if info.get("note") else ""
    return (
        f'{note}<div class="cards">{facts}</div><div class="grid">'
        f'<section class="panel"><h2>Documents per category</h2>{bars(categories, "Documents per category")}</section>'
        f'<section class="panel"><h2>Documents per source</h2>{bars(sources, "Documents per source")}</section>'
        f'</div><section class="panel table"><h2>Ingestion runs</h2>{ingests}</section>'
    )


def _failures(failures: list[tuple[str, str]]) -> str:
    return "<br>".join(escape(f"{path}: {why}") for path, why in failures) or "–"


def _tag(outcome: str) -> str:
    colour = COLOURS.get(outcome, "#777")
    return f'<span class="tag" style="background:{colour}">{escape(LABELS.get(outcome, outcome))}</span>'


def _text(value: str | None) -> str:
    return escape(value) if value else '<span class="muted">(not recorded)</span>'


def _place(turn: dict[str, Any], filters: Filters) -> str:
    where = f"{turn.get('platform', '')} · {turn.get('channel', '')}"
    person = f" · {turn['user_id']}" if filters.people and turn.get("user_id") else ""
    return escape(where + person)


def _votes(turn: dict[str, Any]) -> str:
    up, down = turn.get("up", 0), turn.get("down", 0)
    return f"{up} 👍 {down} 👎" if up or down else ""


def _confidence(turn: dict[str, Any]) -> str:
    return f"{turn['confidence']:.2f}" if turn.get("confidence") is not None else "–"


def _sources(turn: dict[str, Any]) -> str:
    cited = turn.get("citations") or []
    if not cited:
        return '<p class="muted">No sources cited.</p>'
    items = "".join(
        f"<li>{escape(c['title'])}{' › ' + escape(c['heading']) if c.get('heading') else ''} "
        f'<span class="muted">{escape(c["path"])}</span></li>'
        for c in cited
    )
    return f"<ul>{items}</ul>"


def _options(row: dict[str, Any]) -> str:
    options = row.get("options")
    if isinstance(options, list):
        return "<br>".join(escape(str(o)) for o in options)
    return f"{options} options" if options is not None else "–"
