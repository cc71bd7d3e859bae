"""`bloomspan serve`: health, metrics, mining runs on demand and on a schedule, and the bulk proxy.

``create_app(config) -> web.Application``. State lives under typed ``web.AppKey``s. Two
background tasks run as ``cleanup_ctx`` contexts, cancelled and awaited on shutdown: the
template watcher (reloads the cleaner when the template alias moves to a new run; requests in
flight keep the cleaner they started with, the swap is one reference assignment) and the
scheduler (a mining run every ``every_seconds``). CPU work — mining, building a matcher —
runs in threads (``asyncio.to_thread``; the proxy's parse, access check and rewrite on one
worker thread of its own), never on the event loop.

Routes: ``GET /healthz``, ``GET /readyz``, ``GET /metrics`` (Prometheus), ``GET /runs``,
``POST /runs`` (needs the admin token when one is set), ``GET /emerging``,
``/_bloomspan/search/{index}`` (near-duplicate collapse of the top hits); everything else is
proxied to the cluster, with ``_bulk`` and single-document index/create requests for
``clean_indices`` cleaned on the way.

The proxy, per request: the body is read up to the cluster's ``http.max_content_length``
(:mod:`.proxy_limits`, 413 beyond), checked against the access rules (:mod:`.proxy_access`,
403 with the reason), cleaned (:mod:`.bulk_proxy`, with the target indices' mappings from
:mod:`.mapping_probe`), and forwarded with its raw path and query. Every error the service
produces itself has OpenSearch's JSON shape (:mod:`.proxy_errors`): an unreachable or slow
cluster is a 502/503/504 clients retry, one log line each, and no exception reaches aiohttp's
plain-text 500. A request that is not valid HTTP, or whose body cannot be decoded, is a JSON
400 too (:mod:`.http_errors`; `bloomspan serve` runs the app with its runner).
"""
from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from aiohttp import ClientSession, ClientTimeout, payload, web
from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from yarl import URL

from bloomspan.sidecar.publish.template_index import list_runs as published_runs
from bloomspan.sidecar.serve.admin_auth import ADMIN_TOKEN, admin_only
from bloomspan.sidecar.serve.bulk_items import CLEANED_VERBS, BulkBody, parse_bulk
from bloomspan.sidecar.serve.bulk_proxy import (
    ROUND_BYTES,
    BulkOutput,
    BulkRewrite,
    IndexPatterns,
    ProxyStats,
    rewrite_single,
)
from bloomspan.sidecar.serve.emerging_hook import EmergingHook
from bloomspan.sidecar.serve.failure_streak import FailureStreak
from bloomspan.sidecar.serve.http_errors import unreadable_body
from bloomspan.sidecar.serve.mapping_probe import NewFieldsProbe, added_fields
from bloomspan.sidecar.serve.near_dup_search import add_search_routes, client_for_request
from bloomspan.sidecar.serve.proxy_access import READ_METHODS, AccessPolicy, split_path
from bloomspan.sidecar.serve.proxy_errors import error_middleware, error_response
from bloomspan.sidecar.serve.proxy_limits import (
    DEFAULT_MAX_BODY_BYTES,
    BodyTooLarge,
    BodyUnreadable,
    cluster_body_limit,
    read_body,
)
from bloomspan.sidecar.serve.report_route import add_report_route
from bloomspan.sidecar.serve.shadow import ShadowMeter
from bloomspan.sidecar.serve.state import CleanerHolder, RunRegistry, ServeConfig
from bloomspan.sidecar.serve.target_resolution import NOTHING_RESOLVED, resolve_targets

log = logging.getLogger(__name__)

