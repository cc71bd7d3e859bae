"""Coverage mask kernel and the frequent-suffix mask helpers."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bloomspan.engine.mining import coverage as cv

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
KERNEL = settings(max_examples=1000 if THOROUGH else 150, derandomize=True, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow])


@KERNEL
@given(st.integers(0, 40).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, max(n - 1, 0)), st.integers(1, 6)), max_size=0 if n == 0 else 12))))
def test_coverage_matches_reference(case):
    n, occ = case
    occ = [(s, min(k, n - s)) for s, k in occ]
    starts = np.array([s for s, _ in occ], dtype=np.int64)
    lengths = np.array([k for _, k in occ], dtype=np.int64)
    got = cv.coverage_mask(n, starts, lengths)
    assert got.dtype == np.bool_
    assert got.tolist() == cv.coverage_mask_reference(n, starts, lengths).tolist()


def test_coverage_rejects_occurrences_outside_the_corpus():
    with pytest.raises(ValueError, match="inside"):
        cv.coverage_mask(4, np.array([3]), np.array([2]))
    with pytest.raises(ValueError, match="same shape"):
        cv.coverage_mask(4, np.array([1]), np.array([1, 2]))


def test_suffix_mask():
    dead_from = cv.new_suffix_mask(np.array([0, 4, 4, 9]))
    assert dead_from.tolist() == [4, 4, 9]
    assert not cv.is_dead(dead_from, 2, 8)
    cv.mark_frequent_suffix(dead_from, 2, 6)   # a frequent phrase occupies 6..8
    assert [cv.is_dead(dead_from, 2, p) for p in (6, 7, 8)] == [False, True, True]
    cv.mark_frequent_suffix(dead_from, 2, 7)   # a shorter suffix changes nothing
    assert dead_from.tolist() == [4, 4, 7]
