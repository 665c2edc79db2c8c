"""Who may see the console: whoever knows `THREADSAGE_CONSOLE_TOKEN`.

A browser signs in once on a page with one password field and then carries a cookie (HttpOnly,
SameSite=Strict, Secure behind HTTPS) holding an HMAC of the token — never the token itself, so a
leaked cookie does not reveal the password, and changing the token signs everyone out. A script
sends `Authorization: Bearer <token>`. Comparisons take constant time.
"""

from __future__ import annotations

import hashlib
import hmac

from starlette.requests import Request
from starlette.responses import Response

COOKIE = "threadsage_console"
COOKIE_MAX_AGE = 7 * 24 * 3600
PATH = "/console"


class ConsoleAuth:
    def __init__(self, token: str) -> None:
        self._token = token.encode()
        self._session = hmac.new(self._token, b"threadsage console session", hashlib.sha256).hexdigest()

    def allows(self, request: Request) -> bool:
        scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and credentials:
            return self.matches(credentials.strip())
        return hmac.compare_digest(request.cookies.get(COOKIE, ""), self._session)

    def matches(self, token: str) -> bool:
        return hmac.compare_digest(token.encode(), self._token)

    def sign_in(self, response: Response, request: Request) -> None:
        response.set_cookie(
            COOKIE,
            self._session,
            max_age=COOKIE_MAX_AGE,
            path=PATH,
            httponly=True,
            samesite="strict",
            secure=_https(request),
        )

    @staticmethod
    def sign_out(response: Response, request: Request) -> None:
        response.delete_cookie(COOKIE, path=PATH, httponly=True, samesite="strict", secure=_https(request))


def _https(request: Request) -> bool:
    """Behind a TLS-terminating proxy the app sees http; the proxy says what the browser used."""
    return request.url.scheme == "https" or request.headers.get("x-forwarded-proto", "") == "https"