CONFIG = web.AppKey("config", ServeConfig)
CLEANER = web.AppKey("cleaner", CleanerHolder)
RUNS = web.AppKey("runs", RunRegistry)
METRICS = web.AppKey("metrics", dict)
REGISTRY = web.AppKey("registry", CollectorRegistry)
UPSTREAM = web.AppKey("upstream", ClientSession)
EMERGING = web.AppKey("emerging", object)
PATTERNS = web.AppKey("patterns", IndexPatterns)
POLICY = web.AppKey("policy", AccessPolicy)
PROBE = web.AppKey("probe", NewFieldsProbe)
PROBES = web.AppKey("probes", dict)  # NewFieldsProbe by cleaning mode


@dataclass
class ProxyRuntime:
    """Proxy settings known only once the service has started (read from the cluster)."""

    max_body_bytes: int


RUNTIME = web.AppKey("runtime", ProxyRuntime)
WORKER = web.AppKey("worker", ThreadPoolExecutor)  # the proxy's CPU work: parse, access check, rewrite
KERNELS = web.AppKey("kernels", dict)  # {"ready": bool, "seconds": float | None}: the kernel warm-up

# The body is forwarded decompressed and re-framed, so its encoding and framing headers are
# the proxy's own; Expect was answered by the proxy already.
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
              "transfer-encoding", "upgrade", "host", "content-length", "content-encoding", "expect"}
# Bodies above this are checked against the access rules in a worker thread.
POLICY_INLINE_BYTES = 256 * 1024
# Bulk bodies above this are rewritten round by round (ROUND_BYTES of sources) while they are
# sent (chunked), so the proxy holds the body and one round of rewritten lines, never a second
# copy of the body; smaller ones are rewritten whole and sent with their length.
STREAM_BYTES = 8 * ROUND_BYTES


def _metrics(registry: CollectorRegistry) -> dict:
    return {
        "runs": Counter("bloomspan_mining_runs", "Mining runs by outcome", ["status"], registry=registry),
        "run_seconds": Gauge("bloomspan_last_run_seconds", "Duration of the last finished mining run", registry=registry),
        "docs_mined": Gauge("bloomspan_last_run_docs_mined", "Documents mined in the last run", registry=registry),
        "tokens_mined": Gauge("bloomspan_last_run_tokens_mined", "Tokens of the documents mined in the last run",
                              registry=registry),
        "phrases": Gauge("bloomspan_last_run_phrases", "Phrases published by the last run", registry=registry),
        "covered_share": Gauge("bloomspan_last_run_covered_share", "Share of corpus tokens covered by boilerplate", registry=registry),
        "proxy_requests": Counter("bloomspan_proxy_requests", "Requests through the proxy", ["kind"], registry=registry),
        "proxy_docs": Counter("bloomspan_proxy_documents", "Documents seen by the cleaner", ["outcome"], registry=registry),
        "proxy_tokens": Counter("bloomspan_proxy_tokens", "Tokens of cleaned fields", ["part"], registry=registry),
        "reloads": Counter("bloomspan_template_reloads", "Cleaner reloads after the template alias moved", ["status"], registry=registry),
        "template_phrases": Gauge("bloomspan_template_phrases", "Phrases in the cleaner now serving", registry=registry),
        "emerging": Gauge("bloomspan_emerging_shingles", "Emerging boilerplate shingles not covered by the phrase set", registry=registry),
        "uncleaned": Counter("bloomspan_proxy_documents_uncleaned", "Documents forwarded uncleaned, by reason",
                             ["reason"], registry=registry),
        "upstream_errors": Counter("bloomspan_proxy_upstream_errors", "Requests answered 502/503/504 because the "
                                   "cluster could not be reached", ["status"], registry=registry),
        "refused": Counter("bloomspan_proxy_refused", "Requests refused by the proxy's access rules", ["rule"],
                           registry=registry),
    }


def _count_proxy(app: web.Application, stats: ProxyStats) -> None:
    m = app[METRICS]
    for outcome in ("cleaned", "unchanged", "passed_through", "errors", "routed", "over_ratio_kept"):
        value = getattr(stats, outcome)
        if value:
            m["proxy_docs"].labels(outcome=outcome).inc(value)
    if stats.tokens:
        m["proxy_tokens"].labels(part="all").inc(stats.tokens)
        m["proxy_tokens"].labels(part="boilerplate").inc(stats.covered_tokens)
    for reason, count in (getattr(stats, "uncleaned_by_reason", None) or {}).items():
        if count:
            m["uncleaned"].labels(reason=str(reason)).inc(count)


