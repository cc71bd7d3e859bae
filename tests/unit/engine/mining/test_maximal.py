"""Maximality index: against all-pairs containment, in any arrival order."""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bloomspan.engine.mining.maximal import MaximalPhraseIndex, _contains, select_maximal, select_maximal_reference

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
KERNEL = settings(max_examples=2000 if THOROUGH else 200, derandomize=True, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow])

@KERNEL
@given(st.integers(1, 3).flatmap(lambda k: st.tuples(
    st.just(k), st.lists(st.lists(st.integers(0, 3), min_size=max(2, k), max_size=7).map(tuple),
                         unique=True, max_size=25))), st.randoms(use_true_random=False))
def test_matches_all_pairs_in_any_order(case, rnd):
    key_length, candidates = case
    kept, rejected, absorbed = select_maximal(candidates, key_length)
    want = select_maximal_reference(candidates)
    assert kept == want
    assert rejected + absorbed == len(candidates) - len(kept)
    shuffled = list(candidates)
    rnd.shuffle(shuffled)
    assert sorted(shuffled[i] for i in select_maximal(shuffled, key_length)[0]) == sorted(candidates[i] for i in want)


@pytest.mark.parametrize("key_length", [1, 2])
def test_absorbs_earlier_phrases(key_length):
    kept, rejected, absorbed = select_maximal([(2, 3), (1, 2, 3), (5, 1, 2, 3, 4), (2, 3, 4)], key_length)
    assert (kept, rejected, absorbed) == ([2], 1, 2)


def test_rejects_phrases_inside_kept_ones():
    index = MaximalPhraseIndex()
    assert index.offer(0, (1, 2, 3, 4))
    assert not index.offer(1, (2, 3))
    assert index.offer(2, (3, 4, 5))
    assert index.keys() == [0, 2] and len(index) == 2 and index.n_rejected == 1


def test_unaligned_byte_matches_are_not_substrings():
    # ids 256 and 1 share bytes at an unaligned offset of (1, 1, 0)'s encoding
    assert not _contains(b"\x00\x01\x00\x00\x01\x00\x00\x00", b"\x01\x00\x00\x01")
    kept, _, _ = select_maximal([(65536, 256), (1, 256, 1, 0)])
    assert kept == [0, 1]


def test_offer_validates():
    index = MaximalPhraseIndex()
    index.offer(0, (1, 2))
    with pytest.raises(ValueError, match="offered twice"):
        index.offer(0, (3, 4))
    with pytest.raises(ValueError, match="length >= max"):
        index.offer(1, (3,))
    with pytest.raises(ValueError, match="length >= max"):
        MaximalPhraseIndex(key_length=3).offer(1, (3, 4))
    with pytest.raises(ValueError, match="key_length=0"):
        MaximalPhraseIndex(key_length=0)
