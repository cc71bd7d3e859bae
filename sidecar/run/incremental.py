"""Re-mining after crawler updates: read only new and changed documents, reuse the rest.

How a document is known to be unchanged
---------------------------------------
A cheap listing pass reads, for every document of the source, its key and version only
(no ``_source``): ``_seq_no``/``_primary_term`` always, and the value of
``timestamp_field`` when one is configured. Compared with the previous run's snapshot:

* with a timestamp field: unchanged iff the timestamp equals the previous one (documents
  without a timestamp are always re-read);
* without: unchanged iff ``(_seq_no, _primary_term)`` are equal — every write to a
  document gives it a new ``_seq_no`` (our own annotation writes are recorded, see
  :mod:`.annotate`).

Documents absent from the listing were deleted and are dropped. Listing every key is what
makes deletions visible at all: a ``range`` query on the timestamp cannot show them.
New and changed documents are then fetched by id (:func:`.collect.collect_fetch`) into a
fresh corpus store, whose token ids are mapped into the previous vocabulary.

Why the result equals a from-scratch run
----------------------------------------
Both runs end in :func:`bloomspan.sidecar.run.snapshot.write_snapshot` with the same documents
in the same canonical (key) order and the same token strings; ids may differ, strings do
not. Mining is a function of the token sequences, and everything published (phrase text,
df, bitmaps over canonical numbers, example ids, coverage positions, counts) is derived
from the snapshot, so it is identical. ``tests/integration/sidecar/run/test_incremental.py`` checks
this after adds, updates and deletes.

Line starts (where the lines of a document's text begin) are a property of each document,
like its tokens, and travel with them: an unchanged document keeps the previous snapshot's,
a fetched one gets the delta store's. When unchanged documents come from a snapshot
without line starts (its sources had none), the new snapshot has none either.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from bloomspan.engine.text.corpus_store import CHAR_ENDS, CHAR_STARTS
from bloomspan.sidecar.cluster.change_detection import change_counts, unchanged_rows

from .checkpoint import STORED, DocLog
from .snapshot import Snapshot, TokenSource, canonical_rows, write_snapshot

log = logging.getLogger(__name__)


def _search_sorted(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """Row of each needle in the ascending ``S`` array ``haystack``, -1 when absent."""
    if haystack.shape[0] == 0 or needles.shape[0] == 0:
        return np.full(needles.shape[0], -1, dtype=np.int64)
    width = max(haystack.dtype.itemsize, needles.dtype.itemsize)
    h = haystack.astype(f"S{width}")
    n = needles.astype(f"S{width}")
    pos = np.searchsorted(h, n)
    ok = pos < h.shape[0]
    ok[ok] = h[pos[ok]] == n[ok]
    return np.where(ok, pos, -1).astype(np.int64)


@dataclass
class IncrementalPlan:
    """keys: ``S`` (K,) current keys, ascending; meta int64 (K, 5) their listing records;
    prev_row int64 (K,) row in the previous snapshot (-1: new); unchanged bool (K,)."""

    keys: np.ndarray
    meta: np.ndarray
    prev_row: np.ndarray
    unchanged: np.ndarray

    @property
    def fetch_keys(self) -> list[str]:
        """Keys to read again (new or changed), ascending."""
        return [k.decode("utf-8", "surrogatepass") for k in self.keys[~self.unchanged].tolist()]

    def counts(self, n_prev: int) -> dict:
        return change_counts(self.prev_row, self.unchanged, n_prev)


def plan(listing: DocLog, prev: Snapshot, use_timestamp: bool) -> IncrementalPlan:
    """Compare the listing with the previous snapshot (see module docstring)."""
    rows = canonical_rows(listing.keys())
    keys = listing.keys()[rows]
    meta = listing.meta()[rows]
    prev_row = _search_sorted(prev.keys(), keys)
    unchanged = unchanged_rows(meta, prev_row, np.asarray(prev.meta()), use_timestamp)
    return IncrementalPlan(keys, meta, prev_row, unchanged)


def assemble_full(out_dir, doclog: DocLog, store, info: dict, with_offsets: bool) -> Snapshot:
    """Snapshot of a full read: the log's records in canonical order, tokens (and line
    starts, when the store has them) from ``store``."""
    rows = canonical_rows(doclog.keys())
    keys = doclog.keys()[rows]
    meta = doclog.meta()[rows]
    source = _store_source(store, with_offsets)
    return write_snapshot(out_dir, keys, meta[:, :4], np.zeros(keys.shape[0], dtype=np.int64), meta[:, 4],
                          [source], store.vocabulary, info, with_offsets)


def _store_source(store, with_offsets: bool, remap: np.ndarray | None = None) -> TokenSource:
    """A corpus store as a token source: tokens, offsets when asked, its line starts if any."""
    return TokenSource(store.tokens, store.doc_offsets,
                       *(_store_offsets(store) if with_offsets else (None, None)),
                       remap=remap, line_starts=store.line_starts)


def _store_offsets(store) -> tuple[np.ndarray, np.ndarray]:
    """Whole-corpus char offset arrays of a corpus store created with offsets."""
    if store.n_tokens == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # The store's documented layout; it exposes offsets only per document (char_spans).
    return tuple(np.asarray(np.memmap(store.work_dir / name, dtype="<i8", mode="r", shape=(store.n_tokens,)))
                 for name in (CHAR_STARTS, CHAR_ENDS))


def assemble_incremental(out_dir, the_plan: IncrementalPlan, prev: Snapshot, fetch_log: DocLog, store,
                         info: dict, with_offsets: bool) -> Snapshot:
    """Snapshot = unchanged documents from ``prev`` + fetched ones from ``store``; with line
    starts when every side that contributes documents has them."""
    keep = np.flatnonzero(the_plan.unchanged)
    prev_rows = the_plan.prev_row[keep]
    pm = np.asarray(prev.meta())
    prev_doc_of_row = np.cumsum(pm[:, 3] == STORED) - 1
    meta_a = the_plan.meta[keep, :4].copy()
    meta_a[:, 3] = pm[prev_rows, 3]  # status as read last time
    doc_a = prev_doc_of_row[prev_rows]
    f_rows = canonical_rows(fetch_log.keys())
    keys_b = fetch_log.keys()[f_rows]
    meta_b = fetch_log.meta()[f_rows]
    keys = np.concatenate([the_plan.keys[keep], keys_b]) if keys_b.shape[0] else the_plan.keys[keep]
    if keys.shape[0]:
        width = max(the_plan.keys.dtype.itemsize, keys_b.dtype.itemsize)
        keys = keys.astype(f"S{width}")
    meta = np.concatenate([meta_a, meta_b[:, :4]])
    src_id = np.concatenate([np.zeros(keep.size, dtype=np.int64), np.ones(keys_b.shape[0], dtype=np.int64)])
    src_doc = np.concatenate([doc_a, meta_b[:, 4]])
    order = np.argsort(keys, kind="stable")
    vocabulary = prev.vocabulary
    delta_tokens = store.vocabulary.tokens()
    remap = vocabulary.ids_of(delta_tokens, add_new=True) if delta_tokens else np.zeros(1, dtype=np.uint32)
    sources = [prev.token_source(), _store_source(store, with_offsets, np.asarray(remap, dtype=np.uint32))]
    return write_snapshot(out_dir, keys[order], meta[order], src_id[order], src_doc[order], sources,
                          vocabulary, info, with_offsets)
