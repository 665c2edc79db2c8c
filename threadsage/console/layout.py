"""The console's page frame: head, style, navigation and the filter bar. No script anywhere (the
Content-Security-Policy forbids it); the layout is one column on a phone, a grid on a laptop."""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape

from threadsage.console.filters import RANGES, Filters
from threadsage.records.turns import OUTCOMES

VIEWS = (
    ("overview", "Overview", "/console"),
    ("gaps", "Gaps", "/console/gaps"),
    ("questions", "Questions", "/console/questions"),
    ("clarifications", "Clarifications", "/console/clarifications"),
    ("knowledge", "Knowledge base", "/console/knowledge"),
)
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
}
STYLE = """
:root{--ink:#1d2430;--muted:#5b6472;--line:#e3e6ea;--bg:#f6f7f9;--card:#fff;--accent:#0072B2}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);
background:var(--bg)}header{background:#14213d;color:#fff;padding:.6rem 1rem;display:flex;flex-wrap:wrap;
gap:.4rem 1.2rem;align-items:center}header b{font-size:1.05rem;margin-right:.5rem}header a{color:#cfd8e6;
text-decoration:none;padding:.2rem 0}header a.on{color:#fff;border-bottom:2px solid #56B4E9}
header form{margin-left:auto}main{max-width:1180px;margin:0 auto;padding:1rem}
.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;background:var(--card);padding:.7rem;
border:1px solid var(--line);border-radius:8px;margin-bottom:1rem}.filters label{display:flex;flex-direction:column;
font-size:.8rem;color:var(--muted)}input,select,button{font:inherit;padding:.35rem .5rem;border:1px solid #c5cbd3;
border-radius:6px;background:#fff}button{background:var(--accent);color:#fff;border-color:var(--accent);cursor:pointer}
button.plain{background:none;color:#cfd8e6;border:0}.cards{display:grid;grid-template-columns:repeat(auto-fit,
minmax(150px,1fr));gap:.7rem;margin-bottom:1rem}.card,.panel{background:var(--card);border:1px solid var(--line);
border-radius:8px;padding:.8rem}.card b{display:block;font-size:1.6rem}.card span{color:var(--muted);
font-size:.85rem}.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:1rem}
.panel{margin-bottom:1rem}h2{font-size:1.05rem;margin:0 0 .5rem}.chart{width:100%;height:auto;font-size:12px;
fill:var(--ink)}.chart .axis{stroke:#9aa3ae}.legend{display:flex;flex-wrap:wrap;gap:.3rem .9rem;font-size:.8rem;
margin:.3rem 0 0}.legend i{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;margin-right:.3rem;
vertical-align:-1px}.table{overflow-x:auto}table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;padding:.45rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600;white-space:nowrap}.tag{display:inline-block;padding:0 .45rem;
border-radius:999px;font-size:.78rem;color:#fff;white-space:nowrap}.muted,.empty{color:var(--muted)}
.gap{border-left:4px solid #D55E00}.gap q{font-weight:600;quotes:none}.answer{white-space:pre-wrap;
background:var(--bg);border-radius:6px;padding:.5rem;margin:.4rem 0;max-height:12rem;overflow:auto}
.actions{display:flex;gap:1rem;justify-content:flex-end;margin:.3rem 0 .8rem}a{color:var(--accent)}
.signin{max-width:360px;margin:12vh auto;background:var(--card);padding:1.5rem;border-radius:10px;
border:1px solid var(--line)}.signin input{width:100%;margin:.6rem 0}.error{color:#b00020}
@media (max-width:600px){main{padding:.6rem}.filters label{flex:1 1 45%}td,th{padding:.35rem}}
"""


def page(title: str, body: str, current: str = "") -> str:
    nav = "".join(f'<a href="{href}" class="{"on" if key == current else ""}">{name}</a>' for key, name, href in VIEWS)
    signed_in = (
        '<form method="post" action="/console/signout"><button class="plain">Sign out</button></form>'
        if current
        else ""
    )
    header = f"<header><b>threadsage</b>{nav if current else ''}{signed_in}</header>" if current else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{escape(title)} · threadsage console</title><style>{STYLE}</style></head>"
        f"<body>{header}<main>{body}</main></body></html>"
    )


def filter_bar(filters: Filters, action: str, platforms: list[str], channels: list[str]) -> str:
    def options(values: list[str], chosen: str, everything: str) -> str:
        items = [f'<option value="">{everything}</option>']
        items += [f"<option{' selected' if v == chosen else ''}>{escape(v)}</option>" for v in values]
        return "".join(items)

    ranges = "".join(
        f'<option value="{d}"{" selected" if d == filters.days else ""}>last {d} day{"s" if d > 1 else ""}</option>'
        for d in RANGES
    )
    outcomes = "".join(
        f'<option value="{o}"{" selected" if o == filters.outcome else ""}>{o.replace("_", " ")}</option>'
        for o in OUTCOMES
    )
    custom = _day_value(filters.start_ms), _day_value(filters.end_ms - 1)
    return (
        f'<form class="filters" method="get" action="{action}">'
        f'<label>Range<select name="days">{ranges}</select></label>'
        f'<label>From<input type="date" name="start" value="{custom[0] if not filters.days else ""}"></label>'
        f'<label>To<input type="date" name="end" value="{custom[1] if not filters.days else ""}"></label>'
        f'<label>Platform<select name="platform">{options(platforms, filters.platform, "all")}</select></label>'
        f'<label>Channel<select name="channel">{options(channels, filters.channel, "all")}</select></label>'
        f'<label>Outcome<select name="outcome"><option value="">all</option>{outcomes}</select></label>'
        f'<label>People<select name="people"><option value="">hidden</option>'
        f'<option value="1"{" selected" if filters.people else ""}>shown</option></select></label>'
        "<button>Apply</button></form>"
    )


def when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")


def _day_value(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).date().isoformat() if ms > 0 else ""
