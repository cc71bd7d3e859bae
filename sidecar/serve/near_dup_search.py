"""Search with near-duplicate collapse: run a query, fold near-identical hits into the best-ranked one.

After Jain, Dahlin & Tewari, "Using Bloom Filters to Refine Web Search Results": every
document carries a small Bloom filter of the content-defined chunks of its (cleaned) text,
``bloomspan.fingerprint`` (written at ingest by ``CleanerConfig(fingerprint=True)``, see
:mod:`bloomspan.engine.sketches.chunk_fingerprint`). At search time the top ``k`` hits are fetched
with their fingerprints, pairwise similarities come from bitwise ANDs of the filters
(:mod:`bloomspan.ingest.near_duplicates`), and each hit similar to a better-ranked
representative (similarity >= ``threshold``) is folded into that representative's
``collapsed`` list.

:func:`search_collapsed` is the library function (a synchronous opensearch-py client);
:func:`add_search_routes` registers ``POST /_bloomspan/search/{index}`` on an aiohttp app
(the query body as JSON; ``k``, ``threshold``, ``measure`` and ``fingerprint_field`` as
query parameters), running the search in a worker thread.

Response: the cluster's search response, whose ``hits.hits`` holds only the
representatives (in the cluster's order), each with a ``collapsed`` list of the hits folded
into it (each with its ``similarity`` to the representative), plus a ``bloomspan`` object:
``k``, ``threshold``, ``measure``, ``considered`` hits, ``groups``, ``collapsed`` count,
``missing_fingerprint`` and the timings ``search_ms`` (round trip), ``collapse_ms``. Rank is
the cluster's order (scores may be null under a sort). A hit without a usable fingerprint
(missing, not base64, other length) is never collapsed. The query's ``size`` and ``from``
are replaced by ``k`` and 0; the fingerprint is fetched in ``_source`` and removed from the
hits again unless the query's own ``_source`` selection asked for it.
"""
from __future__ import annotations

import asyncio
import copy
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from bloomspan.engine.sketches.chunk_fingerprint import decode_fingerprint
from bloomspan.ingest.base.errors import IngestConfigError
from bloomspan.ingest.companions.near_duplicates import MEASURES, collapse, similarity_matrix
from bloomspan.sidecar.cluster.connection import ClusterConfig
from bloomspan.sidecar.cluster.field_paths import MISSING, lookup_field

log = logging.getLogger(__name__)

FINGERPRINT_FIELD = "bloomspan.fingerprint"
DEFAULT_K = 80
DEFAULT_THRESHOLD = 0.5
MAX_K = 10_000


