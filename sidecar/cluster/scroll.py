"""Read one field of every document of a live index: point in time + ``search_after``, sliced.

Units of work
-------------
The source (an index, alias or pattern) resolves to concrete indices; each shard of each
concrete index is one :class:`ScanUnit`, read with ``slice: {id: shard, max: n_shards}``.
With ``max == number_of_shards`` OpenSearch maps slice ``i`` to exactly shard ``i`` and
applies no per-document slice filter (a filter on ``_id`` hashes would be rebuilt for every
``search_after`` page). Up to ``workers`` units are read at once, in threads.

Why our own PIT loop and not ``helpers.scan``
---------------------------------------------
``helpers.scan`` drives the scroll API: a server-side cursor that advances on every call
and cannot be restarted at a saved position, so a killed run could only start over. Inside
one shard, ``_seq_no`` is unique per live document and is a doc-values field, so sorting a
shard's slice on ``_seq_no`` gives a position — the last ``_seq_no`` read — that survives
the point in time: a restarted run continues with ``search_after: [last]`` in the same PIT
if it is still open, or in a new one. (``_shard_doc`` does not exist in OpenSearch 2.x
and ``_doc`` values are only meaningful inside one PIT; Elasticsearch, which adds ``_shard_doc``
as a tiebreaker to a PIT search, takes the one-value ``search_after`` as well.) Where PIT is unavailable
(OpenSearch < 2.4, Elasticsearch < 7.10, or ``mode="scroll"``) the scroll fallback *does* use ``helpers.scan``,
one sliced scroll per unit; a restart then re-reads unfinished units from their start and
the duplicates are dropped when the corpus is assembled (the last record of a key wins).

Documents whose field is missing, empty or not text are reported with a status code
(:mod:`bloomspan.sidecar.run.checkpoint`), never raised. Every PIT and scroll is released in ``finally``.
"""
from __future__ import annotations

import hashlib
import json
import logging
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bloomspan.sidecar.errors import ScanError, SourceIndexError

from .document_status import EMPTY, LISTED, MISSING, NOT_TEXT, STORED
from .engine import engine_of
from .field_paths import MISSING as ABSENT, lookup_field

log = logging.getLogger(__name__)

MODES = ("auto", "pit", "scroll")


@dataclass(frozen=True)
class ScanUnit:
    """One shard of one concrete index."""

    index: str
    shard: int
    n_shards: int

    @property
    def name(self) -> str:
        return f"{self.index}/{self.shard}"

    def slice(self) -> dict | None:
        return {"id": self.shard, "max": self.n_shards} if self.n_shards > 1 else None


@dataclass
class Page:
    """Documents of one search page of one unit, parsed.

    keys:   document keys (``_id``, or ``<index>:<_id>`` when the source spans indices)
    texts:  the text for status STORED, else None
    meta:   int64 (n, 5): seq_no, primary_term, ts_hash, status, store_doc (-1 here)
    after:  position after this page (last ``_seq_no``), None in scroll mode
    done:   the unit has no more documents
    """

    unit: str
    keys: list[str]
    texts: list[str | None]
    meta: np.ndarray
    after: int | None
    done: bool


# ---------------------------------------------------------------------- documents
def extract_text(source: dict | None, path: str) -> tuple[int, str | None]:
    """``(status, text)`` of field ``path`` of a ``_source``.

    A list of strings (a multi-valued text field) is joined with newlines, which separate
    tokens, so no token spans two values; character offsets then refer to the joined text.
    """
    value = lookup_field(source, path)
    if value is ABSENT or value is None:
        return MISSING, None
    if isinstance(value, list):
        if not value:
            return EMPTY, None
        if not all(isinstance(v, str) for v in value):
            return NOT_TEXT, None
        value = "\n".join(value)
    if not isinstance(value, str):
        return NOT_TEXT, None
    if not value.strip():
        return EMPTY, None
    return STORED, value


def ts_fingerprint(value: Any) -> int:
    """Nonzero int64 fingerprint of a timestamp docvalue (0 = no timestamp)."""
    if value is None or value == []:
        return 0
    digest = hashlib.blake2b(json.dumps(value, sort_keys=True).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True) or 1


