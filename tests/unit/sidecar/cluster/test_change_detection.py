"""The one change rule of incremental runs (one node and Dask)."""
from __future__ import annotations

import numpy as np

from bloomspan.sidecar.cluster.change_detection import same_version


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