# ---------------------------------------------------------------- plain routes

async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    app = request.app
    holder = app[CLEANER]
    problems = []
    try:
        async with app[UPSTREAM].get(app[CONFIG].upstream_url + "/", timeout=ClientTimeout(total=5),
                                     headers=app[CONFIG].upstream_headers()) as resp:
            if resp.status >= 500:
                problems.append(f"cluster answered {resp.status}")
    except Exception as exc:  # connection refused, DNS, TLS
        problems.append(f"cluster unreachable: {type(exc).__name__}")
    if app[CONFIG].clean_indices and holder.current is None and app[CONFIG].require_template:
        problems.append("no template loaded yet")
    if not app[KERNELS]["ready"]:
        problems.append("numba kernels still loading")
    body = {"ready": not problems, "problems": problems, "template_run": holder.run_id,
            "phrases": holder.n_phrases}
    return web.json_response(body, status=200 if not problems else 503)


async def metrics(request: web.Request) -> web.Response:
    emerging = request.app.get(EMERGING)
    if emerging is not None:
        request.app[METRICS]["emerging"].set(len(emerging.emerging()))
    return web.Response(body=generate_latest(request.app[REGISTRY]),
                        headers={"Content-Type": CONTENT_TYPE_LATEST})


async def list_runs(request: web.Request) -> web.Response:
    """Runs this process started, and the runs published in the template index (any replica)."""
    config = request.app[CONFIG]
    published, error = [], None
    if config.template_index:
        try:
            published = await asyncio.to_thread(published_runs, request.app[CLEANER].client(), config.template_index)
        except Exception as exc:  # cluster down: still show local history
            error = f"{type(exc).__name__}: {exc}"
    return web.json_response({"runs": request.app[RUNS].history(), "published": published, "published_error": error},
                             dumps=lambda o: json.dumps(o, default=str))


@admin_only
async def trigger_run(request: web.Request) -> web.Response:
    runs = request.app[RUNS]
    missing = runs.cannot_start()
    if missing is not None:
        return error_response(409, "bloomspan_mining_not_configured", missing)
    if runs.busy:
        return web.json_response({"error": "a mining run is already in progress", "run": runs.active}, status=409)
    run = runs.start_background(request.app, reason="api")
    return web.json_response({"accepted": True, "run": run}, status=202)


async def shadow_view(request: web.Request) -> web.Response:
    """What strip would have removed from the documents cleaned in shadow mode, per site,
    and the mode of each clean-index pattern now."""
    holder = request.app[CLEANER]
    config = request.app[CONFIG]
    modes = {p: holder.mode_of_pattern(p) for p in config.clean_indices}
    return web.json_response({"modes": modes, "sites": holder.shadow_meter.rows() if holder.shadow_meter else [],
                              "curation": holder.curation_summary})


async def emerging_view(request: web.Request) -> web.Response:
    emerging = request.app.get(EMERGING)
    if emerging is None:
        return web.json_response({"enabled": False, "emerging": []})
    return web.json_response({"enabled": True, "emerging": emerging.emerging()})


# ---------------------------------------------------------------- proxy

def _forward_headers(request: web.Request, config: ServeConfig) -> dict:
    headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
    if not config.forward_credentials:
        headers.pop("Authorization", None)
        headers.update(config.upstream_headers())
    return headers


def _classify(method: str, parts: list[str]) -> tuple[str, str | None, str | None]:
    """``(kind, index, doc_id)``: kind is bulk, single or other."""
    if method in ("POST", "PUT"):
        if parts and parts[-1] == "_bulk" and len(parts) <= 2:
            return "bulk", parts[0] if len(parts) == 2 else None, None
        if len(parts) in (2, 3) and parts[1] in ("_doc", "_create") and not parts[0].startswith("_"):
            return "single", parts[0], parts[2] if len(parts) == 3 else None
    return "other", None, None


