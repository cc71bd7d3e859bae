"""Sharded growth: the union of the growth shards' phrases is the whole corpus' answer, with
the same df, occurrences and coverage, for any number of document and growth shards."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from bloomspan.engine.distributed.sharded_growth import (
    NO_LEFT,
    concat_fragments,
    fragments_for,
    fragments_for_reference,
    grow_fragments,
    growth_shard_of,
    left_maximal,
    left_maximal_reference,
    routing_k,
    routing_keys,
    routing_keys_reference,
)
from bloomspan.engine.distributed.windows import (
    distinct_document_counts,
    frequent_segments,
    is_member,
    string_hashes,
    sum_by_key,
    window_hashes,
)
from bloomspan.engine.mining.bloomspan import mine_bloomspan
from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.coverage import coverage_mask
from bloomspan.engine.mining.phrases import Phrase, sort_phrases
from bloomspan.engine.oracles.naive_oracle import mine_naive
from tests.support.planted_corpora import corpus_of, nested_phrases, planted_corpus


def _sharded(tokens, offsets, sigma, length, n_doc_shards, n_growth, left_prune=True):
    """The distributed pipeline in one process: count, reduce, cut, route, grow per shard."""
    th = string_hashes([f"tok{i}" for i in range(int(tokens.max()) + 1)])
    n_docs = offsets.size - 1
    bounds = np.linspace(0, n_docs, n_doc_shards + 1).astype(int)
    shards = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        off = offsets[a:b + 1] - offsets[a]
        ids = tokens[offsets[a]:offsets[b]]
        h, s = window_hashes(ids, th, off, length)
        keys, counts = distinct_document_counts(h, np.searchsorted(off, s, side="right") - 1)
        shards.append((a, ids, off, h, s, keys, counts))
    keys, df = sum_by_key(np.concatenate([x[5] for x in shards]), np.concatenate([x[6] for x in shards]))
    frequent = keys[df >= sigma]
    per_growth = [[] for _ in range(n_growth)]
    for k, (a, ids, off, h, s, _, _) in enumerate(shards):
        flags = is_member(h, frequent)
        seg = frequent_segments(s, flags, off, length)
        lengths = seg.end - seg.start
        seg_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        seg_tokens = np.concatenate([ids[x:y] for x, y in zip(seg.start, seg.end)]) if lengths.size else \
            np.zeros(0, np.uint32)
        ws = s[flags]
        w_seg = np.searchsorted(seg.start, ws, side="right") - 1
        route = growth_shard_of(routing_keys(ids, th, off, length, routing_k(length))[flags], n_growth)
        for g in range(n_growth):
            # Labels: positions in the full corpus, so coverage can be compared directly.
            per_growth[g].append(fragments_for(seg_offsets, seg_tokens, seg.doc + a, seg.start + offsets[a],
                                               w_seg, ws - seg.start[w_seg], route, g, k))
    phrases, starts, lens = [], [], []
    for g in range(n_growth):
        grown = grow_fragments(concat_fragments(per_growth[g]), sigma, length, left_prune=left_prune)
        for t, d, o, docs in zip(grown.tokens, grown.df.tolist(), grown.occurrences.tolist(), grown.docs):
            assert docs.size == d and np.all(np.diff(docs) > 0)
            phrases.append(Phrase(t, d, o))
        starts.append(grown.occ_label)
        lens.append(grown.lengths()[grown.occ_phrase])
    coverage = coverage_mask(int(tokens.size), np.concatenate(starts), np.concatenate(lens))
    return sort_phrases(phrases), coverage


def test_sharded_growth_equals_the_single_engine_on_planted_nested_and_boundary_repeats():
    rng = np.random.default_rng(29)
    for trial in range(8):
        vocab = int(rng.integers(30, 400))
        tokens, offsets = planted_corpus(rng, int(rng.integers(60, 140)), vocab, nested_phrases(rng, vocab))
        sigma, length = int(rng.integers(3, 9)), int(rng.integers(3, 9))
        single = mine_bloomspan(tokens, offsets, MiningConfig(sigma=sigma, min_length=length))
        for n_growth in (1, 3, 7):
            got, coverage = _sharded(tokens, offsets, sigma, length, int(rng.integers(1, 5)), n_growth)
            assert got == single.phrases, f"trial {trial}, {n_growth} growth shards"
            assert np.array_equal(coverage, single.coverage), f"trial {trial}, {n_growth} growth shards"


@settings(max_examples=60, deadline=None)
@given(docs=st.lists(st.lists(st.integers(0, 3), min_size=0, max_size=25), min_size=2, max_size=10),
       sigma=st.integers(2, 4), length=st.integers(2, 4), n_doc_shards=st.integers(1, 3),
       n_growth=st.integers(1, 4), left_prune=st.booleans())
def test_sharded_growth_matches_the_definition(docs, sigma, length, n_doc_shards, n_growth, left_prune):
    """Dense tiny alphabets (nested, overlapping, self-overlapping repeats) against brute force."""
    tokens, offsets = corpus_of(docs)
    if tokens.size == 0:
        return
    got, _ = _sharded(tokens, offsets, sigma, length, min(n_doc_shards, len(docs)), n_growth, left_prune)
    assert got == mine_naive(tokens, offsets, sigma, length)


@settings(max_examples=80, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(0, 5)), max_size=40),
       sigma=st.integers(1, 4))
def test_left_maximal_matches_reference(rows, sigma):
    c, x, d = (np.asarray([r[i] for r in rows], dtype=np.int64) for i in range(3))
    assert np.array_equal(left_maximal(c, x, d, 4, sigma, 4), left_maximal_reference(c, x, d, 4, sigma, 4))


def test_a_fragment_starting_at_its_interval_has_no_left_neighbour():
    seg_offsets = np.asarray([0, 5, 9], dtype=np.int64)
    seg_tokens = np.asarray([10, 11, 12, 13, 14, 20, 21, 22, 23], dtype=np.uint32)
    f = fragments_for(seg_offsets, seg_tokens, np.asarray([0, 3]), np.asarray([100, 200]),
                      np.asarray([0, 0, 1]), np.asarray([0, 2, 1]), np.asarray([1, 1, 1]), 1, owner=2)
    assert f.offsets.tolist() == [0, 6, 10]
    assert f.tokens.tolist() == [int(NO_LEFT), 10, 11, 12, 13, 14, 20, 21, 22, 23]
    assert f.starts.tolist() == [1, 3, 7]  # the second fragment starts after its left slot (20)
    assert f.label.tolist() == [100, 201] and f.doc.tolist() == [0, 3] and f.owner.tolist() == [2, 2]
    assert fragments_for(seg_offsets, seg_tokens, np.asarray([0, 3]), np.asarray([100, 200]), np.asarray([0]),
                         np.asarray([0]), np.asarray([1]), 0, owner=2).doc.size == 0


@settings(max_examples=60, deadline=None)
@given(docs=st.lists(st.lists(st.integers(0, 5), min_size=0, max_size=30), min_size=1, max_size=8),
       length=st.integers(1, 6), k=st.integers(1, 6))
def test_routing_keys_match_reference(docs, length, k):
    k = min(k, length)
    tokens, offsets = corpus_of(docs)
    th = string_hashes([f"s{i}" for i in range(6)])
    assert np.array_equal(routing_keys(tokens, th, offsets, length, k),
                          routing_keys_reference(tokens, th, offsets, length, k))


@settings(max_examples=80, deadline=None)
@given(values=st.lists(st.integers(0, 40), max_size=60), no_left=st.lists(st.booleans(), max_size=60))
def test_dense_token_ids_equal_numpy_unique(values, no_left):
    """The linear-time renumbering of a growth shard's layout is np.unique's, NO_LEFT last."""
    from bloomspan.engine.distributed.sharded_growth import NO_LEFT, dense_token_ids

    layout = np.asarray(values, dtype=np.uint32)
    layout[np.asarray(no_left[:layout.size] + [False] * (layout.size - len(no_left[:layout.size])), dtype=bool)] = NO_LEFT
    uniq, inverse = np.unique(layout, return_inverse=True)
    got_values, got_ids = dense_token_ids(layout)
    assert got_values.dtype == np.uint32 and got_ids.dtype == np.uint32
    assert np.array_equal(got_values, uniq) and np.array_equal(got_ids, inverse.reshape(-1))
    # overwrite: the same answer, written into the layout itself (no second array per token)
    own = layout.copy()
    in_values, in_ids = dense_token_ids(own, overwrite=True)
    assert np.array_equal(in_values, uniq) and np.array_equal(in_ids, inverse.reshape(-1))
    assert in_ids is own or own.size == 0
    # a layout that must be converted first is left as it was
    wide = layout.astype(np.int64)
    dense_token_ids(wide, overwrite=True)
    assert np.array_equal(wide, layout.astype(np.int64))


@settings(max_examples=60, deadline=None)
@given(lengths=st.lists(st.integers(0, 6), max_size=12), seed=st.integers(0, 1000))
def test_place_fragments_matches_reference(lengths, seed):
    from bloomspan.engine.distributed.sharded_growth import NO_LEFT, place_fragments, place_fragments_reference

    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    tokens = rng.integers(0, 50, int(offsets[-1])).astype(np.uint32)
    order = rng.permutation(len(lengths))
    new_len = np.asarray(lengths, dtype=np.int64)[order] + 1
    dst_start = np.empty(len(lengths), dtype=np.int64)
    dst_start[order] = np.concatenate([[0], np.cumsum(new_len)])[:-1]
    got = np.full(int(new_len.sum()), NO_LEFT, dtype=np.uint32)
    ref = got.copy()
    place_fragments(got, dst_start, offsets, tokens)
    place_fragments_reference(ref, dst_start, offsets, tokens)
    assert np.array_equal(got, ref)


@settings(max_examples=80, deadline=None)
@given(lengths=st.lists(st.integers(1, 7), min_size=1, max_size=12), seed=st.integers(0, 1000))
def test_seed_buffer_matches_reference(lengths, seed):
    """Fragments of any length (empty ones too, which share an offset with the next), placed in
    any order and grouped into documents; starts ascending (as fragments give them) or not."""
    from bloomspan.engine.distributed.sharded_growth import seed_buffer, seed_buffer_reference

    rng = np.random.default_rng(seed)
    lengths = [n if rng.random() < 0.8 else 0 for n in lengths]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    # a start needs its bigram inside the fragment, never on the left slot (a fragment's first token)
    inside = np.zeros(int(offsets[-1]), dtype=bool)
    for a, b in zip(offsets[:-1], offsets[1:]):
        inside[a + 1:b - 1] = True
    starts = np.flatnonzero(inside & (rng.random(inside.size) < 0.6)).astype(np.int64)
    order = rng.permutation(len(lengths)).astype(np.int64)
    new_len = np.asarray(lengths, dtype=np.int64)[order] + 1
    placed_at = np.concatenate([[0], np.cumsum(new_len)]).astype(np.int64)
    dst_start = np.empty(len(lengths), dtype=np.int64)
    dst_start[order] = placed_at[:-1]
    doc_first = rng.random(len(lengths)) < 0.5
    doc_first[0] = True
    doc_offsets = np.append(placed_at[:-1][doc_first], placed_at[-1]).astype(np.int64)
    n_ids = int(rng.integers(1, 5))
    ids = rng.integers(0, n_ids, int(placed_at[-1])).astype(np.uint32)
    for given_starts in (starts, rng.permutation(starts)):
        got = seed_buffer(ids, n_ids, given_starts, offsets, order, dst_start, doc_offsets)
        ref = seed_buffer_reference(ids, n_ids, given_starts, offsets, order, dst_start, doc_offsets)
        for g, r in zip(got, ref):
            assert g.dtype == r.dtype and np.array_equal(g, r)


@settings(max_examples=80, deadline=None)
@given(lengths=st.lists(st.integers(1, 12), min_size=0, max_size=8), seed=st.integers(0, 2**32 - 1),
       n_shards=st.integers(1, 3))
def test_fragments_for_matches_reference(lengths, seed, n_shards):
    """The kernel's fragments equal the numpy twin's, field for field, for every growth shard."""
    rng = np.random.default_rng(seed)
    seg_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    seg_tokens = rng.integers(0, 50, int(seg_offsets[-1])).astype(np.uint32)
    starts = [(s, a) for s, n in enumerate(lengths) for a in range(n) if rng.random() < 0.4]
    win_seg = np.asarray([s for s, _ in starts], dtype=np.int64)
    win_at = np.asarray([a for _, a in starts], dtype=np.int64)
    win_shard = rng.integers(0, n_shards, win_seg.shape[0]).astype(np.int32)
    seg_doc = rng.integers(0, 5, len(lengths)).astype(np.int64)
    seg_label = rng.integers(0, 1000, len(lengths)).astype(np.int64)
    for g in range(n_shards):
        want = fragments_for_reference(seg_offsets, seg_tokens, seg_doc, seg_label, win_seg, win_at, win_shard, g, 7)
        # int64 starts, and int32 ones as a shard's cut keeps them (taken as they are, not widened)
        for dtype in (np.int64, np.int32):
            got = fragments_for(seg_offsets, seg_tokens, seg_doc, seg_label, win_seg.astype(dtype),
                                win_at.astype(dtype), win_shard.astype(dtype), g, 7)
            for name in ("doc", "owner", "label", "offsets", "tokens", "starts"):
                a, b = getattr(got, name), getattr(want, name)
                assert a.dtype == b.dtype and np.array_equal(a, b), (name, dtype)


def test_growth_shard_of_in_place_and_as_int32_equals_the_copy():
    rng = np.random.default_rng(5)
    hashes = rng.integers(0, 2**63, 1000, dtype=np.int64).astype(np.uint64) * np.uint64(3)
    want = growth_shard_of(hashes, 7)
    assert want.dtype == np.int64 and want.min() >= 0 and want.max() < 7
    kept = hashes.copy()
    assert np.array_equal(growth_shard_of(hashes, 7, dtype=np.int32), want)
    assert np.array_equal(hashes, kept)  # not overwritten unless asked
    got = growth_shard_of(hashes, 7, dtype=np.int32, overwrite=True)
    assert got.dtype == np.int32 and np.array_equal(got, want)


def test_grow_fragments_release_tokens_empties_them_and_grows_the_same():
    """A growth task hands its unpacked tokens over once they are placed: same phrases."""
    rng = np.random.default_rng(11)
    shared = rng.integers(0, 30, 14).astype(np.uint32)
    docs = [np.concatenate([rng.integers(30, 60, 3), shared, rng.integers(30, 60, 3)]).astype(np.uint32) for _ in range(6)]
    seg_tokens = np.concatenate(docs)
    seg_offsets = np.concatenate([[0], np.cumsum([d.size for d in docs])]).astype(np.int64)
    win_seg = np.repeat(np.arange(len(docs), dtype=np.int64), 8)
    win_at = np.tile(np.arange(3, 11, dtype=np.int64), len(docs))
    win_shard = np.zeros(win_seg.size, dtype=np.int64)
    seg_doc = np.arange(len(docs), dtype=np.int64)
    seg_label = seg_offsets[:-1].copy()
    make = lambda: fragments_for(seg_offsets, seg_tokens, seg_doc, seg_label, win_seg, win_at, win_shard, 0, 0)  # noqa: E731
    want = grow_fragments(make(), 4, 5)
    f = make()
    got = grow_fragments(f, 4, 5, release_tokens=True)
    assert f.tokens.size == 0
    assert want.tokens and got.tokens == want.tokens
    assert np.array_equal(got.df, want.df) and np.array_equal(got.occ_label, want.occ_label)
    assert got.stats == want.stats
