"""The one change rule of incremental runs (one node and Dask)."""
from __future__ import annotations

import numpy as np

from bloomspan.sidecar.cluster.change_detection import change_counts, same_version, unchanged_rows


def _rows(*rows):
    return np.array([[s, p, ts, 0, -1] for s, p, ts in rows], dtype=np.int64)


def test_without_a_timestamp_seq_no_and_primary_term_decide():
    now = _rows((5, 1, 0), (6, 1, 0), (5, 2, 0), (-1, 0, 0))
    then = _rows((5, 1, 0), (5, 1, 0), (5, 1, 0), (-1, 0, 0))
    assert same_version(now, then, use_timestamp=False).tolist() == [True, False, False, False]


def test_with_a_timestamp_only_the_timestamp_decides_and_a_missing_one_is_read_again():
    now = _rows((9, 1, 7), (5, 1, 8), (5, 1, 0))
    then = _rows((5, 1, 7), (5, 1, 7), (5, 1, 0))
    assert same_version(now, then, use_timestamp=True).tolist() == [True, False, False]


def test_a_listing_against_a_previous_read_counts_each_document_once():
    """Rows: unchanged, changed, new, unchanged; the previous read had 5 documents, so 2 were deleted."""
    prev_meta = _rows((5, 1, 0), (6, 1, 0), (7, 1, 0), (8, 1, 0), (9, 1, 0))
    now = _rows((5, 1, 0), (7, 1, 0), (3, 1, 0), (8, 1, 0))
    prev_row = np.array([0, 1, -1, 3], dtype=np.int64)
    unchanged = unchanged_rows(now, prev_row, prev_meta, use_timestamp=False)
    assert unchanged.tolist() == [True, False, False, True]
    assert change_counts(prev_row, unchanged, n_prev=5) == {"listed": 4, "reused": 2, "new": 1, "changed": 1,
                                                            "deleted": 2}
