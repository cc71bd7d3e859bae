"""Error answers of `bloomspan serve` in OpenSearch's shape.

Every error the service produces itself has the body a node would send,
``{"error": {"root_cause": [...], "type": ..., "reason": ...}, "status": N}``, with
``Content-Type: application/json``, so clients parse it like any cluster error and retry
where they would retry a cluster: opensearch-py and elasticsearch-py retry 502, 503 and 504.

An upstream failure maps to a status by what went wrong:

* connection refused (a node restarting, nothing listening): **503** ``bloomspan_upstream_unavailable``;
* no answer in time (connect or read timeout): **504** ``bloomspan_upstream_timeout``;
* anything else on the way (DNS, TLS, connection reset, a broken response): **502**
  ``bloomspan_upstream_error``.

:func:`error_middleware` makes sure no exception leaves a handler as aiohttp's plain-text
500: an HTTP exception keeps its status with a JSON body, an upstream failure is a 502/503/504,
and anything else is our bug, a 500 ``bloomspan_internal_error``. Each is one log line
(method, path without the query string, error class), never a traceback.
"""
from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable

from aiohttp import ClientConnectorError, ClientError, web

log = logging.getLogger(__name__)

JSON = "application/json; charset=UTF-8"


def error_body(status: int, error_type: str, reason: str) -> dict:
    """The JSON body OpenSearch sends with an error ``status``."""
    cause = {"type": error_type, "reason": reason}
    return {"error": {"root_cause": [cause], **cause}, "status": status}


def error_response(status: int, error_type: str, reason: str, headers: dict | None = None) -> web.Response:
    return web.Response(status=status, body=json.dumps(error_body(status, error_type, reason)).encode(),
                        headers={"Content-Type": JSON, **(headers or {})})


def upstream_failure(exc: BaseException) -> tuple[int, str, str]:
    """``(status, type, reason)`` answering a request whose upstream call raised ``exc``."""
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return 504, "bloomspan_upstream_timeout", "the cluster behind the proxy did not answer in time"
    if isinstance(exc, ClientConnectorError) and isinstance(exc.os_error, ConnectionRefusedError):
        return 503, "bloomspan_upstream_unavailable", "the cluster behind the proxy refused the connection"
    return 502, "bloomspan_upstream_error", f"the cluster behind the proxy could not be reached ({type(exc).__name__})"


def is_upstream_failure(exc: BaseException) -> bool:
    return isinstance(exc, (ClientError, asyncio.TimeoutError, TimeoutError))


def error_middleware(on_upstream_failure: Callable[[int], None] = lambda status: None):
    """The outermost middleware: every failure leaves as a JSON error (see the module doc).

    ``on_upstream_failure(status)`` is called once per upstream failure (the service counts
    them in its metrics).
    """

    @web.middleware
    async def middleware(request: web.Request, handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPException as exc:
            if exc.status < 400 or exc.content_type == "application/json":
                raise
            return error_response(exc.status, f"http_{exc.status}", exc.reason, headers=_kept_headers(exc))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if is_upstream_failure(exc):
                status, error_type, reason = upstream_failure(exc)
                on_upstream_failure(status)
                log.warning("proxy upstream_failure status=%d method=%s path=%s error=%s", status, request.method,
                            request.path, type(exc).__name__)
                return error_response(status, error_type, reason)
            log.error("internal_error method=%s path=%s error=%s: %s", request.method, request.path,
                      type(exc).__name__, str(exc)[:200])
            return error_response(500, "bloomspan_internal_error",
                                  f"the proxy failed on this request ({type(exc).__name__}); see its log")

    return middleware


def _kept_headers(exc: web.HTTPException) -> dict:
    """Headers of an HTTP exception worth keeping on the JSON answer (Allow, WWW-Authenticate)."""
    return {k: v for k, v in exc.headers.items() if k.lower() in ("allow", "www-authenticate", "retry-after")}