def doc_key(index: str, doc_id: str, multi_index: bool) -> str:
    """Key of a document: its ``_id``, prefixed by ``<index>:`` when the source spans indices
    (index names cannot contain ``:``, so :func:`split_key` is unambiguous)."""
    return f"{index}:{doc_id}" if multi_index else doc_id


def split_key(key: str, indices: list[str]) -> tuple[str, str]:
    """``(index, _id)`` of a key made by :func:`doc_key` for a source of ``indices``."""
    if len(indices) == 1:
        return indices[0], key
    index, _, doc_id = key.partition(":")
    return index, doc_id


def parse_hits(hits: list[dict], field: str | None, ts_field: str | None, multi_index: bool
               ) -> tuple[list[str], list[str | None], np.ndarray]:
    """Keys, texts and meta rows (see :class:`Page`) of search hits.

    With ``field=None`` (an incremental listing) no text is read and the status is LISTED.
    """
    n = len(hits)
    keys: list[str] = []
    texts: list[str | None] = []
    meta = np.empty((n, 5), dtype=np.int64)
    for i, h in enumerate(hits):
        keys.append(doc_key(h["_index"], h["_id"], multi_index))
        if field is None:
            status, text = LISTED, None
        else:
            status, text = extract_text(h.get("_source"), field)
        texts.append(text)
        ts = ts_fingerprint((h.get("fields") or {}).get(ts_field)) if ts_field else 0
        meta[i] = (h.get("_seq_no", -1), h.get("_primary_term", 0), ts, status, -1)
    return keys, texts, meta


# ---------------------------------------------------------------------- source shape
def resolve_units(client, index: str) -> tuple[list[str], list[ScanUnit]]:
    """Concrete indices (sorted) behind ``index`` and one unit per shard."""
    from opensearchpy.exceptions import NotFoundError

    try:
        settings = client.indices.get_settings(index=index, name="index.number_of_shards",
                                               expand_wildcards="open")
    except NotFoundError:
        raise SourceIndexError(f"source index {index!r} does not exist; check --index", index=index,
                               field="index") from None
    indices = sorted(settings)
    if not indices:
        raise SourceIndexError(f"source {index!r} matches no open index; check --index", index=index,
                               field="index")
    units = []
    for name in indices:
        n_shards = int(settings[name]["settings"]["index"]["number_of_shards"])
        units.extend(ScanUnit(name, s, n_shards) for s in range(n_shards))
    return indices, units


def pit_supported(client, index: str, keep_alive: str) -> bool:
    """True if the cluster creates a point in time (a test one, deleted at once)."""
    from opensearchpy.exceptions import NotFoundError, RequestError, TransportError

    engine = engine_of(client)
    if not engine.has_pit:
        log.info("point in time unavailable on %s; using the scroll fallback", engine.name)
        return False
    try:
        pit = open_pit(client, index, keep_alive)
    except (RequestError, NotFoundError) as exc:
        log.info("point in time unavailable (%s); using the scroll fallback", exc.error)
        return False
    except TransportError as exc:
        if exc.status_code in (400, 404, 405, 501):
            log.info("point in time unavailable (status %s); using the scroll fallback", exc.status_code)
            return False
        raise
    delete_pits(client, [pit])
    return True


def open_pit(client, index: str, keep_alive: str) -> str:
    """A new point in time on ``index``; returns its id. The client's ``create_pit`` speaks the
    engine's own API (:class:`~.engine.EngineAwareClient`), and wrappers of it (a client that
    fails on purpose, one that counts) see every call."""
    return client.create_pit(index=index, keep_alive=keep_alive)["pit_id"]


def delete_pits(client, pit_ids) -> None:
    """Close the points in time ``pit_ids`` (None entries skipped); a failure is logged, not raised."""
    ids = [p for p in pit_ids if p]
    if not ids:
        return
    try:
        client.delete_pit(body={"pit_id": ids})
    except Exception as exc:  # expired already, or the node is gone: it expires by itself
        log.debug("deleting %d point(s) in time failed: %s", len(ids), exc)


