"""The ingest side of emerging-boilerplate detection in `bloomspan serve`.

:class:`EmergingHook` feeds the text of every document written through the proxy to an
:class:`~bloomspan.ingest.emerging.EmergingDetector` (a forgetful Bloom filter over k-token
shingles, fixed memory). Shingles that become *full* and are not covered by the phrase set
now serving are *emerging boilerplate*: listed by ``GET /emerging`` and counted in
``/metrics``; when ``emerging_threshold`` of them are tracked, ``on_threshold()`` is called
(the service starts a mining run), at most once per cooldown.

Input: the proxy hands over a bulk body's items as the rewrite read them
(:meth:`EmergingHook.observe_items`: the :class:`~.bulk_items.BulkBody` and the text of each
document the rewrite parsed, so a body is read once); :meth:`EmergingHook.observe_bulk` takes
a raw body: an NDJSON ``_bulk`` body (read with :func:`~.bulk_items.parse_bulk`: its ``index``
and ``create`` items are observed; ``update``/``delete`` items are skipped, and reading stops
at the first line that is not a bulk action, as the cluster would reject the rest) or a single
document (a body that is one JSON object and not a bulk action line). The configured text
fields (top-level string values; others are ignored) of a document are observed together,
joined by a blank line, as one document. With ``clean_indices`` configured, only items
bound for those patterns (or for an unknown index) are observed.

Off the request path: by default (``background=True``) :meth:`EmergingHook.observe_bulk` only
queues the body (O(1), safe to call on the event loop) and one daemon worker thread reads and
observes it; while the queue holds more than ``max_queue_bytes``, further bodies are skipped
and counted (``skipped_bodies``): detection is statistical, so overload delays it rather than
slowing the writes. ``flush()`` waits until the queue is empty, ``close()`` stops the worker.
With ``background=False`` the body is observed in the calling thread.

Thread-safe: the detector holds its own lock and the hook's counters another. When
``observe_bulk`` is called on a running event loop, ``on_threshold()`` is scheduled on that
loop (``call_soon_threadsafe``), so a callback that starts asyncio tasks works from the
worker thread; otherwise it runs on the thread that observed the document.
"""
from __future__ import annotations

import asyncio
import collections
import json
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

from bloomspan.ingest.companions.emerging import EmergingConfig, EmergingDetector, known_shingles
from bloomspan.sidecar.serve.bulk_items import parse_bulk
from bloomspan.sidecar.serve.bulk_proxy import IndexPatterns

log = logging.getLogger(__name__)

BULK_ACTIONS = ("index", "create", "update", "delete")
OBSERVED_ACTIONS = ("index", "create")


@dataclass
class HookCounters:
    """Monotonic counters of the hook itself (the detector keeps its own)."""

    requests: int = 0  # bodies handed to observe_bulk
    documents_observed: int = 0  # documents whose text reached the detector
    documents_without_text: int = 0  # index/create items with none of the fields as a string
    documents_other_index: int = 0  # items bound for an index that is not watched
    parse_errors: int = 0  # bodies or lines that could not be parsed (rest of body skipped)
    triggers: int = 0  # on_threshold calls
    trigger_errors: int = 0  # on_threshold calls that raised
    known_reloads: int = 0  # set_known_phrases calls
    skipped_bodies: int = 0  # bodies not observed: the background queue was full (or the hook closed)
    skipped_bytes: int = 0


def detector_config(config: Any):
    """The :class:`EmergingConfig` for a :class:`ServeConfig` (``emerging_shingle``,
    ``emerging_threshold``; optional ``emerging_filter_bits``, ``emerging_cooldown_seconds``)."""
    k = getattr(config, "emerging_shingle", None) or EmergingConfig.shingle_tokens
    threshold = getattr(config, "emerging_threshold", EmergingConfig.threshold)
    kwargs: dict[str, Any] = {"shingle_tokens": k, "threshold": threshold,
                              "max_tracked": max(EmergingConfig.max_tracked, threshold)}
    for attr, name in (("emerging_filter_bits", "filter_bits"), ("emerging_cooldown_seconds", "cooldown_seconds")):
        value = getattr(config, attr, None)
        if value is not None:
            kwargs[name] = value
    return EmergingConfig(**kwargs)


