"""FHK miner: its kernels against their plain twins, and mine_fhk against the oracle.

Hypothesis runs derandomized; HYPOTHESIS_PROFILE=thorough raises the example counts.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bloomspan.engine.mining import fhk, suffix_array as sx
from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.fhk import mine_fhk
from bloomspan.engine.mining.phrases import Phrase
from bloomspan.engine.oracles.naive_oracle import coverage_of, mine_naive

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
MANY = 3000 if THOROUGH else 250
FEW = 1000 if THOROUGH else 100
PROPERTY = settings(
    max_examples=MANY, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
KERNEL = settings(
    max_examples=FEW, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def corpus(docs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    return tokens, offsets


def indexed(docs, sigma=2, min_length=2, prune=False):
    """Text, suffix array, lcp and suffix documents of a corpus, as mine_fhk builds them."""
    tokens, offsets = corpus(docs)
    ranks, vocab = sx.dense_ids(tokens)
    if prune:
        ranks, vocab = sx.prune_rare_tokens(ranks, vocab, offsets, sigma)
    text = sx.build_text(ranks, offsets, min_length if prune else 1)
    sa, _, _ = sx.suffix_array(text.text)
    lcp, sdocs = sx.kasai_lcp(text.text, sa, text.seg_doc)
    return text, sa, lcp, sdocs, len(docs)


# ----------------------------------------------------------------- strategies
@st.composite
def corpora(draw, max_docs=8, max_len=14):
    """Random documents over 2..6 symbols, with planted and nested repeats."""
    alphabet = draw(st.integers(2, 6))
    symbol = st.integers(0, alphabet - 1)
    docs = draw(st.lists(st.lists(symbol, max_size=max_len), min_size=1, max_size=max_docs))
    if draw(st.booleans()):
        phrase = draw(st.lists(symbol, min_size=2, max_size=9))
        nested = phrase[draw(st.integers(0, 1)):len(phrase) - draw(st.integers(0, 1))]
        for i in range(len(docs)):
            for piece in (phrase, nested):
                for _ in range(draw(st.integers(0, 2))):  # 0, 1 or 2 copies: repeats inside a doc
                    at = draw(st.integers(0, len(docs[i])))
                    docs[i] = docs[i][:at] + list(piece) + docs[i][at:]
    return docs


def random_text(draw_list):
    """Text with separators (0) and segments of symbols >= 1, plus its segment documents."""
    text = []
    seg_doc = []
    doc = 0
    for segment, same_doc in draw_list:
        text.extend(segment)
        text.append(0)
        doc += 0 if (same_doc and seg_doc) else 1
        seg_doc.append(doc)
    return np.array(text, dtype=np.int32), np.array(seg_doc, dtype=np.int32)


segments = st.lists(
    st.tuples(st.lists(st.integers(1, 4), max_size=10), st.booleans()), min_size=1, max_size=8
)


# ----------------------------------------------------------------- suffix array & text
@KERNEL
@given(st.lists(st.integers(0, 6), max_size=40), st.sampled_from([(1, 1), (50, 2), (12_000, 3), (2**25, 4)]))
def test_suffix_array_matches_sorting_all_suffixes(values, scale_width):
    # the scale picks 1, 2, 3 or 4 bytes per symbol; the order must not depend on it
    scale, width_of_6 = scale_width
    text = np.array(values, dtype=np.int64).astype(np.int32) * np.int32(scale)
    sa, width, _ = sx.suffix_array(text)
    assert sa.dtype == np.int32
    assert sa.tolist() == sx.suffix_array_reference(text).tolist()
    if values and max(values) == 6:
        assert width == width_of_6


def test_symbol_width():
    assert [sx.symbol_width(v) for v in (0, 255, 256, 65535, 65536, 2**24 - 1, 2**24, 2**31 - 1)] == [
        1, 1, 2, 2, 3, 3, 4, 4,
    ]


@KERNEL
@given(st.lists(st.integers(0, 2**31 - 1), max_size=20), st.integers(1, 4))
def test_encode_big_endian_matches_reference(values, width):
    limit = 1 << (8 * width) if width < 4 else 1 << 31
    text = np.array([v % limit for v in values], dtype=np.int32)
    assert sx.encode_big_endian(text, width).tolist() == sx.encode_big_endian_reference(text, width).tolist()


@KERNEL
@given(st.lists(st.integers(1, 300), min_size=1, max_size=30))
def test_compact_byte_sa_matches_reference(values):
    import pydivsufsort

    text = np.array(values, dtype=np.int32)
    for width in (2, 3):
        byte_sa = pydivsufsort.divsufsort(sx.encode_big_endian(text, width))
        out = np.empty(len(values), dtype=np.int32)
        assert sx.compact_byte_sa(byte_sa, width, out) == len(values)
        assert out.tolist() == sx.compact_byte_sa_reference(byte_sa, width).tolist()


@KERNEL
@given(st.lists(st.lists(st.integers(0, 4), max_size=12), min_size=1, max_size=6), st.integers(1, 4))
def test_build_text_matches_reference(docs, min_run):
    ranks, offsets = corpus(docs)
    ranks = ranks.astype(np.int32)
    got = sx.build_text(ranks, offsets, min_run)
    want = sx.build_text_reference(ranks, offsets, min_run)
    for a, b in zip(got, want):
        assert a.tolist() == b.tolist()
        assert a.dtype == b.dtype


@KERNEL
@given(st.lists(st.lists(st.integers(1, 5), max_size=12), min_size=1, max_size=6))
def test_token_document_frequency_matches_reference(docs):
    ranks, offsets = corpus(docs)
    ranks = ranks.astype(np.int32)
    got = sx.token_document_frequency(ranks, offsets, 5)
    assert got.tolist() == sx.token_document_frequency_reference(ranks, offsets, 5).tolist()


def test_prune_rare_tokens_renumbers_kept_tokens():
    tokens, offsets = corpus([[10, 20, 30], [10, 20], [10, 40, 40]])
    ranks, vocab = sx.dense_ids(tokens)
    assert vocab.tolist() == [10, 20, 30, 40]
    pruned, kept = sx.prune_rare_tokens(ranks, vocab, offsets, 2)
    assert kept.tolist() == [10, 20]
    assert pruned.tolist() == [1, 2, 0, 1, 2, 1, 0, 0]


def test_dense_ids_large_ids_take_the_sorting_path():
    tokens = np.array([2**32 - 1, 0, 2**31, 0], dtype=np.uint32)
    ranks, vocab = sx.dense_ids(tokens)
    assert ranks.tolist() == [3, 1, 2, 1]
    assert vocab.tolist() == [0, 2**31, 2**32 - 1]


# ----------------------------------------------------------------- LCP
@KERNEL
@given(segments)
def test_kasai_lcp_matches_reference(parts):
    text, seg_doc = random_text(parts)
    sa, _, _ = sx.suffix_array(text)
    lcp, docs = sx.kasai_lcp(text, sa, seg_doc)
    want_lcp, want_docs = sx.kasai_lcp_reference(text, sa, seg_doc)
    assert lcp.tolist() == want_lcp.tolist()
    assert docs.tolist() == want_docs.tolist()


def test_kasai_lcp_stops_at_separators():
    # "1 2 | 1 2 | 1 2 3": full-suffix LCP of "1 2 | 1 2 3" and "1 2 | 1 2 ..." would be 5
    text = np.array([1, 2, 0, 1, 2, 0, 1, 2, 3, 0], dtype=np.int32)
    sa, _, _ = sx.suffix_array(text)
    lcp, docs = sx.kasai_lcp(text, sa, np.array([0, 1, 2], np.int32))
    assert lcp.max() == 2
    assert sorted(docs.tolist()) == [-1, -1, -1, 0, 0, 1, 1, 2, 2, 2]


# ----------------------------------------------------------------- traversal & maximality
@KERNEL
@given(corpora(), st.integers(2, 4), st.integers(2, 4))
def test_lowest_frequent_intervals_match_reference(docs, sigma, min_length):
    _, _, lcp, sdocs, n_docs = indexed(docs)
    lb, rb, length, df, visited = fhk.lowest_frequent_intervals(lcp, sdocs, n_docs, sigma, min_length)
    want, n_intervals = fhk.lowest_frequent_intervals_reference(lcp, sdocs, sigma, min_length)
    assert list(zip(lb.tolist(), rb.tolist(), length.tolist(), df.tolist())) == want
    assert visited == n_intervals


@KERNEL
@given(corpora(), st.integers(2, 4), st.integers(2, 4))
def test_left_maximal_matches_reference(docs, sigma, min_length):
    text, sa, lcp, sdocs, n_docs = indexed(docs)
    lb, rb, _, _, _ = fhk.lowest_frequent_intervals(lcp, sdocs, n_docs, sigma, min_length)
    got = fhk.left_maximal(text.text, sa, sdocs, lb, rb, n_docs, sigma)
    assert got.tolist() == fhk.left_maximal_reference(text.text, sa, sdocs, lb, rb, sigma).tolist()


@KERNEL
@given(corpora(), st.integers(2, 4), st.integers(2, 4))
def test_phrase_symbols_matches_reference(docs, sigma, min_length):
    text, sa, lcp, sdocs, n_docs = indexed(docs)
    lb, _, length, _, _ = fhk.lowest_frequent_intervals(lcp, sdocs, n_docs, sigma, min_length)
    symbols, starts = fhk.phrase_symbols(text.text, sa, lb, length)
    got = [symbols[a:b].tolist() for a, b in zip(starts[:-1], starts[1:])]
    assert got == fhk.phrase_symbols_reference(text.text, sa, lb, length)


# ----------------------------------------------------------------- mine_fhk == oracle
def check_against_oracle(docs, sigma, min_length, prune):
    tokens, offsets = corpus(docs)
    result = mine_fhk(tokens, offsets, MiningConfig(sigma, min_length, engine="fhk"), prune=prune)
    expected = mine_naive(tokens, offsets, sigma, min_length)
    assert result.phrases == expected  # tokens, df, occurrences and order
    assert result.coverage.dtype == np.bool_
    assert result.coverage.shape == tokens.shape
    assert result.coverage.tolist() == coverage_of(tokens, offsets, expected).tolist()
    return result


@PROPERTY
@given(corpora(), st.integers(2, 5), st.integers(2, 5), st.booleans())
def test_mine_fhk_equals_naive_oracle(docs, sigma, min_length, prune):
    check_against_oracle(docs, sigma, min_length, prune)


@KERNEL
@given(corpora(max_docs=14, max_len=24), st.integers(2, 5), st.integers(2, 5), st.booleans())
def test_mine_fhk_equals_naive_oracle_larger_documents(docs, sigma, min_length, prune):
    check_against_oracle(docs, sigma, min_length, prune)


STORE = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],  # new laptop acer swift free shipping on orders over 50 dollars
    [11, 12, 13, 14, 4, 5, 6, 7, 8, 9, 10],  # case for iphone 15 ...
    [4, 5, 6, 7, 8, 9, 10, 15, 16],  # free shipping ... sony headphones
    [15, 16, 17, 18, 4, 5],  # sony headphones wh 1000 free shipping
]


@pytest.mark.parametrize("prune", [True, False])
def test_article_examples(prune):
    config = MiningConfig(3, 2, engine="fhk")
    got = mine_fhk(*corpus(STORE), config, prune=prune).phrases
    assert got == [Phrase((4, 5, 6, 7, 8, 9, 10), df=3, occurrences=3)]
    got = mine_fhk(*corpus(STORE), MiningConfig(4, 2), prune=prune).phrases
    assert got == [Phrase((4, 5), df=4, occurrences=4)]
    A, B, C, D, X, Y = range(6)
    got = mine_fhk(*corpus([[A, B, C, D], [X, A, B, C], [A, B, C, Y]]), config, prune=prune).phrases
    assert got == [Phrase((A, B, C), df=3, occurrences=3)]


@pytest.mark.parametrize("prune", [True, False])
def test_edge_corpora(prune):
    config = MiningConfig(2, 2)
    cases = {
        "no documents": (np.zeros(0, np.uint32), np.zeros(1, np.int64)),
        "only empty documents": corpus([[], [], []]),
        "one document": corpus([[1, 2, 1, 2, 1, 2]]),
        "self-overlapping": corpus([[7, 7, 7, 7], [7, 7, 7]]),
        "boundary would join": corpus([[1, 2], [3, 4], [2, 3]]),
        "extreme ids": corpus([[0, 2**32 - 1, 5], [0, 2**32 - 1, 6], [2**32 - 1, 0]]),
    }
    for name, (tokens, offsets) in cases.items():
        result = mine_fhk(tokens, offsets, config, prune=prune)
        assert result.phrases == mine_naive(tokens, offsets, 2, 2), name
        assert result.coverage.tolist() == coverage_of(tokens, offsets, result.phrases).tolist(), name
    assert mine_fhk(*cases["extreme ids"], config, prune=prune).phrases == [
        Phrase((0, 2**32 - 1), df=2, occurrences=2)
    ]


def test_three_byte_alphabet_with_many_documents():
    # > 65,535 distinct tokens without pruning: symbols take 3 bytes in the byte-level sort.
    rng = np.random.default_rng(7)
    docs = [list(range(i * 25, i * 25 + 20)) for i in range(3600)]  # 72,000 distinct ids
    boiler = [10**6 + j for j in range(12)]
    for i in rng.choice(len(docs), 40, replace=False):
        at = int(rng.integers(0, 20))
        docs[i] = docs[i][:at] + boiler + docs[i][at:]
    tokens, offsets = corpus(docs)
    result = mine_fhk(tokens, offsets, MiningConfig(20, 10), prune=False)
    assert result.stats["symbol_bytes"] == 3
    assert result.phrases == [Phrase(tuple(boiler), df=40, occurrences=40)]
    assert result.coverage.sum() == 40 * 12
    pruned = mine_fhk(tokens, offsets, MiningConfig(20, 10), prune=True)
    assert pruned.phrases == result.phrases
    assert pruned.stats["symbol_bytes"] == 1 and pruned.stats["text_length"] == 40 * 13


def test_stats_are_json_serialisable_and_complete():
    result = mine_fhk(*corpus(STORE), MiningConfig(3, 2))
    json.dumps(result.stats)
    for key in ("seconds_suffix_array", "seconds_lcp", "seconds_traversal", "seconds_maximality",
                "seconds_coverage", "seconds_total", "intervals_visited", "peak_arrays_bytes"):
        assert key in result.stats, key
    assert result.stats["phrases"] == 1 and result.stats["candidates"] >= 1


@pytest.mark.parametrize(
    "tokens,offsets,match",
    [
        (np.array([[1, 2]], np.uint32), np.array([0, 2]), "tokens"),
        (np.array([1.0, 2.0]), np.array([0, 2]), "tokens"),
        (np.array([1, -2]), np.array([0, 2]), "tokens"),
        (np.array([1, 2], np.uint32), np.array([0, 1]), "doc_offsets"),
        (np.array([1, 2], np.uint32), np.array([1, 2]), "doc_offsets"),
        (np.array([1, 2], np.uint32), np.array([0, 2, 1, 2]), "doc_offsets"),
    ],
)
def test_rejects_malformed_corpus(tokens, offsets, match):
    with pytest.raises(ValueError, match=match):
        mine_fhk(tokens, offsets, MiningConfig(2, 2))


@KERNEL
@given(corpora(), st.integers(2, 3), st.integers(2, 4), st.booleans())
def test_interval_starts_match_their_twin(docs, sigma, min_length, prune):
    text, sa, lcp, sdocs, n_docs = indexed(docs, sigma, min_length, prune)
    c_lb, c_rb, _, _, _ = fhk.lowest_frequent_intervals(lcp, sdocs, n_docs, sigma, min_length)
    starts, bounds = fhk.interval_starts(sa, c_lb, c_rb, text.seg_text_start, text.seg_corpus_start)
    want = fhk.interval_starts_reference(sa, c_lb, c_rb, text.seg_text_start, text.seg_corpus_start)
    assert [starts[a:b].tolist() for a, b in zip(bounds[:-1], bounds[1:])] == want
