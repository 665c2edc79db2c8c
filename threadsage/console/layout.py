"""What every console page shares: the views of the navigation, the security headers, the time
format; and the Jinja2 environment that renders templates/ with autoescaping on for every
template, so that whatever a person wrote is escaped unless a template says otherwise — and none
does (tests/console/test_console_hostile.py keeps it so)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from threadsage.console.charts import COLOURS, LABELS

VIEWS = (
    ("overview", "Overview", "/console"),
    ("gaps", "Gaps", "/console/gaps"),
    ("questions", "Questions", "/console/questions"),
    ("clarifications", "Clarifications", "/console/clarifications"),
    ("knowledge", "Knowledge base", "/console/knowledge"),
    ("stale", "Stale answers", "/console/stale"),
    ("closed", "Closed gaps", "/console/closed"),
    ("verified", "Verified answers", "/console/verified"),
    ("escalations", "Escalations", "/console/escalations"),
)
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
}


def when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")


_ENV = Environment(
    loader=PackageLoader("threadsage.console", "templates"),
    autoescape=True,  # every template, whatever its name
    undefined=StrictUndefined,  # a misspelt name fails the page, never renders as nothing
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.filters["when"] = when
_ENV.globals.update(VIEWS=VIEWS, COLOURS=COLOURS, LABELS=LABELS)
TEMPLATES = Jinja2Templates(env=_ENV)


def html(request: Request, template: str, status: int = 200, **context: Any) -> Response:
    """`template` rendered with `context`, with the console's security headers."""
    return TEMPLATES.TemplateResponse(request, template, context, status_code=status, headers=SECURITY_HEADERS)