def _refused(app: web.Application, request: web.Request, rule: str, reason: str) -> web.Response:
    app[METRICS]["refused"].labels(rule=rule).inc()
    log.warning("proxy refused rule=%s method=%s path=%s", rule, request.method, request.path)
    return error_response(403, "bloomspan_forbidden", reason)


def _with_index(raw_path: str, index: str) -> str:
    """``raw_path`` with its first segment (the index) replaced by ``index``."""
    first = raw_path.split("/", 2)[1]
    return "/" + quote(index, safe="") + raw_path[1 + len(first):]


def _probe_for(app: web.Application, mode: str) -> NewFieldsProbe:
    probes = app[PROBES]
    if mode not in probes:
        probes[mode] = NewFieldsProbe(added_fields(tuple(app[CONFIG].fields), "mark" if mode == "shadow" else mode))
    return probes[mode]


class _RequestCleaners:
    """The cleaner of each target index of one request, chosen once when the request starts (a
    reload that swaps the cleaners meanwhile does not change them), and the mapping probe of
    its mode."""

    def __init__(self, app: web.Application, targets: set[str]):
        holder = app[CLEANER]
        self.modes = {t: holder.mode_of(t) for t in targets}
        self.cleaners = {mode: holder.cleaner_for(mode) for mode in set(self.modes.values())}
        self.app = app

    def cleaner_for(self, index: str):
        return self.cleaners[self.modes[index]]

    def accepts_new_fields(self, index: str) -> bool:
        return _probe_for(self.app, self.modes[index]).accepts(index)

    async def prefetch(self, headers: dict) -> None:
        config = self.app[CONFIG]
        for mode in sorted(self.cleaners):
            await _probe_for(self.app, mode).prefetch(self.app[UPSTREAM], config.upstream_url,
                                                      sorted(t for t, m in self.modes.items() if m == mode),
                                                      headers, config.upstream_headers())


def _bulk_targets(app: web.Application, bulk: BulkBody) -> set[str]:
    patterns = app[PATTERNS]
    named = {item.index for item in bulk.rewrite_items() if item.verb in CLEANED_VERBS and isinstance(item.index, str)}
    return {index for index in named if patterns.matches(index)}


def _emerging_collector(app: web.Application, bulk: BulkBody):
    """``(on_document, texts)``: the rewrite's callback that keeps each observed item's text
    for the emerging hook (by line), and the dict it fills; (None, None) when the hook would
    skip this body anyway (its queue is full)."""
    emerging = app.get(EMERGING)
    if emerging is None or not emerging.has_room(len(bulk.body)):
        return None, None
    texts: dict[int, str | None] = {}

    def on_document(item, doc) -> None:
        texts[item.line] = emerging.text_of(doc)

    return on_document, texts


@dataclass
class _Forward:
    """What a proxied write sends on: ``output`` (sent with its size) or ``rewrite`` (a large
    bulk body rewritten round by round while it is sent, chunked), the path, and
    ``finish()``, run once the body is sent, which counts the rewrite's stats and returns the
    texts it kept for the emerging hook."""

    path: str
    output: BulkOutput | None = None
    rewrite: BulkRewrite | None = None
    finish: Callable[[], dict | None] = lambda: None

    def payload(self, app: web.Application):
        if self.rewrite is None:
            return _ForwardedBody(self.output)
        return _streamed(app, self.rewrite)


async def _streamed(app: web.Application, rewrite: BulkRewrite):
    """The rewrite's pieces, each round computed on the proxy's worker thread (an async
    iterable: aiohttp sends it chunked)."""
    pieces = rewrite.chunks()
    while True:
        piece = await _on_worker(app, next, pieces, None)
        if piece is None:
            return
        yield piece


