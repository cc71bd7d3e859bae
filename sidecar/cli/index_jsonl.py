"""``bloomspan index``: load a JSON Lines file into an index, one document per line.

* The index is created when it does not exist, with the project's document mappings
  (``mappings/documents.json``: the ``bloomspan.*`` fields, so ``mine --annotate`` and the
  README's ``rank_feature`` queries work on it); the other fields are mapped by the cluster
  (dynamic mappings, or an index template the user installed). An index (or alias) that
  exists already is written into as it is: its mappings are the user's.
* Each line is sent as it is in the file (its bytes, not a re-serialisation), so number
  literals, key order and escapes reach the cluster as written; the cluster decides what it
  accepts. ``_id`` is the ``id_field`` value (a string or an integer) when given, else the
  cluster assigns one.
* A line that cannot be sent (not UTF-8, not JSON, nested too deeply, not an object, no
  usable id) and an item the cluster rejects are per-line errors ``(line, reason)``, 1-based;
  the other lines are still indexed. Blank lines are skipped. The file may be gzip or
  Zstandard compressed (:mod:`bloomspan.sidecar.inputs`); one damaged part way has every line
  before the damage indexed, then the load stops with an error naming the line.
* Items the cluster rejects with 429 (queue full) are sent again, with backoff; a request
  that fails as a whole (node unreachable, 502/503/504) is sent again too, and after
  ``RETRIES`` tries the load stops with :class:`IndexLoadError` saying how far it got.
"""
from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from bloomspan.sidecar.errors import BloomspanSidecarError
from bloomspan.sidecar.inputs import Compression, DamagedInputError, detect_compression, not_utf8, open_lines
from bloomspan.sidecar.inputs.compression import UTF8_BOM

log = logging.getLogger(__name__)

RETRIES = 4
MAX_ID_BYTES = 512             # OpenSearch's limit on _id
MAX_BATCH_BYTES = 10 << 20     # a request stays far below the usual http.max_content_length (100 MB)
_BAD_INDEX_CHARS = re.compile(r'[*?"<>|,#:\\/ ]')


class IndexLoadError(BloomspanSidecarError):
    """The load cannot start or cannot go on (bad configuration, cluster gone)."""


@dataclass(frozen=True)
class IndexJsonlConfig:
    """``path``: the JSON Lines file; ``index``: target index or alias (no wildcards);
    ``id_field``: field (dots for nested) holding each document's ``_id``, None for ids the
    cluster assigns; ``batch_size``: documents per bulk request (also cut at MAX_BATCH_BYTES)."""

    path: str
    index: str
    id_field: str | None = None
    batch_size: int = 500

    def __post_init__(self) -> None:
        if not os.path.isfile(self.path):
            raise IndexLoadError(f"--jsonl {self.path}: no such file", field="jsonl")
        if not self.index or _BAD_INDEX_CHARS.search(self.index) or self.index[0] in "_-+" \
                or self.index != self.index.lower():
            raise IndexLoadError(f"--index {self.index!r}: not an index name (lowercase, no wildcards, commas, "
                                 "spaces or leading _ - +)", field="index")
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or not 1 <= self.batch_size <= 10_000:
            raise IndexLoadError(f"--batch-size {self.batch_size!r}: must be an integer in [1, 10000]",
                                 field="batch_size")
        if self.id_field is not None and not self.id_field:
            raise IndexLoadError("--id-field '': give a field name, or leave it out for cluster-assigned ids",
                                 field="id_field")


@dataclass
class IndexSummary:
    """Counts of one load: ``lines`` read (blank ones included), ``blank`` skipped,
    ``indexed`` (= ``created`` + ``updated``), ``failed`` lines; ``created_index`` when the
    index was made by this load."""

    lines: int = 0
    blank: int = 0
    indexed: int = 0
    created: int = 0
    updated: int = 0
    failed: int = 0
    bytes_read: int = 0
    seconds: float = 0.0
    created_index: bool = False
    failures_by_reason: dict = field(default_factory=dict)


