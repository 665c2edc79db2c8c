"""The console's HTTP routes under `/console`, all behind `ConsoleAuth`: pages (a visitor who has
not signed in is sent to the sign-in page), and the JSON and CSV a script may fetch with a Bearer
token (401 without one). Nothing but the sign-in page answers before the check."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, quote

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from threadsage.console import views
from threadsage.console.auth import ConsoleAuth, TooManyAttempts
from threadsage.console.exports import QUESTION_FIELDS, csv_text, turn_cells
from threadsage.console.filters import RANGES, BadFilter, Filters
from threadsage.console.knowledge import KnowledgeInfo
from threadsage.console.knowledge_loop import LoopData
from threadsage.console.layout import SECURITY_HEADERS, VIEWS, html
from threadsage.console.queries import EXPORT_LIMIT, LIST_LIMIT, ConsoleData
from threadsage.records.turns import OUTCOMES, TABLE

Endpoint = Callable[[Request], Awaitable[Response]]
TITLES = {key: name for key, name, _ in VIEWS}
LISTS = ("questions", "gaps", "clarifications")
LOOP_VIEWS = ("stale", "closed", "verified", "escalations")  # the knowledge loop's: not filtered


class Console:
    def __init__(self, auth: ConsoleAuth, data: ConsoleData, knowledge: KnowledgeInfo, loop: LoopData) -> None:
        self.auth, self.data, self.knowledge, self.loop = auth, data, knowledge, loop

    def routes(self) -> list[Route]:
        return [
            Route("/console/signin", self.sign_in_page, methods=["GET"]),
            Route("/console/signin", self.sign_in, methods=["POST"]),
            Route("/console/signout", self.sign_out, methods=["POST"]),
            Route("/console", self._page(self.view), methods=["GET"]),
            Route("/console/{view:str}", self._page(self.view), methods=["GET"]),
            Route("/console/verify", self._page(self.verify), methods=["POST"]),
            Route("/console/retire", self._page(self.retire), methods=["POST"]),
            Route("/console/export/{view:str}.csv", self._api(self.export), methods=["GET"]),
            Route("/console/api/{view:str}", self._api(self.api), methods=["GET"]),
        ]

    # --- signing in ------------------------------------------------------------------------

    async def sign_in_page(self, request: Request) -> Response:
        next_path = _local(request.query_params.get("next", ""))
        try:
            if await self.auth.allows(request):
                return _redirect("/console")
        except TooManyAttempts as refused:
            return _sign_in_page(request, next_path, f"{refused}.", 429, refused.retry_after)
        return _sign_in_page(request, next_path)

    async def sign_in(self, request: Request) -> Response:
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        token, next_path = form.get("token", [""])[0], _local(form.get("next", [""])[0])
        try:
            if not self.auth.password(request, token):
                return _sign_in_page(request, next_path, "That is not the console password.", 401)
        except TooManyAttempts as refused:
            return _sign_in_page(request, next_path, f"{refused}.", 429, refused.retry_after)
        response = _redirect(next_path)
        await self.auth.sign_in(response, request)
        return response

    async def sign_out(self, request: Request) -> Response:
        response = _redirect("/console/signin")
        await self.auth.sign_out(response, request)
        return response

    # --- views -----------------------------------------------------------------------------

    async def view(self, request: Request) -> Response:
        name = request.path_params.get("view", "overview")
        if name not in TITLES:
            return _message(request, 404, "No such view.", "/console", "Overview")
        if name == "knowledge":
            info = await self.knowledge()
            return html(request, "knowledge.html", title=TITLES[name], current=name, **views.knowledge(info))
        if name in LOOP_VIEWS:
            found = await getattr(self.loop, name)()
            summary = views.escalation_summary(found) if name == "escalations" else {}
            return html(request, f"{name}.html", title=TITLES[name], current=name, rows=found, summary=summary)
        filters = Filters.parse(request.query_params)
        places = await self._places(filters)
        context: dict[str, Any] = {
            "title": TITLES[name],
            "current": name,
            "filters": filters,
            "action": request.url.path,
            "platforms": sorted({p for p, _ in places}),
            "channels": sorted({c for _, c in places}),
            "ranges": RANGES,
            "outcomes": OUTCOMES,
            "export": name in LISTS,
        }
        if name == "overview":
            context |= views.overview(await self.data.overview(filters), filters)
        elif name == "gaps":
            context["groups"] = await self.data.gaps(filters)
        elif name == "clarifications":
            rows = await self.data.clarifications(filters)
            context |= {"rows": rows, "summary": views.clarification_summary(rows)}
        else:
            context["turns"] = await self.data.turns(filters, LIST_LIMIT, "session_key", "message_id")
        return html(request, f"{name}.html", **context)

    async def verify(self, request: Request) -> Response:
        """Keep a recorded answer as the verified answer to its question."""
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        field = {k: v[0] for k, v in form.items()}
        by = " ".join(field.get("by", "").split())[:80] or "an operator"
        kept = await self.loop.records.verify(
            field.get("session_key", ""), field.get("message_id", ""), by, int(time.time() * 1000)
        )
        if kept is None:
            return _message(request, 400, "Only a recorded answer can be verified.", "/console/questions", "Back")
        return _redirect("/console/verified")

    async def retire(self, request: Request) -> Response:
        """Stop giving a verified answer."""
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        await self.loop.records.retire(form.get("id", [""])[0], int(time.time() * 1000))
        return _redirect("/console/verified")

    async def _places(self, filters: Filters) -> list[tuple[str, str]]:
        where, params = dataclasses.replace(filters, platform="", channel="", outcome="").where()
        rows = await self.data.tables.fetch(
            f"SELECT DISTINCT t.platform, t.channel FROM {TABLE} t WHERE {where} LIMIT 500", params
        )
        return [(str(p), str(c)) for p, c in rows]

    # --- for scripts -----------------------------------------------------------------------

    async def export(self, request: Request) -> Response:
        name, filters = request.path_params["view"], Filters.parse(request.query_params)
        if name == "gaps":
            groups = await self.data.gaps(filters, limit=1000)
            rows: list[list[Any]] = [[g["count"], *turn_cells(g["newest"], filters.people)] for g in groups]
            text = csv_text(["times", *QUESTION_FIELDS], rows)
        elif name == "questions":
            turns = await self.data.turns(filters, limit=EXPORT_LIMIT)
            text = csv_text(QUESTION_FIELDS, (turn_cells(t, filters.people) for t in turns))
        elif name == "clarifications":
            found = await self.data.clarifications(filters, limit=EXPORT_LIMIT)
            text = csv_text(
                QUESTION_FIELDS, (turn_cells(r | {"route": "clarify_needed"}, filters.people) for r in found)
            )
        else:
            return JSONResponse({"error": f"no list {name!r}: one of {', '.join(LISTS)}"}, 404)
        headers = {"Content-Disposition": f'attachment; filename="threadsage-{name}.csv"'}
        return Response(text, media_type="text/csv; charset=utf-8", headers=headers)

    async def api(self, request: Request) -> Response:
        name, filters = request.path_params["view"], Filters.parse(request.query_params)
        if name == "overview":
            view = await self.data.overview(filters)
            data: Any = {
                "per_day": {str(day * 86400): dict(counts) for day, counts in sorted(view.per_day.items())},
                "outcomes": dict(view.outcomes),
                "answer_rate": view.answer_rate,
                "up": view.up,
                "down": view.down,
                "funnel": dict(view.funnel),
                "channels": [{"platform": p, "channel": c, "turns": n} for p, c, n in view.channels],
                "latency_ms": view.latency_ms,
            }
        elif name == "knowledge":
            data = await self.knowledge()
        elif name in LOOP_VIEWS:
            data = await getattr(self.loop, name)()
            if not filters.people:
                data = [_without_people(item) for item in data]
        elif name in LISTS:
            data = await getattr(self.data, "turns" if name == "questions" else name)(filters)
            if not filters.people:
                data = [_without_people(item) for item in data]
        else:
            return JSONResponse({"error": f"no such view {name!r}"}, 404)
        return JSONResponse(data)

    # --- the check -------------------------------------------------------------------------

    def _page(self, endpoint: Endpoint) -> Endpoint:
        async def checked(request: Request) -> Response:
            try:
                allowed = await self.auth.allows(request)
            except TooManyAttempts as refused:
                return _sign_in_page(request, "/console", f"{refused}.", 429, refused.retry_after)
            if not allowed:
                target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                return _redirect(f"/console/signin?next={quote(target, safe='')}")
            try:
                return await endpoint(request)
            except BadFilter as bad:
                message = f"These filters cannot be read: {bad}."
                return _message(request, 400, message, request.url.path, "Clear the filters", error=True)

        return checked

    def _api(self, endpoint: Endpoint) -> Endpoint:
        async def checked(request: Request) -> Response:
            try:
                allowed = await self.auth.allows(request)
            except TooManyAttempts as refused:
                headers = {"Retry-After": str(refused.retry_after), **SECURITY_HEADERS}
                return JSONResponse({"error": str(refused)}, 429, headers=headers)
            if not allowed:
                headers = {"WWW-Authenticate": 'Bearer realm="threadsage console"', **SECURITY_HEADERS}
                return JSONResponse({"error": "sign in to the console first"}, 401, headers=headers)
            try:
                response = await endpoint(request)
            except BadFilter as bad:
                response = JSONResponse({"error": f"these filters cannot be read: {bad}"}, 400)
            response.headers.update(SECURITY_HEADERS)
            return response

        return checked


def _message(request: Request, status: int, message: str, back: str, back_label: str, error: bool = False) -> Response:
    title = "Not found" if status == 404 else "Cannot show this"
    context = {"message": message, "back": back, "back_label": back_label, "error": error}
    return html(request, "message.html", status, title=title, current="overview", **context)


def _sign_in_page(
    request: Request, next_path: str, error: str = "", status: int = 200, retry_after: int = 0
) -> Response:
    response = html(request, "signin.html", status, title="Sign in", current="", next_path=next_path, error=error)
    if retry_after:
        response.headers["Retry-After"] = str(retry_after)
    return response


def _redirect(path: str) -> Response:
    return RedirectResponse(path, 303, headers=SECURITY_HEADERS)


def _local(path: str) -> str:
    """Only a console path to return to after signing in: never another site (an open redirect)."""
    return path if path.startswith("/console") and not path.startswith("//") and "\\" not in path else "/console"


def _without_people(item: dict[str, Any]) -> dict[str, Any]:
    if isinstance(item.get("newest"), list):
        return item | {"newest": [_without_people(i) for i in item["newest"]]}
    if "newest" in item:
        return item | {"newest": _without_people(item["newest"])}
    return {k: v for k, v in item.items() if k != "user_id"}