class EmergingHook:
    """Emerging-boilerplate watcher of the proxy's write traffic (module docstring).

    ``config``: the :class:`~bloomspan.sidecar.serve.state.ServeConfig` (``fields``,
    ``clean_indices``, ``emerging_*``); ``on_threshold()``: called with no argument when the
    tracked emerging shingles reach the threshold (the shingles are in :meth:`emerging`);
    ``registry``: a prometheus ``CollectorRegistry`` to expose the counters in (or call
    :meth:`register` later); ``emerging_config`` overrides the detector settings.
    """

    def __init__(self, config: Any, on_threshold: Callable[[], None] | None = None, *, registry=None,
                 emerging_config=None, clock: Callable[[], float] | None = None, background: bool = True,
                 max_queue_bytes: int = 64 * 2**20):
        self.config = config
        self.emerging_config = emerging_config or detector_config(config)
        self.fields: tuple[str, ...] = tuple(getattr(config, "fields", ("text",)))
        patterns = tuple(getattr(config, "clean_indices", ()) or ())
        self._patterns = IndexPatterns(patterns) if patterns else None
        self.on_threshold = on_threshold
        kwargs = {"clock": clock} if clock is not None else {}
        self.detector = EmergingDetector(self.emerging_config, on_threshold=self._fire, **kwargs)
        self.counters = HookCounters()
        self._lock = threading.Lock()
        self.known_phrases = 0
        self.background = background
        self.max_queue_bytes = max_queue_bytes
        self._queue: collections.deque = collections.deque()
        self._queued_bytes = 0
        self._busy = False
        self._cond = threading.Condition()
        self._worker: threading.Thread | None = None
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        if registry is not None:
            self.register(registry)

    # -- input ------------------------------------------------------------------------
    def observe_bulk(self, body: bytes | str, fields: Iterable[str] | None = None, index: str | None = None) -> int:
        """Observe the documents of a ``_bulk`` body or a single-document body.

        ``fields``: text fields (default: the config's); ``index``: the index named in the URL
        (the default for items without ``_index``). Returns how many documents were observed
        (0 when queued for the background worker). Never raises for a malformed body: the
        unparsable rest is skipped and counted.
        """
        fields = tuple(fields) if fields is not None else self.fields
        if isinstance(body, str):
            body = body.encode("utf-8", "surrogatepass")
        return self._submit((self._observe_now, body, fields, index), len(body))

    def observe_items(self, bulk, texts: dict[int, str | None], fields: Iterable[str] | None = None) -> int:
        """Observe the index/create items of a bulk body the proxy has read already: ``bulk``
        is its :class:`~.bulk_items.BulkBody`, ``texts`` the text (:meth:`text_of`) of each
        document the rewrite parsed, by the line of its action; the sources of the other
        items are read here. Returns what :meth:`observe_bulk` returns."""
        fields = tuple(fields) if fields is not None else self.fields
        size = len(bulk.body) + sum(len(t) for t in texts.values() if t)
        return self._submit((self._observe_items_now, bulk, texts, fields), size)

    def has_room(self, size: int) -> bool:
        """Whether a body of ``size`` bytes would be queued now (not skipped)."""
        return not self.background or not (self._closed or (self._queued_bytes + size > self.max_queue_bytes
                                                            and self._queue))

    def text_of(self, doc: Any, fields: Iterable[str] | None = None) -> str | None:
        """The text the detector observes of ``doc``: its configured string fields joined by a
        blank line; None when it has none."""
        fields = tuple(fields) if fields is not None else self.fields
        texts = [doc[f] for f in fields if isinstance(doc, dict) and isinstance(doc.get(f), str) and doc[f]]
        return "\n\n".join(texts) if texts else None

    def _submit(self, job: tuple, size: int) -> int:
        with self._lock:
            self.counters.requests += 1
        if self._loop is None:
            try:
                self._loop = asyncio.get_running_loop()
            except RuntimeError:
                pass
        if not self.background:
            return job[0](*job[1:])
        with self._cond:
            if self._closed or (self._queued_bytes + size > self.max_queue_bytes and self._queue):
                with self._lock:
                    self.counters.skipped_bodies += 1
                    self.counters.skipped_bytes += size
                return 0
            self._queue.append((job, size))
            self._queued_bytes += size
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="bloomspan-emerging", daemon=True)
                self._worker.start()
            self._cond.notify_all()
        return 0

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued body is observed; False if ``timeout`` seconds passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and not self._busy, timeout)

    def close(self, timeout: float | None = 30.0) -> None:
        """Observe what is queued, then stop the worker thread."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._worker is not None:
            self._worker.join(timeout)

    async def on_cleanup(self, app=None) -> None:
        """aiohttp ``on_cleanup`` handler: drain and stop the worker without blocking the loop."""
        await asyncio.to_thread(self.close)

    def _work(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._queue or self._closed)
                if not self._queue:
                    return  # closed and drained
                job, size = self._queue.popleft()
                self._queued_bytes -= size
                self._busy = True
            try:
                job[0](*job[1:])
            except Exception:  # a bug must not kill the worker
                log.exception("emerging: observing a body failed")
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _observe_now(self, body: bytes, fields: tuple[str, ...], index: str | None) -> int:
        try:
            whole = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            whole = None  # NDJSON with several lines (or garbage): read as a bulk body
        else:
            if not _is_action(whole):
                if isinstance(whole, dict):
                    if not self._watched(index):
                        self._count("documents_other_index")
                        return 0
                    return self.observe_document(whole, fields)
                self._count("parse_errors")
                return 0
        return self._observe_items_now(parse_bulk(body, index), {}, fields)

    def _observe_items_now(self, bulk, texts: dict[int, str | None], fields: tuple[str, ...]) -> int:
        observed = 0
        for item in self._watched_items(bulk):
            if item.line in texts:
                observed += self._observe_text(texts[item.line])
            else:
                doc = self._source(bulk, item)
                if doc is not None:
                    observed += self.observe_document(doc, fields)
        return observed

    def observe_document(self, doc: Any, fields: Iterable[str] | None = None) -> int:
        """Observe one document (a dict); returns 1 if it had text in a configured field, else 0."""
        return self._observe_text(self.text_of(doc, fields))

    def _observe_text(self, text: str | None) -> int:
        if not text:
            self._count("documents_without_text")
            return 0
        self.detector.observe(text)
        self._count("documents_observed")
        return 1

    def _watched_items(self, bulk) -> Iterator:
        """The index/create items with a source bound for a watched index (or an unknown one)."""
        for item in bulk.rewrite_items():
            if item.verb not in OBSERVED_ACTIONS or item.source_span is None:
                continue
            if not self._watched(item.index):
                self._count("documents_other_index")
                continue
            yield item
        if bulk.stop_reason is not None:
            self._count("parse_errors")

    def _watched(self, target: Any) -> bool:
        """Whether documents bound for ``target`` are observed: every one without clean-index
        patterns, else those matching them or with no known target."""
        if self._patterns is None or target is None:
            return True
        return isinstance(target, str) and self._patterns.matches(target)

    def _source(self, bulk, item) -> Any:
        try:
            return json.loads(bulk.body[item.source_span[0]:item.source_span[1]])
        except (ValueError, UnicodeDecodeError):
            self._count("parse_errors")  # the cluster reports this item; keep reading
            return None

    # -- phrase set -------------------------------------------------------------------
    def set_known_phrases(self, phrase_set: Iterable[Any] | None) -> int:
        """Shingles covered by ``phrase_set`` (records with ``.tokens``, token lists or texts;
        None: nothing) stop being emerging. Returns how many tracked shingles were dropped."""
        phrases = list(phrase_set) if phrase_set is not None else []
        known = known_shingles(phrases, self.emerging_config.shingle_tokens)
        dropped = self.detector.set_known(known)
        with self._lock:
            self.counters.known_reloads += 1
            self.known_phrases = len(phrases)
        log.info("emerging: %d known phrases (%d shingles); %d tracked shingles now covered",
                 len(phrases), len(known), dropped)
        return dropped

    def acknowledge(self) -> None:
        """Forget the tracked shingles (e.g. after a re-mining run that did not cover them)."""
        self.detector.acknowledge()

    # -- output -----------------------------------------------------------------------
    def emerging(self) -> list[dict]:
        """Tracked emerging shingles, oldest first, JSON-ready (hash as 16 hex digits)."""
        return [{"hash": f"{e.hash:016x}", "text": " ".join(e.tokens), "tokens": list(e.tokens), "example": e.example,
                 "first_document": e.first_document, "hits": e.hits} for e in self.detector.emerging()]

    def metrics(self) -> dict[str, float]:
        """Detector counters and gauges plus the hook's counters (``hook_*``)."""
        out = self.detector.metrics()
        with self._lock:
            out.update({f"hook_{k}": v for k, v in asdict(self.counters).items()})
            out["known_phrases"] = self.known_phrases
        out["queued_bytes"] = self._queued_bytes
        out["threshold"] = self.emerging_config.threshold
        return out

    def register(self, registry) -> EmergingCollector:
        """Expose :meth:`metrics` in a prometheus ``CollectorRegistry``; returns the collector."""
        collector = EmergingCollector(self)
        registry.register(collector)
        return collector

    # -- internals --------------------------------------------------------------------
    def _fire(self, shingles: list) -> None:
        with self._lock:
            self.counters.triggers += 1
        log.warning("emerging boilerplate: %d shingles not covered by the phrase set (first: %r); triggering a run",
                    len(shingles), shingles[0].example[:80] if shingles else "")
        if self.on_threshold is None:
            return
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                if loop is not asyncio.get_running_loop():
                    raise RuntimeError
            except RuntimeError:  # another thread (the worker): run the callback on the loop
                try:
                    loop.call_soon_threadsafe(self._call_on_threshold)
                    return
                except RuntimeError:  # the loop closed meanwhile
                    pass
        self._call_on_threshold()

    def _call_on_threshold(self) -> None:
        try:
            self.on_threshold()
        except Exception:  # the write path must not fail because of the trigger
            with self._lock:
                self.counters.trigger_errors += 1
            log.exception("emerging-boilerplate trigger failed")

    def _count(self, name: str) -> None:
        with self._lock:
            setattr(self.counters, name, getattr(self.counters, name) + 1)


