"""Counting filter: kernels against their twins, no false negatives, saturation, hashing."""
from __future__ import annotations

import os
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bloomspan.engine.mining import counting_filter as cf, word_filter as wf

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
KERNEL = settings(max_examples=1000 if THOROUGH else 100, derandomize=True, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow])

docs_strategy = st.lists(st.lists(st.integers(0, 7), max_size=12), min_size=0, max_size=6)


def bitmap(rare, vocab=16):
    """Frequent-word bitmap of ids 0..vocab-1 except those in ``rare`` (None: all frequent)."""
    if rare is None:
        return None
    return wf.frequent_bitmap(np.array([0 if t in rare else 1 for t in range(vocab)]), 1)


def corpus(docs):
    tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    return tokens, offsets


def ngram_df(docs, n):
    """{n-gram: set of documents}, n-grams inside documents only."""
    out = defaultdict(set)
    for i, d in enumerate(docs):
        for p in range(len(d) - n + 1):
            out[tuple(d[p:p + n])].add(i)
    return out


@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
@KERNEL
def test_fnv1a_matches_reference(a, b):
    with np.errstate(over="ignore"):
        assert int(cf.fnv1a_bigram(np.uint32(a), np.uint32(b))) == cf.fnv1a_bigram_reference(a, b)


def test_fnv1a_known_value():
    # FNV-1a 64 (offset basis and prime of the FNV spec), one 32-bit id per step
    h = 0xCBF29CE484222325
    for word in (1, 2):
        h = ((h ^ word) * 0x100000001B3) % 2**64
    assert cf.fnv1a_bigram_reference(1, 2) == h == 0x082F2407B4E8902A
    assert cf.fnv1a_bigram_reference(1, 2) != cf.fnv1a_bigram_reference(2, 1)


@KERNEL
@given(docs_strategy, st.integers(1, 40), st.sampled_from([None, {3}, {1, 7}]), st.sampled_from([0, 3, 4]))
def test_build_matches_reference(docs, n_cells, rare, kgram):
    tokens, offsets = corpus(docs)
    got = cf.build_counting_filter(tokens, offsets, n_cells, bitmap(rare), kgram)
    want = cf.build_counting_filter_reference(tokens, offsets, n_cells, bitmap(rare), kgram)
    assert got.dtype == np.uint8 and got.tolist() == want.tolist()


@KERNEL
@given(docs_strategy, st.integers(1, 40), st.integers(1, 4), st.sampled_from([None, {3}]), st.sampled_from([0, 3, 5]))
def test_candidates_match_reference(docs, n_cells, threshold, rare, kgram):
    tokens, offsets = corpus(docs)
    counters = cf.build_counting_filter(tokens, offsets, n_cells, bitmap(rare), kgram)
    pos, doc = cf.candidate_occurrences(tokens, offsets, counters, threshold, bitmap(rare), kgram)
    want_pos, want_doc = cf.candidate_occurrences_reference(tokens, offsets, counters, threshold, bitmap(rare), kgram)
    assert pos.dtype == np.int64 and doc.dtype == np.int32
    assert pos.tolist() == want_pos.tolist() and doc.tolist() == want_doc.tolist()


@KERNEL
@given(docs_strategy, st.integers(1, 64), st.integers(2, 6), st.sampled_from([0, 3, 4]))
def test_no_false_negatives(docs, n_cells, sigma, kgram):
    """Every occurrence of a key (the kgram-window if kgram >= 3, else the bigram) with
    df >= sigma is a candidate, however small the table."""
    tokens, offsets = corpus(docs)
    counters = cf.build_counting_filter(tokens, offsets, n_cells, None, kgram)
    pos, _ = cf.candidate_occurrences(tokens, offsets, counters, cf.filter_threshold(sigma), None, kgram)
    got = set(pos.tolist())
    n = kgram if kgram >= 3 else 2
    key_df = ngram_df(docs, n)
    base = 0
    for d in docs:
        for p in range(len(d) - n + 1):
            if len(key_df[tuple(d[p:p + n])]) >= sigma:
                assert base + p in got
        base += len(d)


