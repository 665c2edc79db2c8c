"""What the console's views show, as values for their templates (templates/): the overview's
figures and charts, the clarifications' summary, the knowledge base's facts. The markup, and its
escaping, is the templates' alone."""

from __future__ import annotations

from collections import Counter
from typing import Any

from threadsage.console.charts import LABELS, bars, stacked_days
from threadsage.console.filters import Filters
from threadsage.console.queries import Overview

FUNNEL = (("chosen", "an option chosen"), ("typed", "answered in words"), ("abandoned", "abandoned"), ("open", "open"))


def overview(view: Overview, filters: Filters) -> dict[str, Any]:
    total = sum(view.outcomes.values())
    rate = f"{view.answer_rate:.0%}" if view.answer_rate is not None else "–"
    votes = view.up + view.down
    liked = f"{view.up / votes:.0%}" if votes else "–"
    latency = f"{view.latency_ms / 1000:.1f} s" if view.latency_ms is not None else "–"
    asked = sum(view.funnel.values())
    funnel = [("asked", asked), *((label, view.funnel[key]) for key, label in FUNNEL)]
    return {
        "facts": [
            (total, "turns"),
            (rate, "answer rate"),
            (liked, f"liked: {view.up} 👍 / {view.down} 👎"),
            (view.outcomes["not_covered"], "not covered"),
            (view.outcomes["clarified"], "clarifications"),
            (latency, "mean time to answer"),
        ],
        "per_day": stacked_days(view.per_day, list(filters.day_range()), "Questions per day by outcome"),
        "funnel": bars(funnel, "Clarification funnel", "#56B4E9"),
        "channels_chart": bars([(f"{p} · {c}", n) for p, c, n in view.channels], "Busiest channels"),
        "outcomes_chart": bars([(LABELS.get(o, o), n) for o, n in view.outcomes.most_common()], "Outcomes", "#009E73"),
        "feedback": bars([("👍", view.up), ("👎", view.down)], "Feedback"),
    }


def clarification_summary(rows: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    """Per option chosen (or what else became of the clarification): times, and 👎s after."""
    chosen: Counter[str] = Counter()
    disliked: Counter[str] = Counter()
    for row in rows:
        label = row["chosen"] or {"abandoned": "(abandoned)", None: "(open)"}.get(row["choice"], "(hidden)")
        chosen[label] += 1
        disliked[label] += 1 if row["down"] else 0
    return [(label, n, disliked[label]) for label, n in chosen.most_common(20)]


def knowledge(info: dict[str, Any]) -> dict[str, Any]:
    facts = ("documents", "chunks", "embeddings", "search")
    categories = [(c or "(no category)", n) for c, n in info.get("categories", {}).items()]
    return {
        "info": info,
        "facts": [(info.get(name, "–"), name) for name in facts],
        "categories": bars(categories, "Documents per category"),
        "sources": bars(list(info.get("sources", {}).items()), "Documents per source"),
    }


def escalation_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """How many escalations are open and answered, and the median time to the first expert's reply
    (in seconds; None before any reply)."""
    waits = sorted(r["answered_at"] - r["escalated_at"] for r in rows if r["answered_at"] is not None)
    return {
        "open": sum(r["answered_at"] is None for r in rows),
        "answered": len(waits),
        "median_seconds": waits[len(waits) // 2] / 1000 if waits else None,
    }