def _is_action(obj: Any) -> bool:
    if not isinstance(obj, dict) or len(obj) != 1:
        return False
    ((verb, meta),) = obj.items()
    return verb in BULK_ACTIONS and isinstance(meta, dict)


# Prometheus names: counters get ``_total`` appended by the exposition format.
_COUNTERS = {
    "documents": ("bloomspan_emerging_documents", "Documents the emerging-boilerplate detector has seen"),
    "shingles": ("bloomspan_emerging_shingle_puts", "Shingles put into the forgetful Bloom filter"),
    "full_hits": ("bloomspan_emerging_full_hits", "Shingle puts after which the shingle was full (frequent)"),
    "known_hits": ("bloomspan_emerging_known_hits", "Full shingles already covered by the phrase set"),
    "emerging_reported": ("bloomspan_emerging_reported", "Distinct emerging shingles reported"),
    "emerging_untracked": ("bloomspan_emerging_untracked", "Emerging shingles not kept (max_tracked reached)"),
    "hook_triggers": ("bloomspan_emerging_triggers", "Re-mining triggers fired by emerging boilerplate"),
    "hook_trigger_errors": ("bloomspan_emerging_trigger_errors", "Triggers whose callback raised"),
    "hook_parse_errors": ("bloomspan_emerging_parse_errors", "Bodies or lines the hook could not parse"),
    "hook_documents_without_text": ("bloomspan_emerging_documents_without_text", "Written documents without text in the fields"),
    "hook_skipped_bodies": ("bloomspan_emerging_skipped_bodies", "Bodies not observed because the hook's queue was full"),
}
_GAUGES = {
    "emerging_tracked": ("bloomspan_emerging_tracked", "Emerging shingles tracked now"),
    "filter_fill_ratio": ("bloomspan_emerging_filter_fill_ratio", "Fill ratio of the forgetful Bloom filter"),
    "filter_bytes": ("bloomspan_emerging_filter_bytes", "Memory of the forgetful Bloom filter in bytes"),
    "threshold": ("bloomspan_emerging_threshold", "Tracked emerging shingles that trigger a run"),
    "queued_bytes": ("bloomspan_emerging_queued_bytes", "Bytes of bodies waiting for the hook's worker"),
}


class EmergingCollector:
    """A prometheus collector reading :meth:`EmergingHook.metrics` at scrape time."""

    def __init__(self, hook: EmergingHook):
        self.hook = hook

    def describe(self):
        return []  # metrics are created at collect time; nothing to check at registration

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        values = self.hook.metrics()
        for key, (name, doc) in _COUNTERS.items():
            yield CounterMetricFamily(name, doc, value=float(values.get(key, 0)))
        for key, (name, doc) in _GAUGES.items():
            yield GaugeMetricFamily(name, doc, value=float(values.get(key, 0)))
