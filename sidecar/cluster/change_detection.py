"""Is a listed document unchanged since it was last read? The one rule of incremental runs,
on one node (:mod:`bloomspan.sidecar.run.incremental`) and on Dask
(:mod:`bloomspan.sidecar.distributed.slice_state`).

Both compare the listing rows of :class:`bloomspan.sidecar.cluster.scroll.Page` (int64 (N, 5):
``_seq_no``, ``_primary_term``, timestamp fingerprint, status, doc index) with the rows the
documents had when they were read:

* with a timestamp field: unchanged iff the timestamp equals the previous one (documents
  without a timestamp are always read again);
* without: unchanged iff ``(_seq_no, _primary_term)`` are equal (every write to a document
  gives it a new ``_seq_no``).
"""
from __future__ import annotations

import numpy as np


def same_version(meta: np.ndarray, prev_meta: np.ndarray, use_timestamp: bool) -> np.ndarray:
    """bool (N,): is each listed row of ``meta`` (int64 (N, 5)) the version of the aligned
    row of ``prev_meta`` (int64 (N, >=3))?"""
    if use_timestamp:
        return (meta[:, 2] == prev_meta[:, 2]) & (meta[:, 2] != 0)
    return (meta[:, 0] == prev_meta[:, 0]) & (meta[:, 1] == prev_meta[:, 1]) & (meta[:, 0] >= 0)


def unchanged_rows(meta: np.ndarray, prev_row: np.ndarray, prev_meta: np.ndarray, use_timestamp: bool) -> np.ndarray:
    """bool (N,): is each listed row of ``meta`` a document that was read before (``prev_row``,
    int64 (N,): its row in ``prev_meta``, -1 when new) and is unchanged since?"""
    known = prev_row >= 0
    unchanged = np.zeros(meta.shape[0], dtype=bool)
    unchanged[known] = same_version(meta[known], prev_meta[prev_row[known]], use_timestamp)
    return unchanged


CHANGE_COUNTS = ("listed", "reused", "new", "changed", "deleted")
"""The names of a run's ``incremental`` counts (:func:`change_counts`)."""


def change_counts(prev_row: np.ndarray, unchanged: np.ndarray, n_prev: int) -> dict:
    """The run's ``incremental`` counts (:data:`CHANGE_COUNTS`) of a listing against a previous
    read of ``n_prev`` documents."""
    known = int(np.count_nonzero(prev_row >= 0))
    reused = int(np.count_nonzero(unchanged))
    return {"listed": int(prev_row.shape[0]), "reused": reused, "new": int(prev_row.shape[0]) - known,
            "changed": known - reused, "deleted": n_prev - known}
