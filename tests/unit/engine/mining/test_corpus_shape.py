"""Corpus shape: the LZ78 kernel against the corpora package's parse, and the sample."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.corpora import lz78_parse
from bloomspan.engine.mining import corpus_shape as cs


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=300))
def test_lz78_kernel_matches_the_reference_parse(tokens):
    arr = np.array(tokens, dtype=np.uint32)
    assert cs.lz78_phrases(arr) == lz78_parse(tokens).phrases


def test_lz78_known_values():
    # a | b | a a | b a | b b | a (last, incomplete) -> 6 phrases
    assert cs.lz78_phrases(np.array([0, 1, 0, 0, 1, 0, 1, 1, 0], dtype=np.uint32)) == 6
    assert cs.lz78_phrases(np.arange(1000, dtype=np.uint32)) == 1000  # nothing repeats: c/n = 1
    assert cs.lz78_phrases(np.zeros(0, dtype=np.uint32)) == 0


def test_sample_is_the_whole_small_corpus_and_evenly_spread_otherwise(monkeypatch):
    tokens = np.arange(100, dtype=np.uint32)
    assert cs.shape_sample(tokens) is tokens
    monkeypatch.setattr(cs, "SAMPLE_TOKENS", 20)
    monkeypatch.setattr(cs, "SAMPLE_WINDOWS", 4)
    sample = cs.shape_sample(tokens)
    assert sample.tolist() == [0, 1, 2, 3, 4, 31, 32, 33, 34, 35, 63, 64, 65, 66, 67, 95, 96, 97, 98, 99]


@pytest.mark.parametrize("repeats, low", [(False, False), (True, True)])
def test_corpus_shape_tells_repeats_from_fresh_text(repeats, low):
    rng = np.random.default_rng(2)
    if repeats:
        tokens = np.tile(rng.integers(0, 50, size=200), 2000).astype(np.uint32)
    else:
        tokens = rng.integers(0, 2**31, size=100_000).astype(np.uint32)
    offsets = np.arange(0, tokens.size + 1, 1000, dtype=np.int64)
    shape = cs.corpus_shape(tokens, offsets)
    assert shape.tokens == tokens.size and shape.docs == offsets.size - 1
    assert (shape.cn < 0.1) if low else (shape.cn > 0.95)
