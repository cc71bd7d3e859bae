"""Every engine returns each phrase's occurrences (``Phrase.starts``) and they agree.

BloomSpan, FHK (pruned and textbook) and the brute force find the same start positions for
the same phrase; each start holds the phrase; their documents (``documents_of``) are the df
documents. Publication builds the phrase bitmaps from these, so a wrong start would publish
a wrong bitmap.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bloomspan.engine.mining.bloomspan import mine_bloomspan
from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.corpus import validate_corpus
from bloomspan.engine.mining.fhk import mine_fhk
from bloomspan.engine.mining.phrases import Phrase, documents_of, documents_of_reference
from bloomspan.engine.oracles.naive_oracle import mine_naive

PROPERTY = settings(max_examples=200, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def corpus(docs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    return tokens, offsets


@st.composite
def corpora(draw):
    """Small alphabets with a planted phrase copied 0-2 times into each document (repeats
    inside a document, at its start or end), empty documents allowed."""
    alphabet = draw(st.integers(2, 5))
    symbol = st.integers(0, alphabet - 1)
    docs = draw(st.lists(st.lists(symbol, max_size=12), min_size=2, max_size=9))
    phrase = draw(st.lists(symbol, min_size=2, max_size=8))
    for i in range(len(docs)):
        for _ in range(draw(st.integers(0, 2))):
            at = draw(st.integers(0, len(docs[i])))
            docs[i] = docs[i][:at] + phrase + docs[i][at:]
    return docs


def starts_by_phrase(phrases: list[Phrase]) -> dict[tuple[int, ...], list[int]]:
    return {p.tokens: p.starts.tolist() for p in phrases}


@PROPERTY
@given(corpora(), st.integers(2, 4), st.integers(2, 4))
def test_engines_return_the_same_starts_and_they_hold_the_phrase(docs, sigma, min_length):
    tokens, offsets = corpus(docs)
    config = MiningConfig(sigma=sigma, min_length=min_length, filter_bytes=8)
    want = mine_naive(tokens, offsets, sigma, min_length)
    engines = {"bloomspan": mine_bloomspan(tokens, offsets, config).phrases,
               "fhk": mine_fhk(tokens, offsets, config).phrases,
               "fhk_unpruned": mine_fhk(tokens, offsets, config, prune=False).phrases}
    for name, got in engines.items():
        assert got == want, name
        assert starts_by_phrase(got) == starts_by_phrase(want), name
    for p in want:
        s = p.starts
        assert s.dtype == np.int64 and s.shape == (p.occurrences,)
        assert np.all(np.diff(s) > 0)
        for at in s.tolist():
            assert tuple(tokens[at:at + p.length].tolist()) == p.tokens
        docs_of_p = documents_of(s, offsets)
        assert docs_of_p.shape == (p.df,)
        assert all(offsets[d] <= a and a + p.length <= offsets[d + 1]
                   for a, d in zip(s.tolist(), np.searchsorted(offsets, s, side="right") - 1))


@settings(max_examples=150, derandomize=True, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=10), st.data())
def test_documents_of_matches_its_twin(lengths, data):
    offsets = np.cumsum([0] + lengths).astype(np.int64)
    n = int(offsets[-1])
    starts = np.array(sorted(data.draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n))) if n else [],
                      dtype=np.int64)
    assert documents_of(starts, offsets).tolist() == documents_of_reference(starts, offsets).tolist()


def test_documents_of_skips_empty_documents_and_counts_repeats_once():
    offsets = np.array([0, 3, 3, 3, 7], dtype=np.int64)  # documents 1 and 2 are empty
    assert documents_of(np.array([0, 2, 3, 5], dtype=np.int64), offsets).tolist() == [0, 3]
    assert documents_of(np.zeros(0, dtype=np.int64), offsets).tolist() == []


def test_the_starts_do_not_change_phrase_equality():
    a = Phrase((1, 2), 2, 2, np.array([0, 5], dtype=np.int64))
    assert a == Phrase((1, 2), 2, 2) and hash(a) == hash(Phrase((1, 2), 2, 2))


@pytest.mark.parametrize("tokens, offsets, message", [
    (np.zeros((2, 2), np.uint32), [0, 4], "1-D"),
    (np.array([1.5]), [0, 1], "uint32"),
    (np.array([-1]), [0, 1], "2\\*\\*32"),
    (np.array([1, 2], np.uint32), [0, 1], "end at len"),
    (np.array([1, 2], np.uint32), [1, 2], "start at 0"),
    (np.array([1, 2], np.uint32), [0, 2, 1, 2], "never decrease"),
])
def test_every_engine_rejects_a_malformed_corpus_with_the_same_message(tokens, offsets, message):
    with pytest.raises(ValueError, match=message) as direct:
        validate_corpus(tokens, offsets)
    config = MiningConfig(2, 2)
    for mine in (lambda: mine_bloomspan(tokens, offsets, config), lambda: mine_fhk(tokens, offsets, config),
                 lambda: mine_naive(tokens, offsets, 2, 2)):
        with pytest.raises(ValueError) as got:
            mine()
        assert str(got.value) == str(direct.value)
