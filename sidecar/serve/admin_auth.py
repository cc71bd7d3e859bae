"""The admin token of `bloomspan serve`: state-changing sidecar endpoints need it.

``@admin_only`` wraps a handler (``POST /runs``, and every state-changing endpoint added
later): when the app holds a token (``--admin-token`` / ``BLOOMSPAN_SERVE_ADMIN_TOKEN`` /
``--admin-token-file``), a request without ``Authorization: Bearer <token>`` gets a JSON 401.
The comparison takes the same time whatever the first differing byte (``hmac.compare_digest``).
Reads (``GET /runs``, ``/metrics``, ``/healthz``) stay open.
"""
from __future__ import annotations

import functools
import hmac
import logging

from aiohttp import web

from bloomspan.sidecar.serve.proxy_errors import error_response

log = logging.getLogger(__name__)

ADMIN_TOKEN = web.AppKey("admin_token", str)


def bearer_matches(header: str | None, token: str) -> bool:
    """Does an ``Authorization`` header value carry exactly ``token`` as a bearer token?"""
    scheme, _, given = (header or "").partition(" ")
    ok_scheme = scheme.lower() == "bearer"
    same = hmac.compare_digest(given.strip().encode(), token.encode())
    return ok_scheme and same


def admin_only(handler):
    """Guard ``handler`` with the app's admin token (no token configured: open)."""

    @functools.wraps(handler)
    async def guarded(request: web.Request) -> web.StreamResponse:
        token = request.app.get(ADMIN_TOKEN)
        if token and not bearer_matches(request.headers.get("Authorization"), token):
            log.warning("admin_denied method=%s path=%s", request.method, request.path)
            return error_response(401, "bloomspan_unauthorized",
                                  f"{request.method} {request.path} needs Authorization: Bearer <admin token> "
                                  "(the token `serve` was started with: --admin-token)",
                                  headers={"WWW-Authenticate": 'Bearer realm="bloomspan"'})
        return await handler(request)

    guarded.admin_only = True
    return guarded
