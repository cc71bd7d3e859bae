"""Exact paragraph dedup (:mod:`bloomspan.ingest.companions.paragraph_dedup`) of a JSON Lines file or a live index.

* :func:`dedup_jsonl` — ``IN.jsonl`` to ``OUT.jsonl``: documents that lose no paragraph are
  written back as their original line, byte for byte; a document that loses some has its
  text field replaced (the line re-serialised); a document that loses every paragraph is
  left out. A line that is not a JSON object, or whose field is missing, null or not a
  string, is passed through unchanged and counted (nothing is lost silently); blank lines
  are dropped. The output appears under its final name only when the run succeeded. The
  input may be gzip or Zstandard compressed, the output is written in the compression its
  name asks for (:mod:`bloomspan.sidecar.inputs`); a compressed input damaged part way ends
  there: the documents before it are deduplicated and written, ``summary.damaged`` says where.
* :func:`dedup_index` — reads every document of ``index`` (``helpers.scan``: a scroll, in
  ``sort`` order when given, else in index order), and either writes the kept documents
  (same ``_id`` and routing, text rewritten) to a **new** index ``dest_index`` created with
  the source's mappings, or, with ``annotate=True``, marks the source documents that hold
  duplicate paragraphs with ``bloomspan.duplicate_paragraphs`` (how many) and
  ``bloomspan.duplicate_spans`` (``[[start, end], ...]`` character spans of the repeated
  paragraphs in the field). Annotation updates are partial and guarded by
  ``if_seq_no``/``if_primary_term``: a document changed since it was read is not marked
  (counted as a conflict). A document marked by an earlier run that has no duplicate any
  more is reset to 0.

"First occurrence" means first in reading order: give ``sort`` (e.g. a crawl date) to make
it meaningful and stable on a multi-shard index.

Field paths may be dotted (``content.body``) for nested objects. Both spools (the deduper's
and, with ``annotate``, a ledger of ids and paragraph digests) live on disk in temporary
directories that are removed at the end, on error and on interruption.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bloomspan.ingest.companions.paragraph_dedup import DedupStats, dedup_documents, paragraph_spans
from bloomspan.sidecar.cluster.field_paths import MISSING, lookup_field
from bloomspan.sidecar.inputs import DamagedInputError, compression_of_name, open_lines, open_output

log = logging.getLogger(__name__)

_TEXT, _META = "t", "m"  # keys of the wrapper documents handed to the deduper
DUPLICATE_FIELDS = {"duplicate_paragraphs": {"type": "integer"},
                    "duplicate_spans": {"type": "object", "enabled": False}}


class DedupIndexError(Exception):
    """Dedup of an index or file cannot run: ``index`` / ``field`` / ``item`` say what it is about."""

    def __init__(self, message: str, *, index: str | None = None, field: str | None = None, item: Any = None):
        super().__init__(message)
        self.index, self.field, self.item = index, field, item


@dataclass
class DedupRunSummary:
    """Outcome of one run: the deduper's ``stats`` plus input/output counters.

    ``passed_through`` (by reason) counts documents without a usable text; ``written``,
    ``updated``, ``reset``, ``conflicts`` and ``failed`` count writes to the cluster (with
    ``examples`` of failures); ``seconds`` is the wall time.
    """

    stats: DedupStats
    lines: int = 0
    blank_lines: int = 0
    passed_through: dict = field(default_factory=dict)
    written: int = 0
    updated: int = 0
    reset: int = 0
    conflicts: int = 0
    failed: int = 0
    examples: list = field(default_factory=list)
    bytes_in: int = 0
    seconds: float = 0.0
    target: str | None = None
    damaged: str | None = None  # the compressed input stops part way: what and where

    def as_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k != "stats"}
        out["stats"] = self.stats.as_dict()
        return out

    def pass_through(self, reason: str) -> None:
        self.passed_through[reason] = self.passed_through.get(reason, 0) + 1


# --------------------------------------------------------------------------- fields


def set_path(doc: dict, path: str, value: Any) -> dict:
    """A copy of ``doc`` (copied along ``path`` only) with ``value`` at ``path``."""
    out = dict(doc)
    if path in doc or "." not in path:
        out[path] = value
        return out
    head, rest = path.split(".", 1)
    out[head] = set_path(doc[head], rest, value)
    return out


def _text_or_reason(doc: Any, path: str) -> tuple[str | None, str | None]:
    if not isinstance(doc, dict):
        return None, "not_an_object"
    value = lookup_field(doc, path)
    if value is MISSING or value is None:
        return None, "no_field"
    if not isinstance(value, str):
        return None, "not_a_string"
    return value, None


# --------------------------------------------------------------------------- JSON Lines


def dedup_jsonl(in_path: str, out_path: str, field: str = "text", bloom_bytes_per_item: float = 10.0, *,
                expected_items: int | None = None, spool_dir: str | None = None,
                progress: Callable[[str, int], None] | None = None) -> DedupRunSummary:
    """Deduplicate the paragraphs of ``field`` across the documents of a JSON Lines file (module docstring)."""
    if not os.path.isfile(in_path):
        raise DedupIndexError(f"--in {in_path}: no such file", item=in_path)
    stats = DedupStats()
    summary = DedupRunSummary(stats=stats, target=out_path)
    t0 = time.perf_counter()

    def wrapped() -> Iterator[dict]:
        try:
            yield from documents()
        except DamagedInputError as exc:  # the documents before it are kept: dedup them, then say where
            summary.damaged = str(exc)

    def documents() -> Iterator[dict]:
        with open_lines(in_path) as src:
            for raw in src:
                summary.lines += 1
                summary.bytes_in += len(raw)
                if not raw.strip():
                    summary.blank_lines += 1
                    continue
                if not raw.endswith(b"\n"):
                    raw += b"\n"
                try:
                    doc = json.loads(raw)
                except (ValueError, UnicodeDecodeError):
                    doc, reason = None, "invalid_json"
                except RecursionError:  # valid JSON, perhaps, but deeper than the parser goes
                    doc, reason = None, "too_deep"
                else:
                    reason = None
                text, why = _text_or_reason(doc, field) if reason is None else (None, reason)
                if text is None:
                    summary.pass_through(why)
                    yield {_META: (raw, -1)}
                else:
                    yield {_TEXT: text, _META: (raw, len(text))}

    partial = out_path + ".partial"
    try:
        with open_output(partial, compression_of_name(out_path)) as out:
            n = 0
            for item in dedup_documents(wrapped(), _TEXT, bloom_bytes_per_item, expected_items, spool_dir, stats=stats):
                raw, orig_len = item[_META]
                text = item.get(_TEXT)
                if text is None or len(text) == orig_len:  # untouched: removing a paragraph shortens the text
                    out.write(raw)
                else:
                    doc = set_path(json.loads(raw), field, text)
                    out.write(_json_line(doc))
                n += 1
                if progress and n % 100_000 == 0:
                    progress("dedup", n)
        os.replace(partial, out_path)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    summary.seconds = time.perf_counter() - t0
    log.info("dedup jsonl in=%s out=%s %s", in_path, out_path, summary.as_dict())
    return summary


def _json_line(doc) -> bytes:
    """One output line, UTF-8; a lone surrogate (valid JSON as ``\\ud800``, not encodable in
    UTF-8) is written escaped, as the input held it."""
    try:
        return json.dumps(doc, ensure_ascii=False).encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(doc).encode("ascii") + b"\n"


# --------------------------------------------------------------------------- live index


def dedup_index(client, index: str, field: str = "text", bloom_bytes_per_item: float = 10.0, *,
                dest_index: str | None = None, annotate: bool = False, sort: str | None = None,
                batch_size: int = 500, expected_items: int | None = None, spool_dir: str | None = None,
                refresh: bool = True, progress: Callable[[str, int], None] | None = None) -> DedupRunSummary:
    """Deduplicate the paragraphs of ``field`` across the documents of ``index`` (module docstring).

    Exactly one of ``dest_index`` (a new index for the kept documents) and ``annotate``.
    """
    from opensearchpy import helpers

    if bool(dest_index) == bool(annotate):
        raise DedupIndexError("give exactly one of dest_index (write kept documents to a new index) or annotate=True",
                              index=index)
    if not client.indices.exists(index=index):
        raise DedupIndexError(f"index {index!r} does not exist", index=index)
    stats = DedupStats()
    summary = DedupRunSummary(stats=stats, target=dest_index or index)
    t0 = time.perf_counter()
    scan_kwargs: dict[str, Any] = {"index": index, "size": batch_size, "preserve_order": bool(sort),
                                   "query": {"query": {"match_all": {}}}}
    if sort:
        scan_kwargs["query"]["sort"] = [{sort: "asc"}]
    if annotate:
        scan_kwargs["seq_no_primary_term"] = True
        scan_kwargs["_source_includes"] = [field, "bloomspan.duplicate_paragraphs"]
        _install_duplicate_mapping(client, index)
    else:
        _create_dest(client, index, dest_index)
    hits = helpers.scan(client, **scan_kwargs)
    if dest_index:
        actions = _copy_actions(hits, field, dest_index, bloom_bytes_per_item, expected_items, spool_dir, summary)
        _bulk(client, actions, batch_size, summary, "written", progress)
    else:
        with tempfile.TemporaryDirectory(prefix="bloomspan-dedup-ledger-", dir=spool_dir) as ledger_dir:
            actions = _annotate_actions(hits, field, bloom_bytes_per_item, expected_items, spool_dir, summary,
                                        os.path.join(ledger_dir, "ledger.jsonl"))
            _bulk(client, actions, batch_size, summary, "updated", progress)
    if refresh:
        client.indices.refresh(index=dest_index or index)
    summary.seconds = time.perf_counter() - t0
    log.info("dedup index=%s target=%s %s", index, summary.target, summary.as_dict())
    return summary


def _create_dest(client, index: str, dest_index: str) -> None:
    if client.indices.exists(index=dest_index):
        raise DedupIndexError(f"dest index {dest_index!r} already exists; delete it or choose another name",
                              index=dest_index)
    mappings = client.indices.get_mapping(index=index)
    first = sorted(mappings)[0]
    client.indices.create(index=dest_index, body={"mappings": mappings[first].get("mappings", {})})


def _install_duplicate_mapping(client, index: str) -> None:
    client.indices.put_mapping(index=index, body={"properties": {"bloomspan": {"properties": DUPLICATE_FIELDS}}})


def _copy_actions(hits: Iterable[dict], field: str, dest_index: str, b: float, expected: int | None,
                  spool_dir: str | None, summary: DedupRunSummary) -> Iterator[dict]:
    """Bulk index actions of the kept documents."""

    def wrapped() -> Iterator[dict]:
        for hit in hits:
            summary.lines += 1
            source = hit.get("_source") or {}
            meta = (hit["_id"], hit.get("_routing"), source)
            text, why = _text_or_reason(source, field)
            if text is None:
                summary.pass_through(why)
                yield {_META: meta}
            else:
                yield {_TEXT: text, _META: meta}

    for item in dedup_documents(wrapped(), _TEXT, b, expected, spool_dir, stats=summary.stats):
        doc_id, routing, source = item[_META]
        text = item.get(_TEXT)
        if text is not None and lookup_field(source, field) != text:
            source = set_path(source, field, text)
        action = {"_op_type": "index", "_index": dest_index, "_id": doc_id, "_source": source}
        if routing is not None:
            action["routing"] = routing
        yield action


def _digests(text: str, spans: list[tuple[int, int]]) -> list[str]:
    return [hashlib.sha256(text[s:e].encode("utf-8", "surrogatepass")).hexdigest()[:16] for s, e in spans]


def _annotate_actions(hits: Iterable[dict], field: str, b: float, expected: int | None, spool_dir: str | None,
                      summary: DedupRunSummary, ledger_path: str) -> Iterator[dict]:
    """Partial updates marking duplicate paragraphs; a ledger on disk remembers every document
    (id, version, paragraph spans and digests) so dropped documents are marked too."""
    seq = 0
    with open(ledger_path, "w", encoding="utf-8") as ledger:

        def wrapped() -> Iterator[dict]:
            nonlocal seq
            for hit in hits:
                summary.lines += 1
                source = hit.get("_source") or {}
                text, why = _text_or_reason(source, field)
                prev = lookup_field(source, "bloomspan.duplicate_paragraphs")
                spans = paragraph_spans(text) if text else []
                entry = [seq, hit["_index"], hit["_id"], hit.get("_routing"), hit.get("_seq_no"),
                         hit.get("_primary_term"), prev if isinstance(prev, int) else 0, spans,
                         _digests(text, spans) if text else []]
                ledger.write(json.dumps(entry) + "\n")
                if text is None:
                    summary.pass_through(why)
                    yield {_META: seq}
                else:
                    yield {_TEXT: text, _META: seq}
                seq += 1
            ledger.flush()

        kept = dedup_documents(wrapped(), _TEXT, b, expected, spool_dir, stats=summary.stats)
        first = next(kept, None)  # the deduper reads (and the ledger is written) entirely before its first output
        with open(ledger_path, encoding="utf-8") as reader:
            pending = first
            for line in reader:
                n, idx, doc_id, routing, seq_no, primary_term, prev, spans, digests = json.loads(line)
                if pending is not None and pending[_META] == n:
                    removed = _removed(digests, pending.get(_TEXT))
                    pending = next(kept, None)
                else:  # dropped: every paragraph repeats an earlier one
                    removed = list(range(len(spans)))
                if not removed and not prev:
                    continue
                if not removed:
                    summary.reset += 1
                dup = {"duplicate_paragraphs": len(removed), "duplicate_spans": [spans[j] for j in removed]}
                action = {"_op_type": "update", "_index": idx, "_id": doc_id, "doc": {"bloomspan": dup}}
                if seq_no is not None:
                    action.update(if_seq_no=seq_no, if_primary_term=primary_term)
                if routing is not None:
                    action["routing"] = routing
                yield action


def _removed(digests: list[str], new_text: str | None) -> list[int]:
    """Indices of the original paragraphs missing from ``new_text``: its paragraphs are a
    subsequence of the original ones, and within a document a later copy of a paragraph is
    never kept when an earlier one is removed, so greedy matching from the left is exact."""
    if new_text is None:
        return []
    kept = _digests(new_text, paragraph_spans(new_text))
    removed, k = [], 0
    for j, d in enumerate(digests):
        if k < len(kept) and kept[k] == d:
            k += 1
        else:
            removed.append(j)
    return removed


def _bulk(client, actions: Iterable[dict], batch_size: int, summary: DedupRunSummary, ok_counter: str,
          progress: Callable[[str, int], None] | None) -> None:
    from opensearchpy import helpers

    done = 0
    for ok, item in helpers.streaming_bulk(client, actions, chunk_size=batch_size, raise_on_error=False,
                                           raise_on_exception=True, max_retries=3):
        done += 1
        if ok:
            setattr(summary, ok_counter, getattr(summary, ok_counter) + 1)
        else:
            (op, info), = item.items()
            if info.get("status") == 409:
                summary.conflicts += 1
            else:
                summary.failed += 1
                if len(summary.examples) < 5:
                    summary.examples.append({"id": info.get("_id"), "status": info.get("status"),
                                             "error": info.get("error")})
        if progress and done % 10_000 == 0:
            progress(ok_counter, done)