def _counter(app: web.Application, kind: str, index: str | None, stats: ProxyStats) -> None:
    _count_proxy(app, stats)
    if stats.errors:
        log.warning("proxy kind=%s index=%s documents_forwarded_uncleaned=%d first_reason=%s", kind, index,
                    stats.errors, stats.error_reasons[0] if stats.error_reasons else "unknown")


async def _clean(app, kind, index, doc_id, body, bulk, path, headers) -> _Forward:
    """The cleaned body to forward (and its path: an over-ratio document may be routed)."""
    config = app[CONFIG]
    patterns = app[PATTERNS]
    targets = {index} if kind == "single" and patterns.matches(index) else set()
    if kind == "bulk":
        targets = await _run(app, _bulk_targets, app, bulk, size=len(body))
    cleaners = _RequestCleaners(app, targets)
    await cleaners.prefetch(headers)
    if kind == "bulk":
        on_document, texts = _emerging_collector(app, bulk)
        rewrite = BulkRewrite(body, None, patterns, index, config.route_index,
                              accepts_new_fields=cleaners.accepts_new_fields, bulk=bulk,
                              cleaner_for=cleaners.cleaner_for, on_document=on_document)

        def finish() -> dict | None:
            _counter(app, kind, index, rewrite.stats)
            return texts

        if len(body) > STREAM_BYTES:
            return _Forward(path, rewrite=rewrite, finish=finish)
        return _Forward(path, output=await _on_worker(app, rewrite.output), finish=finish)
    mode = app[CLEANER].mode_of(index)
    body, stats, over = await _on_worker(app, functools.partial(
        rewrite_single, body, app[CLEANER].cleaner_for(mode), index, patterns, doc_id,
        accepts_new_fields=_probe_for(app, mode).accepts))
    if over and config.route_index:
        path = _with_index(path, config.route_index.replace("{index}", index))
        stats.routed += 1
    elif over:
        stats.over_ratio_kept += 1
    _counter(app, kind, index, stats)
    return _Forward(path, output=BulkOutput(body))


async def _on_worker(app: web.Application, fn, *args):
    """``fn(*args)`` on the proxy's worker thread. One thread does the proxy's CPU work (it holds
    the GIL anyway): its allocations stay in one malloc arena instead of one per pool thread,
    which held freed rounds and doubled the peak memory of a large body."""
    return await asyncio.get_running_loop().run_in_executor(app[WORKER], fn, *args)


async def _run(app: web.Application, fn, *args, size: int):
    """``fn(*args)``, on the proxy's worker thread when the body is over :data:`POLICY_INLINE_BYTES`."""
    return fn(*args) if size <= POLICY_INLINE_BYTES else await _on_worker(app, fn, *args)


async def _check_access(app, request, segments, body, bulk, headers):
    """The access rules' :class:`Refusal` or None. A request the names already refuse is refused
    without asking the cluster; one they allow is checked again when a name it writes to is an
    alias or a data stream (asked with the credentials the write would be sent with)."""
    policy = app[POLICY]
    check = (policy.check, request.method, segments, request.query, request.headers.get("Content-Type"), body)
    refusal = await _run(app, *check, NOTHING_RESOLVED, bulk, size=len(body))
    names = [] if refusal is not None else policy.names_to_resolve(request.method, segments, body, bulk)
    if not names:
        return refusal
    auth = {k: v for k, v in headers.items() if k.lower() not in ("content-type", "content-length")}
    resolution = await resolve_targets(app[UPSTREAM], app[CONFIG].upstream_url, names, auth)
    if not (resolution.aliases or resolution.data_streams or resolution.failed):
        return None  # every name is a concrete index (or none yet): the names decided
    return await _run(app, *check, resolution, bulk, size=len(body))


