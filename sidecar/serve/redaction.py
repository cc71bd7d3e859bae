"""Keep credentials out of everything `bloomspan serve` prints or logs.

Two places a secret can leak into a line of text: the user-info part of a URL
(``https://admin:secret@host``) and an ``Authorization`` / API-key header value. The URL the
service keeps has no user-info at all (:func:`split_userinfo` moves it into the config's
username and password); :func:`redact` masks both kinds in any text, and
:class:`RedactingFilter` applies it to every log record a handler emits, so a library that
logs a URL or a header (aiohttp, opensearch-py, urllib3) cannot leak one either.
"""
from __future__ import annotations

import logging
import re
from urllib.parse import unquote, urlsplit, urlunsplit

# scheme://user[:password]@ -> scheme://***@
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@]+@")
# Authorization: Basic xyz / "authorization": "ApiKey xyz" / api_key=xyz -> the name and ***
_HEADER = re.compile(r"(?i)\b(authorization|proxy-authorization|api[-_]?key|x-api-key)(['\"]?\s*[:=]\s*['\"]?)"
                     r"(?:(?:basic|bearer|apikey)\s+)?[^\s'\",}]+")


def redact(text: str) -> str:
    """``text`` with URL user-info and authorization header values replaced by ``***``."""
    return _HEADER.sub(r"\1\2***", _USERINFO.sub(r"\1***@", text))


def split_userinfo(url: str) -> tuple[str, str | None, str | None]:
    """``(url without user-info, username, password)``; the last two are None when absent."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None, None
    userinfo, host = parts.netloc.rsplit("@", 1)
    user, _, password = userinfo.partition(":")
    clean = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return clean, unquote(user) or None, unquote(password) if password else None


class RedactingFilter(logging.Filter):
    """A handler filter that renders each record once and masks credentials in it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = redact(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


def install_log_redaction(logger: logging.Logger | None = None) -> None:
    """Add :class:`RedactingFilter` to every handler of ``logger`` (default: the root logger)."""
    logger = logger or logging.getLogger()
    for handler in logger.handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