def validate_options(k: Any, threshold: Any, measure: Any, fingerprint_field: Any) -> None:
    """Raise :class:`IngestConfigError` naming the first invalid option."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise IngestConfigError("k", k, f"must be an integer in [1, {MAX_K}] (80 is the reference value)")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 <= threshold <= 1.0:
        raise IngestConfigError("threshold", threshold, "must be a number in [0, 1]")
    if measure not in MEASURES:
        raise IngestConfigError("measure", measure, f"must be one of {', '.join(MEASURES)}")
    if not isinstance(fingerprint_field, str) or not fingerprint_field:
        raise IngestConfigError("fingerprint_field", fingerprint_field, "must be a non-empty field path")


def prepare_body(query_body: dict | None, k: int, fingerprint_field: str = FINGERPRINT_FIELD) -> tuple[dict, bool]:
    """``(body to send, strip)``: the query with ``size=k``, ``from=0`` and the fingerprint
    fetched; ``strip`` is True when the fingerprint was added only for the collapse."""
    if query_body is not None and not isinstance(query_body, dict):
        raise IngestConfigError("query_body", type(query_body).__name__, "must be a JSON object (a search request body)")
    body = copy.deepcopy(query_body) if query_body else {}
    body["size"] = k
    body.pop("from", None)
    src = body.get("_source", True)
    strip = True
    if src is True:
        strip = False
    elif src is False:
        body["_source"] = {"includes": [fingerprint_field]}
    elif isinstance(src, str):
        strip = src != fingerprint_field
        body["_source"] = [src, fingerprint_field]
    elif isinstance(src, list):
        strip = fingerprint_field not in src
        body["_source"] = list(src) + ([fingerprint_field] if strip else [])
    elif isinstance(src, dict):
        src = dict(src)
        includes = src.get("includes", src.get("include"))
        excludes = src.get("excludes", src.get("exclude"))
        includes = [includes] if isinstance(includes, str) else list(includes or [])
        excludes = [excludes] if isinstance(excludes, str) else list(excludes or [])
        strip = bool(includes) and fingerprint_field not in includes or fingerprint_field in excludes
        if includes and fingerprint_field not in includes:
            includes.append(fingerprint_field)
        excludes = [e for e in excludes if e != fingerprint_field]
        src.pop("include", None)
        src.pop("exclude", None)
        src["includes"], src["excludes"] = includes, excludes
        body["_source"] = src
    else:
        raise IngestConfigError("_source", src, "must be true, false, a field, a list of fields or an includes/excludes object")
    return body, strip


def _remove(source: dict, path: str) -> None:
    if path in source:
        del source[path]
        return
    parts = path.split(".")
    cur: Any = source
    for part in parts[:-1]:
        if not isinstance(cur, dict) or part not in cur:
            return
        cur = cur[part]
    if isinstance(cur, dict):
        cur.pop(parts[-1], None)
        if not cur and len(parts) > 1:
            _remove(source, ".".join(parts[:-1]))


def collapse_hits(hits: list[dict], threshold: float = DEFAULT_THRESHOLD, measure: str = "jaccard",
                  fingerprint_field: str = FINGERPRINT_FIELD, strip: bool = False) -> tuple[list[dict], dict]:
    """``(representatives, info)`` of search hits (dicts with ``_source``), in rank order.

    Each representative is a shallow copy of its hit with ``collapsed``: the hits folded into
    it, each with ``similarity``. ``info`` counts groups, collapsed hits and hits without a
    usable fingerprint, and gives ``collapse_ms``.
    """
    t0 = time.perf_counter()
    raws: list[bytes | None] = []
    for hit in hits:
        value = lookup_field(hit.get("_source"), fingerprint_field)
        value = None if value is MISSING else value
        try:
            raws.append(decode_fingerprint(value) if value is not None else None)
        except (ValueError, TypeError):
            raws.append(None)
    widths = [len(r) for r in raws if r]
    width = max(set(widths), key=widths.count) if widths else 0
    raws = [r if r and len(r) == width else None for r in raws]
    # rank = position in the cluster's answer: score -i keeps that order through collapse()
    groups = collapse([(i, -i, raws[i]) for i in range(len(hits))], threshold, measure)
    present = [i for i, r in enumerate(raws) if r is not None]
    row = {i: n for n, i in enumerate(present)}
    sims = (similarity_matrix(np.frombuffer(b"".join(raws[i] for i in present), dtype=np.uint8)
                              .reshape(len(present), width), measure) if present else None)
    out: list[dict] = []
    for group in groups:
        rep_i = group[0][0]
        rep = _shown(hits[rep_i], fingerprint_field, strip)
        rep["collapsed"] = []
        for member in group[1:]:
            m = _shown(hits[member[0]], fingerprint_field, strip)
            m["similarity"] = round(float(sims[row[rep_i], row[member[0]]]), 4)
            rep["collapsed"].append(m)
        out.append(rep)
    info = {"considered": len(hits), "groups": len(groups), "collapsed": len(hits) - len(groups),
            "missing_fingerprint": len(hits) - len(present), "collapse_ms": (time.perf_counter() - t0) * 1e3}
    return out, info


def _shown(hit: dict, fingerprint_field: str, strip: bool) -> dict:
    out = dict(hit)
    if strip and isinstance(hit.get("_source"), dict):
        out["_source"] = copy.deepcopy(hit["_source"])
        _remove(out["_source"], fingerprint_field)
    return out


def search_collapsed(client, index: str, query_body: dict | None = None, k: int = DEFAULT_K,
                     threshold: float = DEFAULT_THRESHOLD, fingerprint_field: str = FINGERPRINT_FIELD,
                     measure: str = "jaccard", **search_params: Any) -> dict:
    """Run ``query_body`` on ``index``, take the top ``k`` hits and collapse near-duplicates
    (module docstring). ``search_params`` go to ``client.search`` (e.g. ``routing``)."""
    validate_options(k, threshold, measure, fingerprint_field)
    body, strip = prepare_body(query_body, k, fingerprint_field)
    t0 = time.perf_counter()
    response = client.search(index=index, body=body, **search_params)
    search_ms = (time.perf_counter() - t0) * 1e3
    hits = response.get("hits", {}).get("hits", [])
    reps, info = collapse_hits(hits, threshold, measure, fingerprint_field, strip)
    out = dict(response)
    out["hits"] = dict(response.get("hits", {}), hits=reps)
    out["bloomspan"] = {"k": k, "threshold": threshold, "measure": measure, "fingerprint_field": fingerprint_field,
                        **info, "search_ms": round(search_ms, 3), "collapse_ms": round(info["collapse_ms"], 3)}
    log.debug("collapsed search index=%s considered=%d groups=%d collapse_ms=%.2f", index, info["considered"],
              info["groups"], info["collapse_ms"])
    return out


# --------------------------------------------------------------------------- HTTP


def client_for_request(config) -> Callable[[Any], Any]:
    """``get_client(request)`` for :func:`add_search_routes` from a ``ServeConfig``.

    With ``forward_credentials`` (the proxy's default) a request's own ``Authorization``
    header is used (one cached client per distinct header, at most 16), so the search runs
    with the caller's permissions; otherwise, and for requests without one, the sidecar's
    own client (``config.opensearch_client()``).
    """
    # The caller's credentials replace the sidecar's: the address and TLS settings stay.
    forwarded = ClusterConfig(url=config.upstream_url, ca_certs=config.ca_certs, verify_certs=config.verify_certs,
                              timeout=config.upstream_timeout)
    lock = threading.Lock()
    own: list = []
    per_auth: OrderedDict[str, Any] = OrderedDict()

    def get_client(request=None):
        auth = request.headers.get("Authorization") if request is not None else None
        with lock:
            if auth and getattr(config, "forward_credentials", False):
                client = per_auth.get(auth)
                if client is None:
                    client = per_auth[auth] = forwarded.client(authorization=auth)
                    while len(per_auth) > 16:
                        per_auth.popitem(last=False)
                per_auth.move_to_end(auth)
                return client
            if not own:
                own.append(config.opensearch_client())
            return own[0]

    return get_client


def add_search_routes(app, get_client: Callable[[Any], Any], prefix: str = "/_bloomspan/search") -> None:
    """Register ``POST {prefix}/{index}`` (and ``GET`` with an optional body) on ``app``.

    ``get_client(request)`` returns a synchronous opensearch-py client (e.g.
    :func:`client_for_request`); it and the search run in a worker thread.
    """
    from aiohttp import web

    async def handler(request: web.Request) -> web.Response:
        index = request.match_info["index"]
        try:
            body = await request.json() if request.can_read_body else None
        except ValueError as exc:
            return _error(400, "bloomspan_bad_request", f"body: not valid JSON ({exc})")
        q = request.query
        try:
            k = int(q.get("k", DEFAULT_K))
            threshold = float(q.get("threshold", DEFAULT_THRESHOLD))
        except ValueError as exc:
            return _error(400, "bloomspan_bad_request", f"k/threshold: {exc}")
        measure = q.get("measure", "jaccard")
        fp_field = q.get("fingerprint_field", FINGERPRINT_FIELD)
        try:
            validate_options(k, threshold, measure, fp_field)
            prepare_body(body, k, fp_field)
        except IngestConfigError as exc:
            return _error(400, "bloomspan_bad_request", str(exc))

        def run() -> dict:
            return search_collapsed(get_client(request), index, body, k, threshold, fp_field, measure)

        try:
            result = await asyncio.to_thread(run)
        except Exception as exc:
            status = getattr(exc, "status_code", None)
            if isinstance(status, int) and 400 <= status < 600:  # the cluster's own answer, passed on
                info = getattr(exc, "info", None)
                return web.json_response(info if isinstance(info, dict) else {"error": str(exc), "status": status},
                                         status=status)
            log.exception("collapsed search on %s failed", index)
            return _error(502, "bloomspan_upstream_error", f"{type(exc).__name__}: {exc}")
        return web.json_response(result)

    app.router.add_post(prefix + "/{index}", handler)
    app.router.add_get(prefix + "/{index}", handler)


def _error(status: int, kind: str, reason: str):
    from aiohttp import web

    return web.json_response({"error": {"type": kind, "reason": reason}, "status": status}, status=status)