class _ForwardedBody(payload.Payload):
    """The body to forward as an aiohttp payload of known size, written in pieces of about a
    mebibyte (:meth:`BulkOutput.chunks`): the transport never buffers a second copy of it."""

    def __init__(self, output: BulkOutput):
        # The client's Content-Type is forwarded; without one the type is aiohttp's default for
        # bytes, as when the body was sent as bytes.
        super().__init__(output, content_type="application/octet-stream")
        self._size = output.size

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        return self._value.joined().decode(encoding, errors)

    async def write(self, writer) -> None:
        for chunk in self._value.chunks():
            await writer.write(chunk)

    async def write_with_length(self, writer, content_length: int | None) -> None:
        await self.write(writer)


def _is_bulk_write(method: str, segments: list[str]) -> tuple[bool, str | None]:
    """``(whether the body is a bulk body, the path's index)``: a write whose path ends in ``_bulk``."""
    if method.upper() in READ_METHODS or not segments or segments[-1] != "_bulk":
        return False, None
    first = segments[0]
    return True, (first if len(segments) > 1 and (not first.startswith("_") or first == "_all") else None)


async def proxy(request: web.Request) -> web.StreamResponse:
    app = request.app
    config = app[CONFIG]
    segments = split_path(request.raw_path)
    if any(s in (".", "..") for s in segments):
        return error_response(400, "illegal_argument_exception",
                              "a path with a '.' or '..' segment is not relayed by the proxy")
    try:
        body = await read_body(request, app[RUNTIME].max_body_bytes)
    except BodyTooLarge as exc:
        app[METRICS]["proxy_requests"].labels(kind="too_large").inc()
        log.warning("proxy body_too_large method=%s path=%s limit=%d", request.method, request.path, exc.limit)
        return exc.response()
    except BodyUnreadable as exc:
        app[METRICS]["proxy_requests"].labels(kind="unreadable_body").inc()
        return unreadable_body(request, exc.payload_error)
    headers = _forward_headers(request, config)
    is_bulk, path_index = _is_bulk_write(request.method, segments)
    bulk = await _run(app, parse_bulk, body, path_index, size=len(body)) if is_bulk and body else None
    refusal = await _check_access(app, request, segments, body, bulk, headers)
    if refusal is not None:
        return _refused(app, request, refusal.rule, refusal.reason)
    kind, index, doc_id = _classify(request.method, segments)
    if kind == "bulk" and bulk is None:
        bulk = parse_bulk(body, index)  # an empty body
    path = request.raw_path
    app[METRICS]["proxy_requests"].labels(kind=kind).inc()
    cleaner = app[CLEANER].current
    first_index = index if kind == "single" else (index or (bulk.first_index() if bulk is not None else None))
    if cleaner is None and kind != "other" and config.require_template and app[PATTERNS].matches(first_index):
        # Better a retryable refusal than boilerplate indexed uncleaned.
        app[METRICS]["proxy_requests"].labels(kind="refused_no_template").inc()
        return error_response(503, "bloomspan_no_template", "no phrase set loaded yet; retry later")
    forward = _Forward(path, output=BulkOutput(body))
    if cleaner is not None and kind != "other" and body:
        forward = await _clean(app, kind, index, doc_id, body, bulk, path, headers)
    url = URL(config.upstream_url + forward.path, encoded=True)
    observe = kind != "other" and bool(body) and app.get(EMERGING) is not None and (
        not config.clean_indices or app[PATTERNS].matches(first_index))
    data = forward.payload(app) if body else None
    unfinished = [forward]
    del forward
    try:
        async with app[UPSTREAM].request(request.method, url, data=data, headers=headers,
                                         allow_redirects=False) as upstream:
            _finish(app, unfinished.pop(), bulk, kind, index, observe)
            # The body was sent: only the answer is held from here (a large bulk's answer is large too).
            del body, bulk, data
            payload_bytes = await upstream.read()
            out_headers = {k: v for k, v in upstream.headers.items() if k.lower() not in HOP_BY_HOP}
    finally:
        if unfinished:  # the cluster was not reached: the rewrite's counts still go to the metrics
            unfinished.pop().finish()
    return web.Response(status=upstream.status, body=payload_bytes, headers=out_headers)


