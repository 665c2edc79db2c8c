"""Charts as SVG written on the server: no script, no library, nothing fetched — the page works
offline and under a Content-Security-Policy that allows no script at all. Each mark carries a
`<title>`, which browsers show on hover, and the charts scale with the page (viewBox)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from html import escape

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


def stacked_days(per_day: dict[int, Counter[str]], days: Sequence[int], title: str) -> str:
    """Questions per day, one bar a day stacked by outcome, with a legend."""
    width, height, left, bottom, top = 720, 220, 36, 22, 8
    peak = max((sum(c.values()) for c in per_day.values()), default=0) or 1
    slot = (width - left) / max(len(days), 1)
    bar = max(slot * 0.8, 1.0)
    marks = [_axis(left, top, width, height - bottom, peak)]
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
            marks.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{colour}">'
                f"<title>{escape(tip)}</title></rect>"
            )
    for i in sorted({0, len(days) // 2, len(days) - 1}) if days else ():
        x = left + i * slot + slot / 2
        anchor = "start" if i == 0 else "end" if i == len(days) - 1 else "middle"
        x = left if anchor == "start" else width if anchor == "end" else x
        marks.append(f'<text x="{x:.1f}" y="{height - 6}" text-anchor="{anchor}">{_date(days[i])}</text>')
    return _svg(width, height, title, marks) + legend(COLOURS)


def bars(items: Sequence[tuple[str, int]], title: str, colour: str = "#0072B2") -> str:
    """Horizontal bars, one per labelled count, longest first as given."""
    if not items:
        return '<p class="empty">Nothing in this range.</p>'
    row, label_w, width = 26, 150, 400  # about the width of a grid panel: text keeps its size
    peak = max(n for _, n in items) or 1
    marks = []
    for i, (label, n) in enumerate(items):
        y = i * row + 4
        w = max(n / peak * (width - label_w - 40), 1.0)
        marks.append(
            f'<text x="{label_w - 8}" y="{y + 15}" text-anchor="end">{escape(_clip(label))}</text>'
            f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{row - 8}" rx="3" fill="{colour}">'
            f"<title>{escape(label)}: {n}</title></rect>"
            f'<text x="{label_w + w + 6:.1f}" y="{y + 15}">{n}</text>'
        )
    return _svg(width, len(items) * row + 8, title, marks)


def legend(colours: dict[str, str]) -> str:
    keys = "".join(
        f'<span><i style="background:{colour}"></i>{escape(LABELS.get(name, name))}</span>'
        for name, colour in colours.items()
    )
    return f'<p class="legend">{keys}</p>'


def _axis(left: int, top: int, right: int, base: int, peak: int) -> str:
    return (
        f'<line x1="{left}" y1="{base}" x2="{right}" y2="{base}" class="axis"/>'
        f'<text x="{left - 6}" y="{top + 10}" text-anchor="end">{peak}</text>'
        f'<text x="{left - 6}" y="{base}" text-anchor="end">0</text>'
    )


def _svg(width: int, height: int, title: str, marks: list[str]) -> str:
    return (
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>{"".join(marks)}</svg>'
    )


def _date(day: int) -> str:
    return datetime.fromtimestamp(day * 86400, UTC).strftime("%d %b")


def _clip(text: str, chars: int = 22) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"
