"""Markdown → pulldown-cmark events (through pyromark), and which link targets may be live.

Input is cleaned first: C0/C1 control characters (NUL included) are dropped and lone surrogates
replaced, so nothing invisible reaches a platform and the parser always gets valid UTF-8.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import pyromark
from pyromark.event import Event

MAX_LINK_CHARS = 512  # a longer target is not made live: it would crowd out a message's text
_OPTIONS = pyromark.Options.ENABLE_TABLES | pyromark.Options.ENABLE_STRIKETHROUGH
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_URL_SAFE = "/?#[]@!$&'()*+,;=:%-._~"  # RFC 3986 reserved and unreserved, and existing %-escapes
_HOST = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?|[0-9a-f:.]*:[0-9a-f:.]*")  # a DNS name, or IPv6 within []


def clean(text: str) -> str:
    """The text without control characters (tab and line breaks kept) and with lone surrogates replaced."""
    return _CONTROLS.sub("", text.encode("utf-8", "surrogatepass").decode("utf-8", "replace"))


def events(markdown: str) -> Iterator[Event]:
    """pulldown-cmark's events for the cleaned text: single-key dicts ({"Text": …}, {"Start": …}) or bare strings."""
    return pyromark.events(clean(markdown), options=_OPTIONS)


class Target(NamedTuple):
    """A link that may be live: `href` normalised (percent-encoded, ASCII host); `shown` is what a reader
    is told the link leads to — the host, or the address of a mailto link."""

    href: str
    shown: str


def live_target(destination: str) -> Target | None:
    """The link as a Target if it is http(s) or mailto and well formed; None drops it (its text stays)."""
    try:
        parts = urlsplit(destination.strip())
        scheme = parts.scheme.lower()
        if scheme in ("http", "https") and parts.hostname:
            host = parts.hostname if parts.hostname.isascii() else parts.hostname.encode("idna").decode("ascii")
            if not _HOST.fullmatch(host):
                return None
            netloc = (f"[{host}]" if ":" in host else host) + (f":{parts.port}" if parts.port else "")
            path, shown = quote(parts.path, _URL_SAFE), host
        elif scheme == "mailto" and "@" in parts.path:
            netloc, path, shown = "", quote(unquote(parts.path), "@.+-_~!$&'*=,;:"), unquote(parts.path)
        else:
            return None
        href = urlunsplit((scheme, netloc, path, quote(parts.query, _URL_SAFE), quote(parts.fragment, _URL_SAFE)))
    except (ValueError, UnicodeError):
        return None
    return Target(href, shown) if len(href) <= MAX_LINK_CHARS else None


def label_differs(label: str, destination: str, target: Target) -> bool:
    """Whether the link's text says something other than where it leads (so the host must be shown)."""
    return _bare(label) not in {_bare(destination), _bare(target.href), target.shown.lower()}


def _bare(text: str) -> str:
    text = text.strip().lower().removeprefix("mailto:")
    return text.removeprefix("https://").removeprefix("http://").rstrip("/")
