"""Word filter: exact per-token document frequency, frequent-word ranks and bitmap."""
from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from bloomspan.engine.mining import word_filter as wf

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
KERNEL = settings(max_examples=1000 if THOROUGH else 100, derandomize=True, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow])


def corpus(docs):
    tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    return tokens, offsets


@KERNEL
@given(st.lists(st.lists(st.integers(0, 9), max_size=10), max_size=8))
def test_document_frequency_matches_reference_and_definition(docs):
    tokens, offsets = corpus(docs)
    got = wf.document_frequency(tokens, offsets, 10)
    assert got.dtype == np.int64
    assert got.tolist() == wf.document_frequency_reference(tokens, offsets, 10).tolist()
    assert got.tolist() == [sum(t in d for d in docs) for t in range(10)]


@KERNEL
@given(st.lists(st.integers(0, 6), max_size=20), st.integers(1, 5))
def test_ranks_keep_order_and_send_rare_words_to_the_sentinel(df, sigma):
    df = np.array(df, dtype=np.int64)
    rank_of, n_frequent = wf.frequent_word_ranks(df, sigma)
    frequent = np.flatnonzero(df >= sigma)
    assert n_frequent == len(frequent)
    assert rank_of[frequent].tolist() == list(range(n_frequent))
    assert (rank_of[df < sigma] == n_frequent).all()


def test_ranks_and_bitmap():
    tokens, offsets = corpus([[5, 1, 5], [5, 2, 1]])
    df = wf.document_frequency(tokens, offsets)
    assert df.tolist() == [0, 2, 1, 0, 0, 2]
    rank_of, n_frequent = wf.frequent_word_ranks(df, 2)
    assert n_frequent == 2
    assert rank_of[tokens].tolist() == [1, 0, 1, 1, 2, 0]
    bits = wf.frequent_bitmap(df, 2)
    assert [wf.is_frequent(bits, t) for t in range(6)] == [False, True, False, False, False, True]


@KERNEL
@given(st.lists(st.integers(0, 3), max_size=40), st.integers(1, 3))
def test_bitmap_has_a_bit_per_id(df, sigma):
    bits = wf.frequent_bitmap(np.array(df, dtype=np.int64), sigma)
    assert bits.dtype == np.uint8 and bits.shape[0] * 8 > len(df)
    assert [wf.is_frequent(bits, t) for t in range(len(df))] == [v >= sigma for v in df]
    assert not any(wf.is_frequent(bits, t) for t in range(len(df), bits.shape[0] * 8))
    every = wf.all_frequent_bitmap(len(df))
    assert all(wf.is_frequent(every, t) for t in range(len(df)))


def test_empty_corpus():
    tokens, offsets = corpus([])
    assert wf.document_frequency(tokens, offsets).tolist() == []
