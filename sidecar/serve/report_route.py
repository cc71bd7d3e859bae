"""``GET /report`` of ``bloomspan serve``: the HTML report of the run behind the template alias.

Read-only, so it needs no admin token. The page is rendered in a worker thread (cluster reads
and matplotlib) and kept per physical index: it is rendered again only after the alias moved
to another run (or a new run joined the kept ones), and one render runs at a time.
"""
from __future__ import annotations

import asyncio
import logging

from aiohttp import web

from bloomspan.sidecar.errors import RunNotFoundError
from bloomspan.sidecar.publish.template_index import physical_indices
from bloomspan.sidecar.report.html import CSP, render_html
from bloomspan.sidecar.report.model import cluster_report_model

log = logging.getLogger(__name__)

REPORT_CACHE = web.AppKey("report_cache", dict)


def _render(client, template_index: str, cache: dict) -> tuple[int, str]:
    kept = physical_indices(client, template_index)
    key = tuple(sorted((i, s["aliased"]) for i, s in kept.items() if s["complete"]))
    if cache.get("key") == key and key:
        return 200, cache["page"]
    try:
        page = render_html(cluster_report_model(client, template_index))
    except RunNotFoundError as exc:
        return 404, str(exc)
    cache.update(key=key, page=page)
    log.info("report rendered template_index=%s runs=%d bytes=%d", template_index, len(key), len(page))
    return 200, page


def add_report_route(app: web.Application, config, holder) -> None:
    """Register ``GET /report`` on ``serve``'s app (before its catch-all proxy route) for
    ``config`` (a ``ServeConfig``); it reads with ``holder``'s cluster client (the
    ``CleanerHolder`` that loads the phrase set)."""
    app[REPORT_CACHE] = {"lock": asyncio.Lock()}

    async def report_page(request: web.Request) -> web.Response:
        if not config.template_index:
            return web.json_response({"error": {"type": "bloomspan_no_template_index",
                                                "reason": "serve runs without --template-index: no report"},
                                      "status": 404}, status=404)
        cache = request.app[REPORT_CACHE]
        try:
            async with cache["lock"]:
                status, page = await asyncio.to_thread(_render, holder.client(), config.template_index, cache)
        except Exception as exc:  # cluster down or unreadable: a JSON error, never a traceback page
            # The exception's text may name the upstream URL: the log and the answer give its type only.
            log.warning("report failed template_index=%s error=%s", config.template_index, type(exc).__name__)
            return web.json_response({"error": {"type": "bloomspan_report_unavailable",
                                                "reason": f"reading the template index failed ({type(exc).__name__})"},
                                      "status": 503}, status=503)
        if status != 200:
            return web.json_response({"error": {"type": "bloomspan_no_run", "reason": page}, "status": status},
                                     status=status)
        return web.Response(text=page, content_type="text/html", charset="utf-8",
                            headers={"Content-Security-Policy": CSP, "Cache-Control": "no-store",
                                     "X-Content-Type-Options": "nosniff"})

    app.router.add_get("/report", report_page)

