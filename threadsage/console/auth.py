"""Who may see the console: whoever knows `THREADSAGE_CONSOLE_TOKEN` (at least 24 characters).

A browser signs in once on a page with one password field and then carries a cookie (HttpOnly,
SameSite=Strict, Secure behind HTTPS) holding a session id (`threadsage.console.sessions`):
random, never the token, new at every sign-in, and ended on the server by signing out. A script
sends `Authorization: Bearer <token>`. Comparisons take constant time; a cookie or header that is
not what we issued (other characters, other length) is simply not signed in. Wrong passwords, by
form or Bearer, are throttled per client address (`threadsage.console.throttle`)."""

from __future__ import annotations

import hmac
import logging

from starlette.requests import Request
from starlette.responses import Response

from threadsage.console.sessions import Sessions
from threadsage.console.throttle import SignInThrottle

COOKIE = "threadsage_console"
PATH = "/console"
MIN_TOKEN = 24
log = logging.getLogger(__name__)


class ConsoleConfigError(ValueError):
    """The console cannot start as configured: said at start-up, in words."""


class TooManyAttempts(Exception):
    """Too many wrong passwords from this address: it may try again in `retry_after` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"Too many wrong passwords from this address: try again in {retry_after} s")
        self.retry_after = retry_after


def checked_token(token: str) -> str:
    """`token`, or ConsoleConfigError when it is too short to stand guessing."""
    if len(token) < MIN_TOKEN:
        raise ConsoleConfigError(
            f"THREADSAGE_CONSOLE_TOKEN is {len(token)} characters: the console needs at least {MIN_TOKEN} characters "
            "(make one with: python -c 'import secrets; print(secrets.token_urlsafe(24))')"
        )
    return token


class ConsoleAuth:
    def __init__(self, token: str, sessions: Sessions, throttle: SignInThrottle | None = None) -> None:
        self._token = token.encode()
        self.sessions = sessions
        self.throttle = throttle or SignInThrottle()

    async def allows(self, request: Request) -> bool:
        """A Bearer token (a wrong one counts against the address), or a live session's cookie."""
        scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and credentials:
            return self.password(request, credentials.strip())
        return await self.sessions.valid(request.cookies.get(COOKIE, ""))

    def password(self, request: Request, token: str) -> bool:
        """Whether `token` is the console's; raises TooManyAttempts while the address is held back."""
        address = _address(request)
        wait = self.throttle.retry_after(address)
        if wait:
            raise TooManyAttempts(wait)
        if hmac.compare_digest(token.encode(), self._token):
            self.throttle.succeeded(address)
            return True
        failures = self.throttle.failed(address)
        if failures == 1:
            log.warning("console: a wrong password from %s (more from it this minute are counted, not logged)", address)
        elif failures == self.throttle.limit:
            log.warning(
                "console: %d wrong passwords from %s within %.0f s: its sign-ins are refused until then",
                failures,
                address,
                self.throttle.window,
            )
        return False

    async def sign_in(self, response: Response, request: Request) -> None:
        """A new session (the one the browser had, if any, ends) in a cookie on `response`."""
        session = await self.sessions.open(replacing=request.cookies.get(COOKIE, ""))
        response.set_cookie(
            COOKIE,
            session,
            max_age=self.sessions.lifetime,
            path=PATH,
            httponly=True,
            samesite="strict",
            secure=_https(request),
        )

    async def sign_out(self, response: Response, request: Request) -> None:
        await self.sessions.close(request.cookies.get(COOKIE, ""))
        response.delete_cookie(COOKIE, path=PATH, httponly=True, samesite="strict", secure=_https(request))


def _address(request: Request) -> str:
    return request.client.host if request.client else "?"


def _https(request: Request) -> bool:
    """Behind a TLS-terminating proxy the app sees http; the proxy says what the browser used."""
    return request.url.scheme == "https" or request.headers.get("x-forwarded-proto", "") == "https"
