"""Secrets out of what threadsage prints: connection URLs shown without their passwords, and a
logging filter that scrubs every record before any handler formats it.

What is scrubbed: the password of any `scheme://user:password@host` and credential parameters
(`?password=…`, libpq's `password=…`), tokens shaped like Slack, Telegram or OpenAI ones, and
the configured secret values. Libraries quote connection strings in their errors (libpq quotes a
malformed URI whole), so scrubbing the text of every record, traceback included, is what holds.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

REDACTED = "[redacted]"
MASK = "***"

_TOKEN = re.compile(
    r"xox[a-z]-[A-Za-z0-9-]+"  # Slack bot, user, app-level refresh… tokens
    r"|xapp-[A-Za-z0-9-]+"  # Slack app-level tokens (Socket Mode)
    r"|\d+:[A-Za-z0-9_-]{30,}"  # Telegram bot tokens (in URLs: .../bot<token>/getMe)
    r"|\bsk-[A-Za-z0-9_-]{16,}"  # OpenAI-style API keys
)
# The password runs to the last "@" of the URL: passwords are not always percent-encoded.
_URL_PASSWORD = re.compile(r"""(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/?#@"'<>]*:)[^\s"'<>]*@""")
_CREDENTIAL_PARAMETER = re.compile(
    r"""(\b(?:ssl)?password|\bpasswd|\bpwd|\btoken|\bsecret|\bapi_?key)(\s*=\s*)('[^']*'|[^\s&#;"'<>]+)""",
    re.IGNORECASE,
)
_PLAIN = logging.Formatter()


def redact_url(text: str) -> str:
    """A connection URL (or libpq `key=value` string, or any text holding them) fit to print: the
    user and host stay, passwords become ***."""
    text = _URL_PASSWORD.sub(rf"\1{MASK}@", text)
    return _CREDENTIAL_PARAMETER.sub(rf"\1\2{MASK}", text)


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """`text` without URL passwords, tokens, or any of `secrets`."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return _TOKEN.sub(REDACTED, redact_url(text))


class RedactingFilter(logging.Filter):
    """Scrubs a record in place — its message with the arguments merged in, its traceback and its
    stack — so that this handler and any after it only ever see the scrubbed text."""

    def __init__(self, secrets: Sequence[str] = ()) -> None:
        super().__init__()
        self.secrets = tuple(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - arguments that do not fit the message; a filter must not raise
            message = str(record.msg)
        record.msg, record.args = redact(message, self.secrets), None
        if record.exc_info:
            record.exc_text = _PLAIN.formatException(record.exc_info)
            record.exc_info = None  # the exception itself would be formatted again, unscrubbed
        if record.exc_text:
            record.exc_text = redact(record.exc_text, self.secrets)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, self.secrets)
        return True
