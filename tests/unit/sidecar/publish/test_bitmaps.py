"""Roaring bitmaps: coverage round trips, members; the scan reference of the phrase document
sets (bench/scan_publication.py) against its naive twin."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from pyroaring import BitMap

from bench.scan_publication import naive_phrase_documents, scan_phrase_documents
from bloomspan.sidecar.publish.bitmaps import (
    bitmap_from_array,
    coverage_bitmaps,
    coverage_from_bitmaps,
    decode_bitmap,
    encode_bitmap,
)

corpora = st.lists(st.lists(st.integers(0, 3), max_size=25), min_size=1, max_size=12)
phrase_lists = st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=4).map(tuple), min_size=1, max_size=6,
                        unique=True)


@settings(derandomize=True, max_examples=150, deadline=None)
@given(corpora, phrase_lists, st.integers(1, 40))
def test_phrase_documents_match_naive_scan(docs, phrases, block):
    tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
    off = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    got_docs, got_occ = scan_phrase_documents(tokens, off, phrases, block_tokens=block)
    want_docs, want_occ = naive_phrase_documents(tokens, off, phrases)
    assert [d.tolist() for d in got_docs] == [d.tolist() for d in want_docs]
    assert got_occ.tolist() == want_occ.tolist()


def test_phrase_documents_counts_overlapping_repeats_once_per_document():
    tokens = np.array([1, 1, 1, 1, 2, 1, 1], dtype=np.uint32)
    off = np.array([0, 4, 7], dtype=np.int64)
    docs, occ = scan_phrase_documents(tokens, off, [(1, 1)])
    assert docs[0].tolist() == [0, 1] and occ.tolist() == [4]  # 3 in doc 0, 1 in doc 1


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(st.booleans(), max_size=300), st.sampled_from([None, 1, 7, 64]))
def test_coverage_round_trip(mask, chunk):
    cov = np.array(mask, dtype=bool)
    bms = coverage_bitmaps(cov, chunk)
    if chunk is not None and cov.size:
        assert len(bms) == -(-cov.size // chunk)
        assert all(bm.max() < chunk for bm in bms if len(bm))
    assert np.array_equal(coverage_from_bitmaps(bms, cov.size, chunk), cov)
    assert sum(len(b) for b in bms) == int(cov.sum())


def test_encode_decode_portable_format():
    bm = bitmap_from_array(np.array([7, 3, 2**31 + 5, 3]))
    data = encode_bitmap(bm)
    assert decode_bitmap(data) == BitMap([3, 7, 2**31 + 5])
    assert BitMap.deserialize(__import__("base64").b64decode(data)) == bm  # plain portable roaring


def test_bitmap_members_must_be_32_bit():
    with pytest.raises(ValueError, match="2\\*\\*32"):
        bitmap_from_array(np.array([2**32]))
    with pytest.raises(ValueError, match="2\\*\\*32"):
        bitmap_from_array(np.array([-1]))
