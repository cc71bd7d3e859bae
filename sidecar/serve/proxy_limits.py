"""The proxy's request-body limit: the cluster's own, read once at startup, and a bounded read.

A node refuses a body over ``http.max_content_length`` (100mb unless configured) with 413; the
proxy applies the same limit (or ``--max-body-bytes``) before it buffers a body, so a request
the cluster would refuse never costs the proxy more than the limit. The body is read chunk by
chunk, counted after decompression (a gzip body is limited by what it inflates to, as on the
node), into one buffer filled in place: one copy of the body, never two.
"""
from __future__ import annotations

import logging
import re

from aiohttp import ClientSession, ClientTimeout, web

from bloomspan.sidecar.serve.proxy_errors import error_response

log = logging.getLogger(__name__)

DEFAULT_MAX_BODY_BYTES = 100 * 1024 * 1024  # OpenSearch's default http.max_content_length
SETTING = "http.max_content_length"
_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "m": 1024**2, "mb": 1024**2, "g": 1024**3, "gb": 1024**3,
          "t": 1024**4, "tb": 1024**4, "p": 1024**5, "pb": 1024**5}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*")
READ_CHUNK = 1 << 20


def parse_byte_size(value: str) -> int:
    """OpenSearch's byte-size notation (``100mb``, ``1.5gb``, ``512kb``, ``1024``) -> bytes."""
    match = _SIZE.fullmatch(str(value).lower())
    if not match or match.group(2) not in _UNITS:
        raise ValueError(f"{value!r} is not a byte size (like 100mb)")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


async def cluster_body_limit(session: ClientSession, upstream_url: str, headers: dict) -> int:
    """The cluster's ``http.max_content_length`` in bytes; :data:`DEFAULT_MAX_BODY_BYTES`
    (with one log line saying why) when it cannot be read."""
    url = upstream_url + "/_cluster/settings?include_defaults=true&flat_settings=true"
    try:
        async with session.get(url, headers=headers, timeout=ClientTimeout(total=10)) as resp:
            if resp.status != 200:
                raise ValueError(f"status {resp.status}")
            settings = await resp.json(content_type=None)
        for scope in ("transient", "persistent", "defaults"):
            value = (settings.get(scope) or {}).get(SETTING)
            if value is not None:
                limit = parse_byte_size(value)
                log.info("proxy body limit=%d bytes from the cluster's %s=%s", limit, SETTING, value)
                return limit
        raise ValueError(f"{SETTING} missing from the answer")
    except Exception as exc:  # any failure: the documented default, never a crash at startup
        log.warning("proxy could not read the cluster's %s (%s: %s); body limit is the default %d bytes; "
                    "set --max-body-bytes to choose", SETTING, type(exc).__name__, str(exc)[:120],
                    DEFAULT_MAX_BODY_BYTES)
        return DEFAULT_MAX_BODY_BYTES


class BodyTooLarge(Exception):
    """``size`` is the declared length, or None when the body was cut off while reading."""

    def __init__(self, size: int | None, limit: int):
        super().__init__(f"request body is over {limit} bytes")
        self.size, self.limit = size, limit

    def response(self) -> web.Response:
        shown = f"{self.size} bytes" if self.size is not None else f"more than {self.limit} bytes"
        return error_response(413, "content_too_long_exception",
                              f"request body is {shown}, over the limit of {self.limit} bytes "
                              f"(the cluster's {SETTING}, or serve --max-body-bytes)",
                              headers={"Connection": "close"})


class BodyUnreadable(Exception):
    """The body stream broke while reading (``payload_error``: aiohttp's RequestPayloadError)."""

    def __init__(self, payload_error: BaseException):
        super().__init__(str(payload_error))
        self.payload_error = payload_error


async def read_body(request: web.Request, limit: int) -> bytearray:
    """The (decompressed) request body; :class:`BodyTooLarge` as soon as it passes ``limit``,
    :class:`BodyUnreadable` when its encoding or framing is broken."""
    declared = request.content_length
    if declared is not None and declared > limit and "Content-Encoding" not in request.headers:
        raise BodyTooLarge(declared, limit)
    # One buffer, filled in place: sized by Content-Length when the body arrives as declared,
    # else grown (a large bytearray grows by remapping, not copying), never a list of chunks
    # joined into a second copy.
    body = bytearray(declared) if declared is not None and "Content-Encoding" not in request.headers else bytearray()
    view, size = memoryview(body) if body else None, 0
    try:
        async for chunk in request.content.iter_chunked(READ_CHUNK):
            end = size + len(chunk)
            if end > limit:
                raise BodyTooLarge(None, limit)
            if view is not None and end <= len(body):
                view[size:end] = chunk
            else:
                if view is not None:
                    view.release()
                    view = None
                    del body[size:]
                body += chunk
            size = end
    except web.RequestPayloadError as exc:  # not gzip after all, a broken chunk header, ...
        raise BodyUnreadable(exc) from None
    finally:
        if view is not None:
            view.release()
    if size < len(body):
        del body[size:]
    return body