def _finish(app: web.Application, forward: _Forward, bulk: BulkBody | None, kind: str, index: str | None,
            observe: bool) -> None:
    """Count the rewrite's stats and, when ``observe``, hand what was forwarded to the emerging
    hook (``bulk``: the request's items). After cleaning, so
    known boilerplate is gone and only new repeats can fill the filter; the hook only queues
    the items (or the single document) for its worker thread."""
    texts = forward.finish()
    emerging = app.get(EMERGING)
    if emerging is None or not observe:
        return
    fields = app[CONFIG].fields
    if kind == "bulk":
        emerging.observe_items(bulk, texts or {}, fields)
    elif forward.output is not None:
        emerging.observe_bulk(forward.output.joined(), fields, index)


# ---------------------------------------------------------------- background tasks

async def _upstream_ctx(app: web.Application):
    config = app[CONFIG]
    app[UPSTREAM] = ClientSession(timeout=ClientTimeout(total=config.upstream_timeout,
                                                        sock_connect=min(10.0, config.upstream_timeout)),
                                  connector=config.connector(), auto_decompress=True)
    if config.max_body_bytes is None:
        app[RUNTIME].max_body_bytes = await cluster_body_limit(app[UPSTREAM], config.upstream_url,
                                                               config.upstream_headers())
    yield
    await app[UPSTREAM].close()


async def _template_watcher(app: web.Application):
    config = app[CONFIG]
    holder = app[CLEANER]

    async def refresh_once():
        changed = await asyncio.to_thread(holder.refresh)
        if changed:
            app[METRICS]["reloads"].labels(status="ok").inc()
            app[METRICS]["template_phrases"].set(holder.n_phrases)
            emerging = app.get(EMERGING)
            if emerging is not None:
                emerging.set_known_phrases(holder.phrase_set)

    # A cluster that is down fails every reload the same way: one line when that starts, a
    # summary while it lasts, one when it ends (each failure is counted in the metrics).
    streak = FailureStreak(f"template reload alias={config.template_index or config.phrases_path}", log)

    async def attempt():
        try:
            await refresh_once()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            app[METRICS]["reloads"].labels(status="error").inc()
            streak.failed(exc)
        else:
            streak.succeeded()

    async def loop():
        while True:
            await asyncio.sleep(config.reload_seconds)
            await attempt()

    # The first phrase set is loaded before the server accepts requests, so no early request
    # is forwarded uncleaned merely because the loader had not finished.
    if config.template_index or config.phrases_path:
        await attempt()
        if streak.failing:
            log.warning("until a phrase set loads, writes for cleaned indices are %s",
                        "refused with 503 (--require-template)" if config.require_template else "forwarded uncleaned")
    task = asyncio.create_task(loop()) if (config.template_index or config.phrases_path) else None
    yield
    if task is not None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def _scheduler(app: web.Application):
    config = app[CONFIG]
    runs = app[RUNS]
    runs.bind_loop(asyncio.get_running_loop())

    async def loop():
        while True:
            await asyncio.sleep(config.every_seconds)
            if not runs.busy:
                runs.start_background(app, reason="schedule")

    task = asyncio.create_task(loop()) if config.every_seconds else None
    yield
    if task is not None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    await runs.wait_idle()