def ensure_index(client, index: str) -> bool:
    """Create ``index`` with the document mappings unless it (or an alias of that name) exists;
    True when it was created here."""
    from opensearchpy.exceptions import RequestError

    from bloomspan.mappings import load
    from bloomspan.sidecar.cluster.engine import engine_of

    if client.indices.exists(index=index):
        return False
    try:
        mappings = engine_of(client).adapt_mappings(load("documents")["template"]["mappings"])
        client.indices.create(index=index, body={"mappings": mappings})
    except RequestError as exc:
        if getattr(exc, "error", "") == "resource_already_exists_exception":
            return False  # created by someone else in between
        raise IndexLoadError(f"--index {index}: cannot be created ({getattr(exc, 'error', exc)})",
                             index=index, field="index") from None
    log.info("created index=%s with the bloomspan document mappings", index)
    return True


def parse_line(raw: bytes, id_field: str | None) -> tuple[bytes, str | None]:
    """``(source bytes, _id or None)`` for one non-blank line; ValueError names the reason."""
    from bloomspan.sidecar.cluster.field_paths import MISSING, lookup_field

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(not_utf8(exc)) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise ValueError("invalid JSON (nested too deeply)") from None
    if not isinstance(doc, dict):
        raise ValueError(f"expected a JSON object, got {type(doc).__name__}")
    if id_field is None:
        return raw, None
    value = lookup_field(doc, id_field)
    if value is MISSING or value is None:
        raise ValueError(f"id field {id_field!r} is missing (choose it with --id-field)")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError(f"id field {id_field!r} is {type(value).__name__}; it must be a string or an integer")
    doc_id = str(value)
    try:
        doc_id.encode("utf-8")
    except UnicodeEncodeError as exc:  # "\ud800" in the JSON: valid JSON, but no _id can hold it
        raise ValueError(f"id field {id_field!r} holds a lone surrogate (\\u{ord(doc_id[exc.start]):04x} at "
                         f"character {exc.start + 1}); an _id must be valid Unicode") from None
    if not doc_id or len(doc_id.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES:
        raise ValueError(f"id field {id_field!r} is empty or longer than {MAX_ID_BYTES} bytes")
    return raw, doc_id


def _item_reason(item: dict) -> str:
    err = item.get("error")
    if isinstance(err, dict):
        reason = f"{err.get('type')}: {err.get('reason')}"
        cause = err.get("caused_by")
        if isinstance(cause, dict) and cause.get("reason"):
            reason += f" ({cause.get('reason')})"
        return reason
    return str(err or f"status {item.get('status')}")


class _Loader:
    def __init__(self, client, config: IndexJsonlConfig, summary: IndexSummary,
                 on_error: Callable[[int, str], None], sleep: Callable[[float], None]):
        self.client, self.config, self.summary = client, config, summary
        self.on_error, self.sleep = on_error, sleep

    def fail(self, line: int, reason: str) -> None:
        self.summary.failed += 1
        kind = reason.split(" ", 1)[0].split(":", 1)[0]
        self.summary.failures_by_reason[kind] = self.summary.failures_by_reason.get(kind, 0) + 1
        self.on_error(line, reason)

    def _bulk(self, body: bytes) -> dict:
        from opensearchpy.exceptions import ConnectionError as OSConnectionError, TransportError

        for attempt in range(RETRIES):
            try:
                return self.client.bulk(body=body)
            except OSConnectionError as exc:
                problem = f"cluster unreachable ({type(exc).__name__})"
            except TransportError as exc:
                if exc.status_code not in (429, 502, 503, 504):
                    raise IndexLoadError(f"bulk request to {self.config.index} refused: {exc.status_code} "
                                         f"{getattr(exc, 'error', '')}", index=self.config.index) from None
                problem = f"cluster answered {exc.status_code}"
            log.warning("index bulk retry=%d reason=%s", attempt + 1, problem)
            self.sleep(2 ** attempt)
        raise IndexLoadError(f"{problem} after {RETRIES} tries; {self.summary.indexed:,} documents were indexed "
                             f"before line {self._first_line}", index=self.config.index)

    def send(self, batch: list[tuple[int, bytes, str | None]]) -> None:
        """Index ``batch`` (line, source, id); 429 items are sent again with backoff."""
        index = self.config.index
        for attempt in range(RETRIES + 1):
            self._first_line = batch[0][0]
            parts = []
            for _, source, doc_id in batch:
                meta = {"_index": index} if doc_id is None else {"_index": index, "_id": doc_id}
                parts.append(json.dumps({"index": meta}, ensure_ascii=False).encode("utf-8") + b"\n" + source + b"\n")
            resp = self._bulk(b"".join(parts))
            again = []
            for (line, source, doc_id), item in zip(batch, resp["items"], strict=True):
                result = item.get("index") or next(iter(item.values()))
                status = int(result.get("status", 500))
                if status < 300:
                    self.summary.indexed += 1
                    if result.get("result") == "updated":
                        self.summary.updated += 1
                    else:
                        self.summary.created += 1
                elif status == 429 and attempt < RETRIES:
                    again.append((line, source, doc_id))
                else:
                    self.fail(line, _item_reason(result))
            if not again:
                return
            self.sleep(2 ** attempt)
            batch = again


def _starts_with_bom(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(len(UTF8_BOM)) == UTF8_BOM


def _lines(path: str) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw line)`` of the file, decompressed (:mod:`bloomspan.sidecar.inputs`)."""
    with open_lines(path) as f:
        yield from enumerate(f, start=1)


def index_jsonl(client, config: IndexJsonlConfig, *, on_error: Callable[[int, str], None] | None = None,
                progress: Callable[[int, int, int], None] | None = None,
                sleep: Callable[[float], None] = time.sleep) -> IndexSummary:
    """Load ``config.path`` into ``config.index`` (module docstring). ``on_error(line, reason)``
    is called for each line that was not indexed; ``progress(lines, bytes_read, file_bytes)``
    after each bulk request."""
    t0 = time.perf_counter()
    summary = IndexSummary()
    summary.created_index = ensure_index(client, config.index)
    loader = _Loader(client, config, summary, on_error or (lambda line, reason: None), sleep)
    # a compressed file's size says nothing of how much of it has been read: progress gives bytes
    total_bytes = os.path.getsize(config.path) if detect_compression(config.path) is Compression.PLAIN else 0
    batch: list[tuple[int, bytes, str | None]] = []
    batch_bytes = 0
    damaged = None
    try:
        for lineno, raw in _lines(config.path):
            summary.lines = lineno
            # the line read, and on line 1 a byte order mark before it that open_lines left out
            summary.bytes_read += len(raw) + (lineno == 1 and bool(total_bytes) and _starts_with_bom(config.path)) * len(UTF8_BOM)
            raw = raw.rstrip(b"\r\n")
            if not raw.strip():
                summary.blank += 1
                continue
            try:
                source, doc_id = parse_line(raw, config.id_field)
            except ValueError as exc:
                loader.fail(lineno, str(exc))
                continue
            batch.append((lineno, source, doc_id))
            batch_bytes += len(source)
            if len(batch) >= config.batch_size or batch_bytes >= MAX_BATCH_BYTES:
                loader.send(batch)
                batch, batch_bytes = [], 0
                if progress:
                    progress(summary.lines, summary.bytes_read, total_bytes)
    except DamagedInputError as exc:  # the lines before it are indexed all the same, then the load stops
        damaged = exc
    if batch:
        loader.send(batch)
    client.indices.refresh(index=config.index)
    if damaged is not None:
        raise IndexLoadError(f"{damaged}; the documents before it were indexed into {config.index}",
                             index=config.index, item=damaged.line)
    if progress:
        progress(summary.lines, summary.bytes_read, total_bytes)
    summary.seconds = time.perf_counter() - t0
    log.info("indexed path=%s index=%s lines=%d indexed=%d failed=%d seconds=%.2f", config.path, config.index,
             summary.lines, summary.indexed, summary.failed, summary.seconds)
    return summary
