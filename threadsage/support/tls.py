"""One TLS context a process for the HTTP clients it opens to other services."""

from __future__ import annotations

import ssl
from functools import cache

import httpx


@cache
def tls_context() -> ssl.SSLContext:
    """httpx's own default (certifi's CA bundle, or `SSL_CERT_FILE` / `SSL_CERT_DIR`), made once: a
    client given none loads the CA store anew, about 20 ms of CPU each (docs/performance.md, "The
    fast tier"). For clients that speak HTTP/1.1 only: httpcore sets the
    context's ALPN protocols on each connection it opens."""
    return httpx.create_ssl_context()