def _kernel_warmup(warm: Callable[[], int | None] | None):
    """A ``cleanup_ctx``: runs ``warm()`` (loads or compiles the kernels) in a thread; /readyz
    says not-ready until it ends and /metrics carries how long it took and, when ``warm``
    returns it, how many kernels it had to compile (0: every one came from the cache). A failed
    warm-up is logged and the service becomes ready anyway: the kernels then compile on first use."""

    async def ctx(app: web.Application):
        state = app[KERNELS]
        gauge = Gauge("bloomspan_kernel_warmup_seconds", "Seconds the start-up kernel warm-up took (load or compile)",
                      registry=app[REGISTRY])
        compiled_gauge = Gauge("bloomspan_kernel_warmup_compiled_kernels",
                               "Kernels the start-up warm-up compiled (0: all loaded from the cache)",
                               registry=app[REGISTRY])

        async def run() -> None:
            t0 = asyncio.get_running_loop().time()
            compiled = None
            try:
                compiled = await asyncio.to_thread(warm)
            except Exception as exc:  # noqa: BLE001 - never keeps the service unready
                log.warning("kernel warm-up failed (%s: %s): kernels compile on first use", type(exc).__name__, exc)
            state["seconds"] = asyncio.get_running_loop().time() - t0
            gauge.set(state["seconds"])
            if isinstance(compiled, int):
                compiled_gauge.set(compiled)
            state["ready"] = True
            log.info("kernels ready seconds=%.2f compiled=%s", state["seconds"], compiled if compiled is not None else "?")

        task = asyncio.create_task(run()) if warm is not None else None
        yield
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    return ctx


def create_app(config: ServeConfig, mine_fn: Callable[[Any], dict] | None = None,
               holder: CleanerHolder | None = None, warm: Callable[[], int | None] | None = None) -> web.Application:
    """The aiohttp application. ``mine_fn(config) -> summary dict`` runs one mining run
    (default: the sidecar's cluster mining run); tests may pass their own cleaner holder.
    ``warm()`` loads the kernels at start (``bloomspan serve`` passes the warm-up); until it
    returns /readyz answers 503."""
    registry = CollectorRegistry()
    metrics_by_name = _metrics(registry)
    on_upstream_failure = lambda status: metrics_by_name["upstream_errors"].labels(status=str(status)).inc()  # noqa: E731
    body_limit = config.max_body_bytes or DEFAULT_MAX_BODY_BYTES
    app = web.Application(client_max_size=body_limit, middlewares=[error_middleware(on_upstream_failure)])
    app[CONFIG] = config
    app[ADMIN_TOKEN] = config.admin_token or ""
    app[PATTERNS] = IndexPatterns(tuple(config.clean_indices))
    app[POLICY] = AccessPolicy(app[PATTERNS], config.template_index, config.lease_index,
                               sidecar_credentials=not config.forward_credentials)
    app[PROBE] = NewFieldsProbe(added_fields(tuple(config.fields), "mark" if config.mode == "shadow" else config.mode))
    app[PROBES] = {config.mode: app[PROBE]}
    app[RUNTIME] = ProxyRuntime(max_body_bytes=body_limit)
    app[REGISTRY] = registry
    app[METRICS] = metrics_by_name
    app[KERNELS] = {"ready": warm is None, "seconds": None}
    app[WORKER] = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bloomspan-proxy")

    async def stop_worker(app: web.Application) -> None:
        app[WORKER].shutdown(wait=False, cancel_futures=True)

    app.on_cleanup.append(stop_worker)
    app[CLEANER] = holder or CleanerHolder(config)

    if app[CLEANER].shadow_meter is None:  # per-site shadow totals in /metrics and GET /shadow
        app[CLEANER].shadow_meter = ShadowMeter(registry)
    app[RUNS] = RunRegistry(config, mine_fn, app[METRICS])
    if config.emerging_shingle:
        app[EMERGING] = EmergingHook(config, on_threshold=lambda: app[RUNS].start_from_thread(app, "emerging"),
                                     registry=registry)
        app.on_cleanup.append(app[EMERGING].on_cleanup)

    add_search_routes(app, client_for_request(config))

    add_report_route(app, config, app[CLEANER])
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/runs", list_runs)
    app.router.add_post("/runs", trigger_run)
    app.router.add_get("/emerging", emerging_view)
    app.router.add_get("/shadow", shadow_view)
    app.router.add_route("*", "/{tail:.*}", proxy)
    app.cleanup_ctx.append(_upstream_ctx)
    app.cleanup_ctx.append(_template_watcher)
    app.cleanup_ctx.append(_scheduler)
    app.cleanup_ctx.append(_kernel_warmup(warm))
    return app
