"""Incremental forgetful Bloom filter: kernel vs reference, sweeper invariants, slice-by-slice
filling, and frequent-vs-rare behaviour."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.mining.config import ConfigError
from bloomspan.engine.sketches.forgetful_bloom import (
    ForgetfulBloomConfig,
    IncrementalForgetfulBloom,
    _put_and_check_kernel,
    _put_and_check_reference,
    element_indices,
    element_pairs,
    segment_bounds,
    splitmix64,
)


def popcount(words: np.ndarray) -> int:
    return int(np.unpackbits(words.view(np.uint8)).sum())


def hashes(values) -> np.ndarray:
    return np.asarray(values, dtype=np.uint64)


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"num_bits": 32}, "num_bits"),
        ({"num_bits": 1024, "bits_per_element": 0}, "bits_per_element"),
        ({"num_bits": 64, "bits_per_element": 65}, "bits_per_element"),
        ({"bits_per_element": 16, "slice_bits": 17}, "slice_bits"),
        ({"slice_bits": 0}, "slice_bits"),
        ({"max_fill": 1.0}, "max_fill"),
        ({"max_fill": 0}, "max_fill"),
    ],
)
def test_config_errors_name_the_field(kw, field):
    with pytest.raises(ConfigError, match=field):
        ForgetfulBloomConfig(**kw)


def test_max_set_rounds_up_like_remind():
    assert ForgetfulBloomConfig(num_bits=101).max_set == 51  # m/2 + m mod 2
    assert ForgetfulBloomConfig(num_bits=100, max_fill=0.25).max_set == 25


def test_splitmix64_known_values():
    # reference outputs of SplitMix64 seeded with 0 (Vigna): first two values of the sequence
    out = splitmix64(hashes([0, 0x9E3779B97F4A7C15]))
    assert [hex(int(v)) for v in out] == ["0xe220a8397b1dcdaf", "0x6e789e6aa1b965f4"]


@settings(derandomize=True, max_examples=30, deadline=None)
@given(m=st.integers(64, 700), k=st.integers(1, 40), n=st.integers(0, 30))
def test_indices_one_per_segment_and_sorted(m, k, n):
    k = min(k, m)
    idx = element_indices(np.arange(n, dtype=np.uint64) * np.uint64(7919), k, m)
    bounds = segment_bounds(k, m)
    assert idx.shape == (n, k)
    assert ((idx >= bounds[:-1]) & (idx < bounds[1:])).all()
    assert (np.diff(idx, axis=1) > 0).all()


def test_unrelated_elements_do_not_share_all_their_bits():
    # regression: the double-hashing sequence ran modulo m; with m a multiple of the segment
    # length only (a mod len, b mod len) mattered, 65,536 index sets at m = 2^14, K = 64, so
    # a filler shingle shared every bit with a template shingle and came out "full"
    idx = element_indices(np.random.default_rng(0).integers(0, 2**63, 5000, dtype=np.uint64), 64, 1 << 14)
    assert np.unique(idx, axis=0).shape[0] == 5000
    shared = (idx[:2500] == idx[2500:]).sum(axis=1)
    assert shared.max() <= 6  # ~Binomial(64, 1/256) per pair: P(>= 7) ~ 1e-8


@settings(derandomize=True, max_examples=30, deadline=None)
@given(
    m=st.integers(64, 400),
    k=st.integers(1, 24),
    n=st.integers(1, 12),
    fill=st.sampled_from([0.1, 0.3, 0.5, 0.8]),
    stream=st.lists(st.integers(0, 40), min_size=0, max_size=120),
)
def test_kernel_matches_reference(m, k, n, fill, stream):
    k = min(k, m)
    n = min(n, k)
    cfg = ForgetfulBloomConfig(num_bits=m, bits_per_element=k, slice_bits=n, max_fill=fill)
    h = hashes(stream) * np.uint64(0x9E3779B97F4A7C15)  # repeats: frequent elements exist
    words_k = np.zeros((m + 63) // 64, dtype=np.uint64)
    state_k = np.zeros(2, dtype=np.int64)
    words_r, state_r = words_k.copy(), state_k.copy()
    a, b = element_pairs(h)
    mem_k = np.empty(len(h), dtype=np.int64)
    _put_and_check_kernel(words_k, state_k, a, b, segment_bounds(k, m), (1 << 61) - 1, n, m, cfg.max_set, True, mem_k)
    mem_r = _put_and_check_reference(words_r, state_r, element_indices(h, k, m), n, m, cfg.max_set, True)
    np.testing.assert_array_equal(mem_k, mem_r)
    np.testing.assert_array_equal(words_k, words_r)
    np.testing.assert_array_equal(state_k, state_r)
    assert popcount(words_k) == state_k[1] <= cfg.max_set
    assert 0 <= state_k[0] < m


def test_an_element_fills_slice_by_slice():
    f = IncrementalForgetfulBloom(ForgetfulBloomConfig(num_bits=4096, bits_per_element=32, slice_bits=8))
    x = hashes([12345])
    assert f.mem(x).tolist() == [0]
    for j in range(1, 5):
        before = f.bits_set
        full = f.put_and_check(x)[0]
        assert f.bits_set - before == 8  # one slice per put
        assert f.mem(x)[0] == 8 * j
        assert full == (j == 4)
    f.put(x)  # already full: nothing to flip
    assert f.bits_set == 32 and f.full(x)[0]
    f.clear()
    assert f.bits_set == 0 and f.sweep_pos == 0 and not f.words.any()


def test_the_sweeper_holds_the_fill_ratio():
    cfg = ForgetfulBloomConfig(num_bits=2048, bits_per_element=16, slice_bits=4, max_fill=0.5)
    f = IncrementalForgetfulBloom(cfg)
    rng = np.random.default_rng(0)
    for _ in range(10):
        f.put(rng.integers(0, 2**63, 200, dtype=np.uint64))
        assert popcount(f.words) == f.bits_set <= cfg.max_set
    assert f.bits_set == cfg.max_set and f.fill_ratio == pytest.approx(0.5)
    assert f.sweep_pos > 0  # it has been clearing


def test_frequent_elements_become_full_and_rare_ones_do_not():
    # m = 4096 at fill 1/2: each put flips 8 bits and the sweeper moves ~16 positions, so a
    # sweep takes ~256 puts
    cfg = ForgetfulBloomConfig(num_bits=1 << 12, bits_per_element=48, slice_bits=8)
    f = IncrementalForgetfulBloom(cfg)
    rng = np.random.default_rng(1)
    f.put(rng.integers(0, 2**63, 600, dtype=np.uint64))  # reach the sweeping regime
    frequent = hashes([42])
    full_at = None
    rare_full = 0
    for step in range(1, 21):  # the frequent element once per 11 puts
        rare_full += int(f.put_and_check(rng.integers(0, 2**63, 10, dtype=np.uint64)).sum())
        if f.put_and_check(frequent)[0] and full_at is None:
            full_at = step
    assert full_at is not None and full_at <= 6  # K / slice = 6 sightings at most without loss
    assert rare_full == 0  # 200 never-repeated elements: none full
    # an element seen once per 300 other puts (more than a sweep) never fills
    g = IncrementalForgetfulBloom(cfg)
    g.put(rng.integers(0, 2**63, 600, dtype=np.uint64))
    slow = hashes([7])
    hits = 0
    for _ in range(6):
        g.put(rng.integers(0, 2**63, 300, dtype=np.uint64))
        hits += int(g.put_and_check(slow)[0])
    assert hits == 0


def test_memory_is_fixed():
    f = IncrementalForgetfulBloom(ForgetfulBloomConfig(num_bits=1 << 12))
    before = (f.words.nbytes, f.words.ctypes.data)
    f.put(np.arange(300, dtype=np.uint64))
    assert (f.words.nbytes, f.words.ctypes.data) == before == (512, before[1])
