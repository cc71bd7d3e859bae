"""Bloom filter: sizing formulas, kernels vs reference twins, and the properties that catch
bit-index bugs: no false negatives, every bit reachable, measured FP rate close to the formula."""
from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.mining.config import ConfigError
from bloomspan.engine.sketches.bloom_filter import (
    BloomFilter,
    _add_kernel,
    _add_reference,
    _query_kernel,
    _query_reference,
    _screen_kernel,
    _screen_reference,
    bit_indices,
    bloom_bits,
    bloom_hashes,
    bloom_rate,
    digest_array,
    expected_fp_rate,
    hash_pair,
)


def sha(i: int, salt: str = "") -> bytes:
    return hashlib.sha256(f"{salt}{i}".encode()).digest()


def digest_with(h1: int, h2: int = 0) -> bytes:
    """A 32-byte digest whose first two little-endian words are h1 and h2."""
    return h1.to_bytes(8, "little") + h2.to_bytes(8, "little") + bytes(16)


def set_bits(f: BloomFilter) -> list[int]:
    bits = np.unpackbits(f.words.view(np.uint8), bitorder="little")
    return np.flatnonzero(bits).tolist()


# ----------------------------------------------------------------------------- sizing


def test_bloom_rate_values():
    assert bloom_rate(10) == pytest.approx(2.0e-17, rel=0.05)
    assert bloom_rate(1) == pytest.approx(0.0214, rel=0.01)
    assert bloom_rate(0.25) == pytest.approx(0.382, rel=0.01)


def test_worked_example_sizes():
    # N = 5 paragraphs at B = 10: m = 400 bits, k = round(80 ln 2) = 55
    assert bloom_bits(5, 10) == 400
    assert bloom_hashes(10) == 55
    assert bloom_bits(5, 0.25) == 10
    assert bloom_hashes(0.25) == 1
    assert bloom_hashes(0.1) == 1  # never 0


@settings(derandomize=True, max_examples=60, deadline=None)
@given(n=st.integers(0, 10**9), b=st.floats(0.01, 64, allow_nan=False))
def test_bits_are_ceil_of_minus_n_ln_p_over_ln2_squared(n, b):
    m = bloom_bits(n, b)
    exact = 8 * b * max(n, 1)
    assert exact - 1e-6 <= m <= exact + 1
    p = bloom_rate(b)
    if p > 0:  # the textbook form, where ln p does not underflow
        assert abs(m - math.ceil(-max(n, 1) * math.log(p) / math.log(2) ** 2)) <= 1


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), True, "10"])
def test_bytes_per_item_is_validated(bad):
    with pytest.raises(ConfigError, match="bloom_bytes_per_item"):
        bloom_rate(bad)


@pytest.mark.parametrize("kw", [{"num_bits": 0, "num_hashes": 1}, {"num_bits": 64, "num_hashes": 0}, {"num_bits": 2**63, "num_hashes": 1}])
def test_filter_shape_is_validated(kw):
    with pytest.raises(ConfigError):
        BloomFilter(**kw)


def test_digest_array_validation():
    with pytest.raises(ValueError, match="at least 16"):
        digest_array([b"short"])
    with pytest.raises(ValueError, match="same length"):
        digest_array([bytes(32), bytes(20)])
    with pytest.raises(ValueError, match="uint8"):
        digest_array(np.zeros((2, 32), dtype=np.int64))
    assert digest_array([]).shape == (0, 16)


# ----------------------------------------------------------------------------- kernels vs reference

SIZES = [1, 2, 63, 64, 65, 127, 200, 1000, 4097]


