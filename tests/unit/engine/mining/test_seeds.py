"""Seeds: grouping kernel against the packed-key sort, exact df, psi order."""
from __future__ import annotations

import os
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bloomspan.engine.mining import counting_filter as cf
from bloomspan.engine.mining.seeds import gather_seeds, gather_seeds_reference

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
KERNEL = settings(max_examples=1000 if THOROUGH else 150, derandomize=True, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow])


IDENTITY = np.arange(100, dtype=np.uint32)  # rank_of when every word is frequent


def corpus(docs):
    tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    return tokens, offsets


def candidates(docs, n_cells, threshold):
    tokens, offsets = corpus(docs)
    counters = cf.build_counting_filter(tokens, offsets, n_cells)
    pos, doc = cf.candidate_occurrences(tokens, offsets, counters, threshold)
    return tokens, pos, doc


def seed_table(seeds):
    return [(int(k), int(df), seeds.pos[lo:hi].tolist(), seeds.doc[lo:hi].tolist())
            for k, df, lo, hi in zip(seeds.keys, seeds.df, seeds.lo, seeds.hi)]


docs_strategy = st.lists(st.lists(st.integers(0, 5), max_size=12), max_size=8)


@KERNEL
@given(docs_strategy, st.integers(1, 12), st.integers(2, 4))
def test_kernel_matches_packed_key_sort(docs, n_cells, sigma):
    tokens, pos, doc = candidates(docs, n_cells, cf.filter_threshold(sigma))
    got = gather_seeds(tokens, IDENTITY, pos, doc, sigma, 6)
    want = gather_seeds_reference(tokens, IDENTITY, pos, doc, sigma, 6)
    assert seed_table(got) == seed_table(want)
    assert (got.n_candidate_bigrams, got.n_false_positives) == (want.n_candidate_bigrams, want.n_false_positives)


@KERNEL
@given(docs_strategy, st.integers(1, 12), st.integers(2, 4))
def test_seeds_are_exactly_the_frequent_bigrams(docs, n_cells, sigma):
    tokens, pos, doc = candidates(docs, n_cells, cf.filter_threshold(sigma))
    seeds = gather_seeds(tokens, IDENTITY, pos, doc, sigma, 6)
    occ, docs_of = defaultdict(list), defaultdict(set)
    base = 0
    for i, d in enumerate(docs):
        for p in range(len(d) - 1):
            occ[(d[p], d[p + 1])].append(base + p)
            docs_of[(d[p], d[p + 1])].add(i)
        base += len(d)
    frequent = {b: len(s) for b, s in docs_of.items() if len(s) >= sigma}
    table = seed_table(seeds)
    assert {((k >> 32), k & 0xFFFFFFFF): df for k, df, _, _ in table} == frequent
    for k, _, positions, _ in table:
        assert positions == occ[(k >> 32, k & 0xFFFFFFFF)]  # all occurrences, ascending
    # psi order: df descending, then key ascending
    assert [(-df, k) for k, df, _, _ in table] == sorted((-df, k) for k, df, _, _ in table)
    assert seeds.n_candidate_bigrams - seeds.n_false_positives == seeds.n_seeds


def test_false_positives_are_dropped():
    # one cell: every bigram is a candidate; only "1 2" (three documents) is a seed
    tokens, pos, doc = candidates([[1, 2, 3], [1, 2], [3, 1, 2, 1, 2]], 1, 3)
    seeds = gather_seeds(tokens, IDENTITY, pos, doc, 3, 4)
    assert seeds.keys.tolist() == [(1 << 32) | 2]
    assert seeds.df.tolist() == [3]
    assert seeds.pos[seeds.lo[0]:seeds.hi[0]].tolist() == [0, 3, 6, 8]
    assert (seeds.n_candidate_bigrams, seeds.n_false_positives, seeds.n_seed_occurrences) == (4, 3, 4)


def test_keys_are_token_ids_and_buckets_are_ranks():
    # ids 9 and 70 are the frequent words of rank 0 and 1
    tokens = np.array([9, 70, 9, 70, 70, 9, 70, 9], dtype=np.uint32)
    rank_of = np.full(71, 2, dtype=np.uint32)
    rank_of[9], rank_of[70] = 0, 1
    pos = np.array([0, 2, 4, 6], dtype=np.int64)
    doc = np.array([0, 1, 2, 3], dtype=np.int32)
    seeds = gather_seeds(tokens, rank_of, pos, doc, 2, 2)
    assert seeds.keys.tolist() == [(9 << 32) | 70, (70 << 32) | 9]
    assert seeds.df.tolist() == [2, 2]


def test_checks_arrays():
    t = np.zeros(3, np.uint32)
    t[0] = 5
    with pytest.raises(ValueError, match="every token id"):
        gather_seeds(t, np.zeros(5, np.uint32), np.zeros(0, np.int64), np.zeros(0, np.int32), 2, 1)
    with pytest.raises(ValueError, match="int64 and int32"):
        gather_seeds(t, IDENTITY, np.zeros(1, np.int32), np.zeros(1, np.int32), 2, 1)



SPARSE_IDS = np.array([0, 7, 4099, 2**20 + 3, 2**22 - 1, 2**22], dtype=np.uint32)
SPARSE_RANK_OF = np.full(2**22 + 1, 6, dtype=np.uint32)  # rank of each frequent id, 6 (rare) elsewhere
SPARSE_RANK_OF[SPARSE_IDS] = np.arange(6, dtype=np.uint32)


@KERNEL
@given(docs_strategy, st.integers(1, 12), st.integers(2, 4))
def test_kernel_matches_packed_key_sort_with_sparse_ids(docs, n_cells, sigma):
    # ids far apart: the table is keyed by the packed ids, not the ranks; its group order (the
    # layout of pos, false positives' groups included) must still be the packed-key sort's
    tokens, pos, doc = candidates(docs, n_cells, cf.filter_threshold(sigma))
    tokens = SPARSE_IDS[tokens]
    got = gather_seeds(tokens, SPARSE_RANK_OF, pos, doc, sigma, 6)
    want = gather_seeds_reference(tokens, SPARSE_RANK_OF, pos, doc, sigma, 6)
    assert seed_table(got) == seed_table(want)
    assert got.pos.tolist() == want.pos.tolist() and got.doc.tolist() == want.doc.tolist()


def test_the_largest_id_must_leave_the_empty_key_free():
    # two ids of 2**32 - 1 would pack into the table's free-slot marker
    t = np.array([2**32 - 1, 2**32 - 1], dtype=np.uint32)
    with pytest.raises(ValueError, match="ids must be < 2\\*\\*32 - 1"):
        gather_seeds(t, IDENTITY, np.zeros(1, np.int64), np.zeros(1, np.int32), 2, 1, max_id=2**32 - 1)
