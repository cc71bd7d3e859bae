"""Window coverage equals its definition: tokens inside an occurrence of some run of exactly
min_length tokens that occurs in >= sigma documents (brute force), computed from the mined phrases."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from bloomspan.engine.mining.bloomspan import mine_bloomspan
from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.phrases import Phrase
from bloomspan.engine.mining.window_coverage import phrase_windows, window_coverage, window_coverage_reference


def _corpus(docs):
    tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    return tokens, offsets


def _by_definition(docs, sigma, length):
    df = {}
    for doc in docs:
        for g in {tuple(doc[i:i + length]) for i in range(len(doc) - length + 1)}:
            df[g] = df.get(g, 0) + 1
    frequent = {g for g, n in df.items() if n >= sigma}
    out = []
    for doc in docs:
        mask = [False] * len(doc)
        for i in range(len(doc) - length + 1):
            if tuple(doc[i:i + length]) in frequent:
                mask[i:i + length] = [True] * length
        out.extend(mask)
    return np.array(out, dtype=bool)


def test_variable_part_after_a_template_is_still_covered():
    # "h o m e" + category: maximal phrases are "h o m e a" (df 3) and "h o m e b" (df 3); the
    # occurrence before the rare "z" is inside no maximal phrase, but inside the window "h o m e".
    H = [1, 2, 3, 4]
    docs = [H + [10], H + [10], H + [10], H + [11], H + [11], H + [11], [7] + H + [99]]
    tokens, offsets = _corpus(docs)
    result = mine_bloomspan(tokens, offsets, MiningConfig(sigma=3, min_length=4))
    assert not result.coverage[offsets[6] + 1]
    cov = window_coverage(tokens, offsets, result.phrases, 4)
    assert cov[offsets[6] + 1: offsets[6] + 5].all() and not cov[offsets[6]] and not cov[offsets[6] + 5]
    assert (cov >= result.coverage).all()


@settings(max_examples=150, derandomize=True, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), max_size=14), min_size=1, max_size=9),
       st.integers(2, 4), st.integers(2, 4))
def test_equals_definition_and_reference(docs, sigma, length):
    tokens, offsets = _corpus(docs)
    result = mine_bloomspan(tokens, offsets, MiningConfig(sigma=sigma, min_length=length))
    got = window_coverage(tokens, offsets, result.phrases, length)
    assert np.array_equal(got, _by_definition(docs, sigma, length))
    assert np.array_equal(got, window_coverage_reference(tokens, offsets, result.phrases, length))
    assert (got >= result.coverage).all()


def test_windows_are_distinct_and_sorted():
    phrases = [Phrase((1, 2, 3, 1, 2), 3, 3), Phrase((2, 3, 1), 4, 4)]
    w = phrase_windows(phrases, 2)
    assert w.tolist() == [[1, 2], [2, 3], [3, 1]]
    assert phrase_windows([], 3).shape == (0, 3)


def test_empty_inputs():
    tokens, offsets = _corpus([[], [1, 2]])
    assert window_coverage(tokens, offsets, [], 2).tolist() == [False, False]