@settings(derandomize=True, max_examples=25, deadline=None)
@given(m=st.sampled_from(SIZES), k=st.integers(1, 9), n=st.integers(0, 40), seed=st.integers(0, 2**32 - 1))
def test_kernels_match_reference(m, k, n, seed):
    rng = np.random.default_rng(seed)
    digests = rng.integers(0, 256, size=(n, 32), dtype=np.uint8)
    digests[n // 2:] = digests[: n - n // 2]  # repeats inside one batch
    a, b = hash_pair(digests, m)
    words_k = np.zeros((m + 63) // 64, dtype=np.uint64)
    words_r = words_k.copy()
    out = np.empty(n, dtype=bool)
    _screen_kernel(words_k, a, b, k, m, out)
    np.testing.assert_array_equal(out, _screen_reference(words_r, a, b, k, m))
    np.testing.assert_array_equal(words_k, words_r)
    queries = rng.integers(0, 256, size=(n, 32), dtype=np.uint8)
    qa, qb = hash_pair(queries, m)
    _query_kernel(words_k, qa, qb, k, m, out)
    np.testing.assert_array_equal(out, _query_reference(words_r, qa, qb, k, m))
    _add_kernel(words_k, qa, qb, k, m)
    _add_reference(words_r, qa, qb, k, m)
    np.testing.assert_array_equal(words_k, words_r)


def test_bit_placement_across_word_and_32_bit_boundaries():
    # regression class: `1 << 32 - 1` (= 1 << 31) and masking a bit index by a byte count
    for bit in (0, 7, 8, 31, 32, 33, 63, 64, 65, 127, 128, 199):
        f = BloomFilter(200, 1)
        f.add([digest_with(bit)])
        assert set_bits(f) == [bit]
        assert digest_with(bit) in f
        expected = np.zeros_like(f.words)
        expected[bit // 64] = np.uint64(1 << (bit % 64))
        np.testing.assert_array_equal(f.words, expected)


def test_indices_use_all_64_bits_of_the_hash():
    m = 2**40 + 3
    digests = np.random.default_rng(7).integers(0, 256, size=(200, 32), dtype=np.uint8)
    a, b = hash_pair(digests, m)
    assert a.min() >= 0 and a.max() < m and b.max() < m
    assert (a >= 2**32).mean() > 0.9  # a 32-bit truncation would give none
    idx = [i for aj, bj in zip(a[:20], b[:20], strict=True) for i in bit_indices(aj, bj, 7, m)]
    assert max(idx) < m and max(idx) > 2**39


# ----------------------------------------------------------------------------- properties


@settings(derandomize=True, max_examples=20, deadline=None)
@given(m=st.sampled_from(SIZES), k=st.integers(1, 12), n=st.integers(1, 300))
def test_no_false_negatives(m, k, n):
    f = BloomFilter(m, k)
    digests = [sha(i, "fn") for i in range(n)]
    f.add(digests[: n // 2])
    flags = f.screen(digests[n // 2:])  # the rest are inserted by the screen
    assert f.contains(digests).all()
    assert len(flags) == n - n // 2


@pytest.mark.parametrize("m", [1, 63, 64, 65, 130, 200])
def test_every_bit_is_reachable_and_padding_never_set(m):
    f = BloomFilter(m, 3)
    f.add([digest_with(bit, 5) for bit in range(m)])  # item b starts at bit b
    assert set_bits(f) == list(range(m))
    assert f.bit_count() == m  # bits >= m of the last word stay 0


def test_random_items_fill_every_bit():
    m, k = 4096, 3
    f = BloomFilter(m, k)
    f.add(np.random.default_rng(3).integers(0, 256, size=(25_000, 32), dtype=np.uint8))
    # P(some bit never hit) ~ m * exp(-k n / m) ~ 4e-5
    assert f.bit_count() == m


def test_screen_flags_second_occurrence_in_the_same_batch():
    f = BloomFilter.for_items(10, 10)
    d = [sha(1), sha(2), sha(1), sha(3), sha(2)]
    assert f.screen(d).tolist() == [False, False, True, False, True]


@pytest.mark.parametrize("b", [0.5, 1.0])
def test_measured_false_positive_rate_matches_formula(b):
    n = 20_000
    f = BloomFilter.for_items(n, b)
    rng = np.random.default_rng(11)
    f.add(rng.integers(0, 256, size=(n, 32), dtype=np.uint8))
    measured = f.contains(rng.integers(0, 256, size=(n, 32), dtype=np.uint8)).mean()
    exact = expected_fp_rate(f.num_bits, f.num_hashes, n)  # integer k
    # B = 1: p = 0.0214, exact 0.0216, measured 0.0218; B = 0.5: 0.146 / 0.147 / 0.148
    assert measured == pytest.approx(exact, rel=0.12)
    assert measured == pytest.approx(bloom_rate(b), rel=0.15)
    assert f.fill_ratio == pytest.approx(0.5, abs=0.06)  # optimal k leaves half the bits set