def test_windows_must_fit_in_the_document():
    # "a b c" x3: with kgram=3 only the window starting at "a" fits in each document, and
    # "b c" (no window) is not even counted
    tokens, offsets = corpus([[0, 1, 2]] * 3)
    counters = cf.build_counting_filter(tokens, offsets, 64, None, 3)
    pos, _ = cf.candidate_occurrences(tokens, offsets, counters, 3, None, 3)
    assert pos.tolist() == [0, 3, 6]
    assert counters.sum() == 3  # three windows "a b c"; with windows on, bigrams are not keys
    counters = cf.build_counting_filter(tokens, offsets, 64)
    pos, _ = cf.candidate_occurrences(tokens, offsets, counters, 3)
    assert pos.tolist() == [0, 1, 3, 4, 6, 7]


def test_counters_saturate_at_255():
    tokens, offsets = corpus([[1, 2]] * 300)
    counters = cf.build_counting_filter(tokens, offsets, 1)
    assert counters.tolist() == [255]


def test_sigma_above_255_keeps_frequent_bigrams():
    # The regression: comparing a saturated counter (255) with sigma=300 drops the bigram.
    tokens, offsets = corpus([[1, 2]] * 300)
    counters = cf.build_counting_filter(tokens, offsets, 16)
    assert cf.filter_threshold(300) == 255
    pos, _ = cf.candidate_occurrences(tokens, offsets, counters, cf.filter_threshold(300))
    assert len(pos) == 300
    pos, _ = cf.candidate_occurrences(tokens, offsets, counters, 300)
    assert len(pos) == 0  # what the unsaturated comparison would have done


def test_bigrams_never_cross_documents():
    tokens, offsets = corpus([[1], [2], [1, 2]])
    counters = cf.build_counting_filter(tokens, offsets, 1)
    assert counters.tolist() == [1]


def test_rare_words_are_not_counted():
    tokens, offsets = corpus([[1, 20, 2], [1, 2]])
    counters = cf.build_counting_filter(tokens, offsets, 1, bitmap({20}, vocab=21))
    assert counters.tolist() == [1]
    with pytest.raises(ValueError, match="bitmap"):  # no bit for id 20
        cf.build_counting_filter(tokens, offsets, 1, bitmap(set(), vocab=8))


@pytest.mark.parametrize("n_cells", [1, 2, 3, 7, 16, 64, 1000])
def test_every_cell_is_reachable(n_cells):
    pairs = np.array([(a, b) for a in range(200) for b in range(200)], dtype=np.uint32)
    tokens = pairs.reshape(-1)
    offsets = np.arange(0, tokens.size + 1, 2, dtype=np.int64)
    counters = cf.build_counting_filter(tokens, offsets, n_cells)
    assert (counters > 0).all()