# ---------------------------------------------------------------------- the reader
@dataclass
class SourceScan:
    """Read ``units`` in parallel threads and yield :class:`Page` objects to one consumer.

    positions: unit name -> last ``_seq_no`` read (PIT mode), from a checkpoint.
    done:      unit names already finished.
    pit_ids:   concrete index -> a PIT id from a checkpoint (tried, replaced if expired);
               :attr:`pit_ids` holds the ids in use, to be saved in the next checkpoint.
    field:     source field to read; None lists keys and versions only.
    outage_seconds: how long a unit whose page fails for a reason the cluster recovers from
               (connection refused or reset, a timeout, 429/5xx, failed shards, a point in
               time the cluster no longer knows: a node restart loses them all) waits for
               it, trying again with backoff; PIT mode then goes on from the unit's last
               ``_seq_no`` in a new point in time, scroll mode reads the unit again from its
               start (the duplicates are dropped at assembly). 0: the first failure ends
               the scan (the run resumes from its checkpoint when started again).
    """

    client: Any
    units: list[ScanUnit]
    field: str | None
    multi_index: bool
    ts_field: str | None = None
    batch_size: int = 1000
    workers: int = 4
    keep_alive: str = "10m"
    mode: str = "pit"
    positions: dict = field(default_factory=dict)
    done: set = field(default_factory=set)
    pit_ids: dict = field(default_factory=dict)
    outage_seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.mode not in ("pit", "scroll"):
            raise ValueError(f"mode={self.mode!r}: SourceScan takes 'pit' or 'scroll' (resolve 'auto' first)")
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._queue: queue.Queue = queue.Queue(maxsize=max(2, 2 * self.workers))

    # -- PIT handling
    def _open_pits(self) -> None:
        from opensearchpy.exceptions import NotFoundError, RequestError

        wanted = sorted({u.index for u in self.units if u.name not in self.done})
        for index in wanted:
            pit = self.pit_ids.get(index)
            if pit:
                try:  # still open? (it survives a kill -9 until its keep-alive ends)
                    self.client.search(body={"size": 0, "pit": {"id": pit, "keep_alive": self.keep_alive},
                                             "track_total_hits": False})
                    log.info("reusing point in time of %s", index)
                    continue
                except (NotFoundError, RequestError):
                    log.info("point in time of %s expired; opening a new one (continuing from the saved "
                             "_seq_no positions)", index)
            self.pit_ids[index] = open_pit(self.client, index, self.keep_alive)

    def _body(self, unit: ScanUnit) -> dict:
        body: dict = {"size": self.batch_size, "seq_no_primary_term": True, "track_total_hits": False,
                      "_source": [self.field] if self.field else False}
        if self.ts_field:
            body["docvalue_fields"] = [self.ts_field]
        sl = unit.slice()
        if sl:
            body["slice"] = sl
        return body

    def _read_pit(self, unit: ScanUnit) -> Iterator[Page]:
        after = self.positions.get(unit.name)
        while not self._stop.is_set():
            body = self._body(unit)
            # unmapped_type: an index that never held a document has no mapping at all, and
            # sorting on _seq_no there fails with "No mapping found for [_seq_no]".
            body["sort"] = [{"_seq_no": {"order": "asc", "unmapped_type": "long"}}]
            with self._lock:
                pit = self.pit_ids[unit.index]
            body["pit"] = {"id": pit, "keep_alive": self.keep_alive}
            if after is not None:
                body["search_after"] = [after]
            resp = self._search_through_outages(unit, body)
            if resp.get("pit_id") and resp["pit_id"] != pit:
                with self._lock:
                    self.pit_ids[unit.index] = resp["pit_id"]
            hits = resp["hits"]["hits"]
            if hits:
                after = int(hits[-1]["sort"][0])
            keys, texts, meta = parse_hits(hits, self.field, self.ts_field, self.multi_index)
            done = len(hits) < self.batch_size
            yield Page(unit.name, keys, texts, meta, after, done)
            if done:
                return

    def _search_through_outages(self, unit: ScanUnit, body: dict) -> dict:
        """One PIT page of ``unit`` (``body`` holds its PIT and position); across an outage
        (see ``outage_seconds``) the page is asked again, in a new point in time once the
        cluster answers."""
        outage = None
        while True:
            try:
                resp = self.client.search(body=body)
                _check_shards(resp, unit)
            except Exception as exc:
                if not recoverable(exc):
                    raise
                outage = self._wait_out(unit, exc, outage)
                pit = self._replace_pit(unit.index, body["pit"]["id"])
                if pit is None:
                    continue
                body["pit"]["id"] = pit
                continue
            if outage is not None:
                log.info("scan: %s read again after %.0f s (cluster back)", unit.name, time.monotonic() - outage)
            return resp

    def _wait_out(self, unit: ScanUnit, exc: BaseException, outage: float | None) -> float:
        """Sleep before the next try of ``unit``; the outage's start. Raises ``exc`` once the
        outage has lasted ``outage_seconds``."""
        now = time.monotonic()
        if outage is None:
            if self.outage_seconds <= 0:
                raise exc
            log.warning("scan: reading %s failed (%s); waiting up to %.0f s for the cluster", unit.name,
                        _short(exc), self.outage_seconds)
            outage = now
        elif now - outage >= self.outage_seconds:
            raise ScanError(f"reading {unit.name} failed and the cluster did not recover within "
                            f"{self.outage_seconds:.0f} s ({_short(exc)}); run the same command again to resume "
                            "from the checkpoint", index=unit.index, item=unit.name) from exc
        if self._stop.wait(min(5.0, 0.5 * 2 ** min(4, int(now - outage) // 5))):
            raise exc  # the scan is closing
        return outage

    def _replace_pit(self, index: str, failed: str) -> str | None:
        """A new point in time on ``index`` in place of ``failed`` (shared with the other
        units of the index: only the first to ask opens one); None while the cluster
        cannot open it yet."""
        with self._lock:
            current = self.pit_ids.get(index)
            if current != failed:
                return current
            try:
                pit = open_pit(self.client, index, self.keep_alive)
            except Exception as exc:
                if recoverable(exc):
                    return None
                raise
            self.pit_ids[index] = pit
        delete_pits(self.client, [failed])  # gone with a restart; released if it still lives
        log.info("scan: new point in time on %s (continuing from the saved _seq_no positions)", index)
        return pit

    def _read_scroll(self, unit: ScanUnit) -> Iterator[Page]:
        outage = None
        while True:
            try:
                yield from self._read_scroll_once(unit)
                return
            except Exception as exc:
                if not recoverable(exc):
                    raise
                outage = self._wait_out(unit, exc, outage)
                log.info("scan: reading %s again from its start (its scroll is lost)", unit.name)

    def _read_scroll_once(self, unit: ScanUnit) -> Iterator[Page]:
        from opensearchpy import helpers

        body = self._body(unit)
        body.pop("size")
        body.pop("track_total_hits")  # not allowed in a scroll context
        hits_iter = helpers.scan(self.client, query=body, index=unit.index, scroll=self.keep_alive,
                                 size=self.batch_size, preserve_order=False, clear_scroll=True,
                                 raise_on_error=True)
        try:
            batch: list[dict] = []
            for hit in hits_iter:
                batch.append(hit)
                if len(batch) >= self.batch_size:
                    keys, texts, meta = parse_hits(batch, self.field, self.ts_field, self.multi_index)
                    yield Page(unit.name, keys, texts, meta, None, False)
                    batch = []
                if self._stop.is_set():
                    return
            keys, texts, meta = parse_hits(batch, self.field, self.ts_field, self.multi_index)
            yield Page(unit.name, keys, texts, meta, None, True)
        finally:
            hits_iter.close()  # helpers.scan clears its scroll in its own finally

    # -- threads
    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def _worker(self, pending: list[ScanUnit]) -> None:
        unit = None
        try:
            while not self._stop.is_set():
                with self._lock:
                    if not pending:
                        break
                    unit = pending.pop(0)
                reader = self._read_pit if self.mode == "pit" else self._read_scroll
                for page in reader(unit):
                    if not self._put(page):
                        return
        except BaseException as exc:  # handed to the consumer, which raises it
            self._put(_Failure(exc, unit))
        finally:
            self._put(_WORKER_DONE)

    def pages(self) -> Iterator[Page]:
        """Pages of all unfinished units, in arrival order. Close the scan when done."""
        pending = [u for u in self.units if u.name not in self.done]
        if not pending:
            return
        if self.mode == "pit":
            self._open_pits()
        n = max(1, min(self.workers, len(pending)))
        self._threads = [threading.Thread(target=self._worker, args=(pending,), name=f"bloomspan-scan-{i}",
                                          daemon=True) for i in range(n)]
        for t in self._threads:
            t.start()
        alive = n
        while alive:
            item = self._queue.get()
            if item is _WORKER_DONE:
                alive -= 1
            elif isinstance(item, _Failure):
                exc, unit = item.exc, item.unit
                if isinstance(exc, ScanError):
                    raise exc
                where = unit.name if unit else "?"
                raise ScanError(f"reading {where} failed: {type(exc).__name__}: {exc}",
                                index=unit.index if unit else None, item=where) from exc
            else:
                yield item

    def close(self) -> None:
        """Stop the threads and release every point in time (also after an error)."""
        self._stop.set()
        for t in self._threads:
            while t.is_alive():
                try:
                    self._queue.get(timeout=0.1)
                except queue.Empty:
                    pass
                t.join(timeout=0.1)
        self._threads = []
        if self.mode == "pit":
            delete_pits(self.client, list(self.pit_ids.values()))
            self.pit_ids = {}

    def __enter__(self) -> SourceScan:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Failure:
    def __init__(self, exc: BaseException, unit: ScanUnit | None):
        self.exc = exc
        self.unit = unit


_WORKER_DONE = object()


# Statuses a cluster answers while it restarts or sheds load; 404: the point in time or
# scroll context it lost.
_RECOVERABLE_STATUSES = frozenset((404, 429, 500, 502, 503, 504))


def recoverable(exc: BaseException) -> bool:
    """Whether a failed page may succeed once the cluster is back (``SourceScan.outage_seconds``)."""
    from opensearchpy.exceptions import ConnectionError as ClientConnectionError, TransportError

    if isinstance(exc, (ClientConnectionError, ConnectionError, TimeoutError)):
        return True
    if isinstance(exc, ScanError):  # failed shards: recovering after a restart, or lost contexts
        return True
    return (isinstance(exc, TransportError) and exc.status_code in _RECOVERABLE_STATUSES
            and exc.error != "index_not_found_exception")  # a deleted source does not come back


def _short(exc: BaseException) -> str:
    """``exc`` in a few words for a log line (the client's messages repeat their cause)."""
    status = getattr(exc, "status_code", None)
    text = getattr(exc, "error", None) or str(exc)
    text = str(text).split(" caused by:")[0]
    return f"{type(exc).__name__}{f' {status}' if isinstance(status, int) else ''}: {text[:160]}"


def _check_shards(resp: dict, unit: ScanUnit) -> None:
    shards = resp.get("_shards") or {}
    if shards.get("failed"):
        reasons = [f.get("reason", {}).get("reason", "?") for f in shards.get("failures", [])][:3]
        raise ScanError(f"{unit.name}: {shards['failed']} shard(s) failed: {reasons}", index=unit.index,
                        item=unit.name)


def fetch_by_ids(client, index: str, ids: list[str], field: str, ts_field: str | None, multi_index: bool,
                 also_source: tuple[str, ...] = ()) -> tuple[list[str], list[str | None], np.ndarray]:
    """Current text and versions of documents ``ids`` of one concrete index (an ``ids`` query,
    so custom routing needs no routing value); absent documents are left out. ``also_source``:
    more source fields the response should carry (a caller's client wrapper reads them)."""
    body: dict = {"size": len(ids), "query": {"ids": {"values": ids}}, "seq_no_primary_term": True,
                  "_source": [field, *(f for f in also_source if f != field)], "track_total_hits": False}
    if ts_field:
        body["docvalue_fields"] = [ts_field]
    resp = client.search(index=index, body=body)
    _check_shards(resp, ScanUnit(index, -1, 0))
    return parse_hits(resp["hits"]["hits"], field, ts_field, multi_index)
