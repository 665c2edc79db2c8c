"""The geometry of the console's charts, drawn as SVG by templates/charts.html: no script, no
library, nothing fetched — the page works offline and under a Content-Security-Policy that allows
no script at all. Numbers and labels only: the template writes the markup (escaped)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

# Outcome colours: distinguishable for the common colour-vision deficiencies (Okabe–Ito).
COLOURS = {
    "answered": "#009E73",
    "low_confidence": "#E69F00",
    "not_covered": "#D55E00",
    "clarified": "#56B4E9",
    "refused": "#999999",
    "error": "#CC79A7",
}
LABELS = {
    "answered": "answered",
    "low_confidence": "low confidence",
    "not_covered": "not covered",
    "clarified": "clarified",
    "refused": "refused",
    "error": "error",
}


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    width: float
    height: float
    colour: str
    tip: str  # shown on hover (the mark's <title>)
    rounded: bool = False


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str = "start"


@dataclass(frozen=True)
class Axis:
    left: int
    top: int
    right: int
    base: int
    peak: int


@dataclass(frozen=True)
class Chart:
    title: str
    width: int
    height: int
    rects: list[Rect] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    axis: Axis | None = None


def stacked_days(per_day: dict[int, Counter[str]], days: Sequence[int], title: str) -> Chart:
    """Questions per day, one bar a day stacked by outcome (the template adds the legend)."""
    width, height, left, bottom, top = 720, 220, 36, 22, 8
    peak = max((sum(c.values()) for c in per_day.values()), default=0) or 1
    slot = (width - left) / max(len(days), 1)
    bar = max(slot * 0.8, 1.0)
    chart = Chart(title, width, height, axis=Axis(left, top, width, height - bottom, peak))
    for i, day in enumerate(days):
        x, y = left + i * slot + (slot - bar) / 2, float(height - bottom)
        counts = per_day.get(day, Counter())
        for outcome, colour in COLOURS.items():
            n = counts.get(outcome, 0)
            if not n:
                continue
            h = n / peak * (height - bottom - top)
            y -= h
            tip = f"{_date(day)}: {n} {LABELS[outcome]}"
            chart.rects.append(Rect(_r(x), _r(y), _r(bar), _r(h), colour, tip))
    for i in sorted({0, len(days) // 2, len(days) - 1}) if days else ():
        anchor = "start" if i == 0 else "end" if i == len(days) - 1 else "middle"
        x = left if anchor == "start" else width if anchor == "end" else left + i * slot + slot / 2
        chart.labels.append(Label(_r(x), height - 6, _date(days[i]), anchor))
    return chart


def bars(items: Sequence[tuple[str, int]], title: str, colour: str = "#0072B2") -> Chart | None:
    """Horizontal bars, one per labelled count, longest first as given; None for no items."""
    if not items:
        return None
    row, label_w, width = 26, 150, 400  # about the width of a grid panel: text keeps its size
    peak = max(n for _, n in items) or 1
    chart = Chart(title, width, len(items) * row + 8)
    for i, (label, n) in enumerate(items):
        y = i * row + 4
        w = _r(max(n / peak * (width - label_w - 40), 1.0))
        chart.labels.append(Label(label_w - 8, y + 15, _clip(label), "end"))
        chart.rects.append(Rect(label_w, y, w, row - 8, colour, f"{label}: {n}", rounded=True))
        chart.labels.append(Label(_r(label_w + w + 6), y + 15, str(n)))
    return chart


def _r(value: float) -> float:
    return round(value, 1)


def _date(day: int) -> str:
    return datetime.fromtimestamp(day * 86400, UTC).strftime("%d %b")


def _clip(text: str, chars: int = 22) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"