def test_false_positive_rate_matches_the_formula():
    """n distinct bigrams, each once, in m cells: a bigram that was never inserted finds a
    non-zero cell with probability 1 - (1 - 1/m)**n (a single hash function)."""
    rng = np.random.default_rng(7)
    m, n = 20_000, 10_000
    ids = rng.choice(2**20, size=2 * (n + 5000), replace=False).astype(np.uint32)
    inserted, probes = ids[:2 * n], ids[2 * n:]
    offsets = np.arange(0, 2 * n + 1, 2, dtype=np.int64)
    counters = cf.build_counting_filter(inserted, offsets, m)
    pos, _ = cf.candidate_occurrences(probes, np.arange(0, probes.size + 1, 2, dtype=np.int64), counters, 1)
    measured = len(pos) / (probes.size // 2)
    expected = 1 - (1 - 1 / m) ** n
    assert abs(measured - expected) < 0.03, (measured, expected)


@pytest.mark.parametrize("varied", [0, 4, 9])
def test_window_false_positive_rate_matches_the_formula_for_windows_one_token_apart(varied):
    """Windows that share all tokens but the one at ``varied`` (the last one is added to the
    polynomial with coefficient 1, so the hash's high bits alone barely see it): n of them
    in m cells, a window never inserted finds a non-zero cell with probability
    1 - (1 - 1/m)**n, as for random keys. The cell's Fibonacci multiply is what spreads them."""
    k, m, n, n_probes = 10, 20_000, 10_000, 5_000
    rng = np.random.default_rng(11)
    prefix = rng.integers(0, 2**20, size=k).astype(np.uint32)
    values = rng.choice(2**20, size=n + n_probes, replace=False).astype(np.uint32)
    windows = np.tile(prefix, (n + n_probes, 1))
    windows[:, varied] = values
    offsets = np.arange(0, n * k + 1, k, dtype=np.int64)
    counters = cf.build_counting_filter(windows[:n].reshape(-1), offsets, m, None, k)
    assert np.count_nonzero(counters) > 0.95 * m * (1 - (1 - 1 / m) ** n)
    probes = windows[n:].reshape(-1)
    pos, _ = cf.candidate_occurrences(probes, np.arange(0, probes.size + 1, k, dtype=np.int64), counters, 1,
                                      None, k)
    measured = len(pos) / n_probes
    expected = 1 - (1 - 1 / m) ** n
    assert abs(measured - expected) < 0.03, (measured, expected)


def test_fill_ratio():
    assert cf.fill_ratio(np.array([0, 3, 0, 1], dtype=np.uint8)) == 0.5
    assert cf.fill_ratio(np.zeros(0, dtype=np.uint8)) == 0.0


def test_kgram_hash_reference_is_a_rolling_polynomial():
    # the kernel's rolling update must equal hashing each window from scratch
    tokens, offsets = corpus([[3, 1, 4, 1, 5, 9, 2, 6]])
    counters = cf.build_counting_filter(tokens, offsets, 997, None, 4)
    want = [0] * 997
    for p in range(5):  # the positions whose 4-window fits
        want[cf.cell_of_reference(cf.kgram_hash_reference(tokens[p:p + 4].tolist()), 997)] += 1
    assert counters.tolist() == want


def random_corpus(seed, n_docs, vocab, max_len=60):
    rng = np.random.default_rng(seed)
    lens = rng.integers(0, max_len, size=n_docs)
    tokens = rng.zipf(1.3, size=int(lens.sum())).clip(1, vocab - 1).astype(np.uint32)
    return tokens, np.concatenate(([0], np.cumsum(lens))).astype(np.int64)


@pytest.mark.parametrize("kgram", [0, 3, 5])
def test_partitioned_build_equals_direct_build(monkeypatch, kgram):
    """A table above DIRECT_MAX_CELLS is built region by region, in chunks of documents;
    the counters must be exactly those of the one-pass build (saturating sums commute)."""
    tokens, offsets = random_corpus(3, 4000, 6)
    n_cells = 5000
    direct = cf.build_counting_filter(tokens, offsets, n_cells, None, kgram)
    monkeypatch.setattr(cf, "DIRECT_MAX_CELLS", 64)
    monkeypatch.setattr(cf, "REGION_CELLS", 256)
    monkeypatch.setattr(cf, "BUILD_CHUNK_TOKENS", (1000, 1000))
    assert cf.region_layout(n_cells) == (8, 20)
    partitioned = cf.build_counting_filter(tokens, offsets, n_cells, None, kgram)
    assert partitioned.tolist() == direct.tolist()
    assert (direct == 255).any() and (direct == 0).any()  # saturation and empty cells both exercised


def test_region_layout_caps_the_number_of_regions(monkeypatch):
    assert cf.region_layout(cf.DIRECT_MAX_CELLS) == (0, 1)
    shift, n = cf.region_layout(10**10)
    assert n <= cf.MAX_REGIONS and n << shift >= 10**10 and (n - 1) << shift < 10**10


@pytest.mark.parametrize("kgram", [0, 3, 4])
def test_candidates_on_a_larger_corpus_match_reference(kgram):
    """Documents of very different lengths (the query's buffers are sized by the longest)."""
    tokens, offsets = random_corpus(5, 300, 12, max_len=30)
    tokens = np.concatenate([tokens, np.tile(tokens[:20], 40)])
    offsets = np.concatenate([offsets, [tokens.shape[0]]])
    counters = cf.build_counting_filter(tokens, offsets, 64, None, kgram)
    got = cf.candidate_occurrences(tokens, offsets, counters, 20, None, kgram)
    want = cf.candidate_occurrences_reference(tokens, offsets, counters, 20, None, kgram)
    assert len(got[0]) > 0
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()


@KERNEL
@given(docs_strategy, st.sampled_from([None, {3}, {1, 7}]), st.sampled_from([0, 3, 4]))
def test_count_keys_matches_reference_and_the_filter(docs, rare, kgram):
    tokens, offsets = corpus(docs)
    n = cf.count_keys(tokens, offsets, bitmap(rare), kgram)
    assert n == cf.count_keys_reference(tokens, offsets, bitmap(rare), kgram)
    counters = cf.build_counting_filter(tokens, offsets, 1, bitmap(rare), kgram)
    assert int(counters[0]) == min(n, 255)  # one cell: it counts every key once


@pytest.mark.parametrize("kgram", [0, 3, 10])
def test_estimate_keys_is_exact_on_small_corpora_and_close_on_large(monkeypatch, kgram):
    tokens, offsets = random_corpus(11, 3000, 40, max_len=80)
    exact = cf.count_keys(tokens, offsets, None, kgram)
    assert cf.estimate_keys(tokens, offsets, None, kgram) == exact
    monkeypatch.setattr(cf, "KEY_SAMPLE_CHUNK_TOKENS", 500)
    estimate = cf.estimate_keys(tokens, offsets, None, kgram, sample_every=4)
    assert estimate != exact and abs(estimate - exact) < 0.1 * exact


@KERNEL
@given(st.lists(st.integers(0, 255), max_size=40), st.integers(1, 255))
def test_hot_bitmap_matches_reference(cells, threshold):
    counters = np.array(cells, dtype=np.uint8)
    assert cf.hot_bitmap(counters, threshold).tolist() == cf.hot_bitmap_reference(counters, threshold).tolist()


def test_rejects_kgram_one_or_two():
    with pytest.raises(ValueError, match="kgram=2"):
        cf.build_counting_filter(np.zeros(2, np.uint32), np.array([0, 2]), 4, None, 2)


@given(st.integers(0, 2**64 - 1), st.sampled_from([1, 2, 3, 1000, 2**32 - 1, 2**32, 2**40 + 3]))
@KERNEL
def test_cell_of_matches_reference_and_stays_in_range(h, n_cells):
    with np.errstate(over="ignore"):  # JIT-less runs do the wrapping multiply in numpy
        c = int(cf.cell_of(np.uint64(h), n_cells))
    assert c == cf.cell_of_reference(h, n_cells) and 0 <= c < n_cells


def test_rejects_empty_table():
    with pytest.raises(ValueError, match="n_cells=0"):
        cf.build_counting_filter(np.zeros(2, np.uint32), np.array([0, 2]), 0)


@pytest.mark.parametrize("kgram", [0, 3, 5])
@pytest.mark.parametrize("chunk_tokens", [64, 1000, 10**6])
def test_partitioned_query_matches_reference(monkeypatch, kgram, chunk_tokens):
    """A hot bitmap larger than HOT_REGION_BYTES is tested region by region, in chunks of
    documents, with the hits read back from a bit array; positions and documents must be
    those of the reference, ascending, whatever the chunking (one chunk, many, a document
    longer than a chunk)."""
    tokens, offsets = random_corpus(7, 3000, 200, max_len=40)
    tokens = np.concatenate([tokens, np.tile(tokens[:25], 20)])  # one long document
    offsets = np.concatenate([offsets, [tokens.shape[0]]])
    n_cells = 6000
    counters = cf.build_counting_filter(tokens, offsets, n_cells, None, kgram)
    want = cf.candidate_occurrences_reference(tokens, offsets, counters, 3, None, kgram)
    monkeypatch.setattr(cf, "HOT_REGION_BYTES", 32)
    monkeypatch.setattr(cf, "HOT_ANY_MAX_BYTES", 0)  # as if the hot cells were too many for the small bitmap
    monkeypatch.setattr(cf, "QUERY_CHUNK_TOKENS", (chunk_tokens, chunk_tokens))
    assert cf.query_layout(n_cells, 100) == (8, 24, min(chunk_tokens, max(chunk_tokens, n_cells // 8)), 0)
    pos, doc = cf.candidate_occurrences(tokens, offsets, counters, 3, None, kgram)
    assert 0 < len(want[0]) < cf.count_keys(tokens, offsets, None, kgram)  # some keys pass, not all
    assert pos.tolist() == want[0].tolist() and doc.tolist() == want[1].tolist()


@pytest.mark.parametrize("kgram", [0, 3])
def test_sparse_hot_cells_query_matches_reference(monkeypatch, kgram):
    """Few hot cells: the small bitmap is tested first; it must never hide a candidate."""
    tokens, offsets = random_corpus(9, 2000, 300, max_len=40)
    n_cells = 20000
    counters = cf.build_counting_filter(tokens, offsets, n_cells, None, kgram)
    want = cf.candidate_occurrences_reference(tokens, offsets, counters, 4, None, kgram)
    monkeypatch.setattr(cf, "HOT_REGION_BYTES", 32)
    n_hot = int((counters >= 4).sum())
    shift, n_regions, _, any_bits = cf.query_layout(n_cells, n_hot)
    assert (shift, n_regions) == (0, 1) and any_bits >= cf.HOT_ANY_BITS_PER_HOT * n_hot
    pos, doc = cf.candidate_occurrences(tokens, offsets, counters, 4, None, kgram)
    assert 0 < len(want[0]) < cf.count_keys(tokens, offsets, None, kgram)
    assert pos.tolist() == want[0].tolist() and doc.tolist() == want[1].tolist()


@KERNEL
@given(st.lists(st.integers(0, 255), max_size=80), st.sampled_from([8, 16, 64]))
def test_hot_any_bitmap_matches_reference(hot_bytes, n_bits):
    hot = np.array(hot_bytes, dtype=np.uint8)
    assert cf.hot_any_bitmap(hot, n_bits).tolist() == cf.hot_any_bitmap_reference(hot, n_bits).tolist()
    assert cf._count_set_bits(hot) == int(np.unpackbits(hot).sum())


def test_query_layout_tests_small_bitmaps_directly():
    assert cf.query_layout(8 * cf.HOT_REGION_BYTES) == (0, 1, cf.QUERY_CHUNK_TOKENS[0], 0)
    assert cf.query_layout(10**9, 1000)[3] == 1 << 16
    shift, n, chunk, any_bits = cf.query_layout(10**10, 10**7)
    assert any_bits == 0 and n << shift >= 10**10 and (n - 1) << shift < 10**10
    assert cf.QUERY_CHUNK_TOKENS[0] <= chunk <= cf.QUERY_CHUNK_TOKENS[1]


@KERNEL
@given(st.integers(1, 2**64 - 1))
def test_lowest_bit_matches_reference(word):
    with np.errstate(over="ignore"):
        got = int(cf._lowest_bit(np.uint64(word)))
    assert got == (word & -word).bit_length() - 1
