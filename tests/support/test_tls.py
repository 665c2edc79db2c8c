"""The process's one TLS context: made once, and verifying as httpx's default does."""

from __future__ import annotations

import ssl

from threadsage.support.tls import tls_context


def test_one_context_a_process_that_checks_certificates_and_host_names() -> None:
    context = tls_context()
    assert tls_context() is context
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] > 0  # the CA bundle is loaded
