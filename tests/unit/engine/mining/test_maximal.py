"""Maximality: the batch kernel against all-pairs containment, in any arrival order."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bloomspan.engine.mining import maximal
from bloomspan.engine.mining.maximal import candidate_tokens, inside_another, select_maximal, select_maximal_reference

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
KERNEL = settings(max_examples=2000 if THOROUGH else 200, derandomize=True, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow])


@KERNEL
@given(st.integers(1, 3).flatmap(lambda k: st.tuples(
    st.just(k), st.lists(st.lists(st.integers(0, 3), min_size=max(2, k), max_size=7).map(tuple),
                         unique=True, max_size=25))), st.randoms(use_true_random=False))
def test_matches_all_pairs_in_any_order(case, rnd):
    key_length, candidates = case
    kept, n_inside = select_maximal(candidates, key_length)
    want = select_maximal_reference(candidates)
    assert kept == want
    assert n_inside == len(candidates) - len(kept)
    shuffled = list(candidates)
    rnd.shuffle(shuffled)
    assert sorted(shuffled[i] for i in select_maximal(shuffled, key_length)[0]) == sorted(candidates[i] for i in want)


@pytest.mark.parametrize("key_length", [1, 2])
def test_drops_phrases_inside_longer_ones_whatever_comes_first(key_length):
    assert select_maximal([(2, 3), (1, 2, 3), (5, 1, 2, 3, 4), (2, 3, 4)], key_length) == ([2], 3)
    assert select_maximal([(1, 2, 3, 4), (2, 3), (3, 4, 5)], key_length) == ([0, 2], 1)


def test_hash_collisions_never_decide(monkeypatch):
    """With base 0 a key's hash is its last token, so keys that end alike collide: the
    kernel compares more places, and the answer is still the token comparison's."""
    candidates = [(1, 2, 3, 4), (2, 3), (7, 3), (3, 4, 5), (9, 9, 2, 3), (5, 7, 3, 9)]
    want = select_maximal_reference(candidates)
    flat = np.array([t for c in candidates for t in c], dtype=np.uint32)
    starts = np.cumsum([0] + [len(c) for c in candidates]).astype(np.int64)
    monkeypatch.setattr(maximal, "_BASE", np.uint64(0))  # read at call time by the Python twins below
    # the Python twins: the kernels' py_func, or the functions themselves under NUMBA_DISABLE_JIT=1
    monkeypatch.setattr(maximal, "_key_hashes", getattr(maximal._key_hashes, "py_func", maximal._key_hashes))
    hashes = maximal._key_hashes(flat, starts, 2)[0]
    keys = {c[i:i + 2] for c in candidates for i in range(len(c) - 1)}
    assert len(set(hashes.tolist())) < len(keys)  # collisions happen
    assert np.flatnonzero(~getattr(maximal._inside_kernel, "py_func", maximal._inside_kernel)(flat, starts, 2)).tolist() == want


def test_candidate_tokens_gathers_each_candidate():
    tokens = np.arange(100, 120, dtype=np.uint32)
    flat, starts = candidate_tokens(tokens, np.array([3, 0, 10]), np.array([2, 4, 3]))
    assert starts.tolist() == [0, 2, 6, 9]
    assert flat.tolist() == [103, 104, 100, 101, 102, 103, 110, 111, 112]


def test_validates():
    with pytest.raises(ValueError, match="key_length=0"):
        select_maximal([(1, 2)], key_length=0)
    with pytest.raises(ValueError, match="length >= max"):
        select_maximal([(3,)])
    with pytest.raises(ValueError, match="length >= max"):
        select_maximal([(3, 4)], key_length=3)
    assert inside_another(np.zeros(0, np.uint32), np.zeros(1, np.int64), 3).shape == (0,)
