"""Kernels of the distributed miner against their plain twins, and the reduction's exactness:
mining the frequent-window intervals gives what mining the whole corpus gives."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from bloomspan.engine.distributed.reduced_corpus import global_coverage, reduced_corpus, reduced_corpus_reference
from bloomspan.engine.distributed.windows import (
    cut_intervals,
    cut_intervals_reference,
    distinct_document_counts,
    distinct_document_counts_reference,
    frequent_segments,
    frequent_segments_reference,
    is_member,
    partition_of,
    sort_pairs,
    sort_pairs_reference,
    string_hashes,
    string_hashes_reference,
    sum_by_key,
    window_counts,
    window_hashes,
    window_hashes_reference,
)
from bloomspan.engine.mining.bloomspan import mine_bloomspan
from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.oracles.naive_oracle import mine_naive
from tests.support.planted_corpora import corpus_of, nested_phrases, planted_corpus

docs_strategy = st.lists(st.lists(st.integers(0, 5), min_size=0, max_size=30), min_size=1, max_size=12)


@settings(max_examples=80, deadline=None)
@given(strings=st.lists(st.text(max_size=12), max_size=20))
def test_string_hashes_match_reference(strings):
    """Newlines, empty strings, any Unicode: the batched kernel equals the per-string twin."""
    assert string_hashes(strings).tolist() == string_hashes_reference(strings).tolist()


def test_string_hashes_of_lone_surrogates_and_distinct_tokens():
    strings = ["caf\u00e9", "cafe\u0301", "\ud800", "a\nb", "", "a", "b"]
    h = string_hashes(strings)
    assert h.tolist() == string_hashes_reference(strings).tolist()
    assert len(set(h.tolist())) == len(strings)


@settings(max_examples=60, deadline=None)
@given(docs=docs_strategy, length=st.integers(1, 6))
def test_window_hashes_match_reference(docs, length):
    tokens, offsets = corpus_of(docs)
    th = string_hashes([f"w{i}" for i in range(6)])
    h, s = window_hashes(tokens, th, offsets, length)
    h_ref, s_ref = window_hashes_reference(tokens, th, offsets, length)
    assert np.array_equal(h, h_ref) and np.array_equal(s, s_ref)
    assert h.size == window_counts(offsets, length).sum()


def test_window_hash_depends_only_on_the_window():
    th = string_hashes(["a", "b", "c", "d"])
    tokens = np.asarray([0, 1, 2, 3, 1, 0, 1, 2], dtype=np.uint32)
    h, s = window_hashes(tokens, th, np.asarray([0, 8]), 3)
    assert h[0] == h[5] and len(set(h.tolist())) == 5  # "a b c" twice, the rest distinct


@settings(max_examples=60, deadline=None)
@given(docs=docs_strategy, length=st.integers(1, 4))
def test_distinct_document_counts_match_reference(docs, length):
    tokens, offsets = corpus_of(docs)
    th = string_hashes([str(i) for i in range(6)])
    h, s = window_hashes(tokens, th, offsets, length)
    doc = np.searchsorted(offsets, s, side="right") - 1
    keys, counts = distinct_document_counts(h, doc)
    k_ref, c_ref = distinct_document_counts_reference(h, doc)
    assert np.array_equal(keys, k_ref) and np.array_equal(counts, c_ref)


@settings(max_examples=40, deadline=None)
@given(pairs=st.lists(st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 50)), max_size=60))
def test_sum_by_key(pairs):
    keys = np.asarray([k for k, _ in pairs], dtype=np.uint64)
    w = np.asarray([v for _, v in pairs], dtype=np.int64)
    got_k, got_w = sum_by_key(keys, w)
    expect: dict[int, int] = {}
    for k, v in pairs:
        expect[k] = expect.get(k, 0) + v
    assert got_k.tolist() == sorted(expect) and got_w.tolist() == [expect[k] for k in sorted(expect)]


def test_partition_and_membership():
    keys = np.asarray([0, 1 << 40, (1 << 64) - 1, 12345], dtype=np.uint64)
    part = partition_of(keys, 3)
    assert part.tolist() == [int(k >> 32) % 3 for k in keys.tolist()]
    assert is_member(keys, np.asarray([12345, 1 << 40], dtype=np.uint64)).tolist() == [
        False, True, False, True]
    assert not is_member(keys, np.zeros(0, dtype=np.uint64)).any()


@settings(max_examples=80, deadline=None)
@given(docs=docs_strategy, length=st.integers(1, 5), seed=st.integers(0, 1000))
def test_frequent_segments_match_reference(docs, length, seed):
    tokens, offsets = corpus_of(docs)
    h, s = window_hashes(tokens, string_hashes([str(i) for i in range(6)]), offsets, length)
    frequent = np.random.default_rng(seed).random(s.size) < 0.5
    got = frequent_segments(s, frequent, offsets, length)
    ref = frequent_segments_reference(s, frequent, offsets, length)
    for a, b in ((got.doc, ref.doc), (got.start, ref.start), (got.end, ref.end)):
        assert np.array_equal(a, b)


@settings(max_examples=80, deadline=None)
@given(docs=docs_strategy, length=st.integers(1, 5), seed=st.integers(0, 1000), share=st.sampled_from([0.0, 0.3, 1.0]))
def test_cut_intervals_match_reference(docs, length, seed, share):
    """Intervals, each start's interval and the intervals' tokens in one walk equal the
    searches and slices of the twin (and the covered-mask twin's intervals)."""
    tokens, offsets = corpus_of(docs)
    _, s = window_hashes(tokens, string_hashes([str(i) for i in range(6)]), offsets, length)
    win = s[np.random.default_rng(seed).random(s.size) < share]
    seg, win_seg, seg_tokens = cut_intervals(win, offsets, tokens, length)
    ref, ref_win_seg, ref_tokens = cut_intervals_reference(win, offsets, tokens, length)
    masked = frequent_segments_reference(win, np.ones(win.size, dtype=bool), offsets, length)
    for a, b, c in ((seg.doc, ref.doc, masked.doc), (seg.start, ref.start, masked.start), (seg.end, ref.end, masked.end)):
        assert np.array_equal(a, b) and np.array_equal(a, c)
    assert np.array_equal(win_seg, ref_win_seg)
    assert np.array_equal(seg_tokens, ref_tokens) and seg_tokens.dtype == tokens.dtype
    # the intervals are sized by a counting walk: exactly as many as there are, int64 each
    assert all(a.shape == ref.doc.shape and a.dtype == np.int64 for a in (seg.doc, seg.start, seg.end))
    seg32, win_seg32, _ = cut_intervals(win, offsets, tokens, length, win_seg_dtype=np.int32)
    assert win_seg32.dtype == np.int32 and np.array_equal(win_seg32, ref_win_seg)
    assert np.array_equal(seg32.start, ref.start)


@settings(max_examples=60, deadline=None)
@given(docs=docs_strategy, length=st.integers(1, 5), seed=st.integers(0, 1000))
def test_reduced_corpus_matches_reference(docs, length, seed):
    tokens, offsets = corpus_of(docs)
    h, s = window_hashes(tokens, string_hashes([str(i) for i in range(6)]), offsets, length)
    seg = frequent_segments(s, np.random.default_rng(seed).random(s.size) < 0.4, offsets, length)
    seg_off = np.concatenate([[0], np.cumsum(seg.end - seg.start)]).astype(np.int64)
    seg_tok = np.concatenate([tokens[a:b] for a, b in zip(seg.start, seg.end)] or [np.zeros(0, np.uint32)])
    args = (seg.doc, seg.start, seg_off, seg_tok, len(docs), 6)
    got, ref = reduced_corpus(*args), reduced_corpus_reference(*args)
    for a, b in ((got.tokens, ref.tokens), (got.doc_offsets, ref.doc_offsets),
                 (got.global_position, ref.global_position)):
        assert np.array_equal(a, b)
    assert got.n_separators == ref.n_separators
    real = got.global_position >= 0
    assert np.array_equal(got.tokens[real], tokens[got.global_position[real]])


def _reduce_and_mine(tokens, offsets, sigma, length, n_shards, **cfg):
    """The distributed algorithm on one machine: shards count their windows' documents, the
    counts are summed by key, each shard cuts its intervals, the intervals are mined."""
    th = string_hashes([f"tok{i}" for i in range(int(tokens.max()) + 1)])
    n_docs = offsets.size - 1
    bounds = np.linspace(0, n_docs, n_shards + 1).astype(int)
    shards = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        off = offsets[a:b + 1] - offsets[a]
        ids = tokens[offsets[a]:offsets[b]]
        h, s = window_hashes(ids, th, off, length)
        keys, counts = distinct_document_counts(h, np.searchsorted(off, s, side="right") - 1)
        shards.append((a, ids, off, h, s, keys, counts))
    keys, df = sum_by_key(np.concatenate([x[5] for x in shards]), np.concatenate([x[6] for x in shards]))
    frequent = keys[df >= sigma]
    docs, starts, parts = [], [], []
    for a, ids, off, h, s, _, _ in shards:
        seg = frequent_segments(s, is_member(h, frequent), off, length)
        docs.append(seg.doc + a)
        starts.append(seg.start + offsets[a])
        parts.extend(ids[x:y] for x, y in zip(seg.start, seg.end))
    lengths = [p.size for p in parts]
    red = reduced_corpus(np.concatenate(docs), np.concatenate(starts),
                         np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                         np.concatenate(parts) if parts else np.zeros(0, np.uint32), n_docs, int(th.size))
    if red.n_tokens == 0:
        return [], np.zeros(tokens.size, dtype=bool), red
    res = mine_bloomspan(red.tokens, red.doc_offsets, MiningConfig(sigma=sigma, min_length=length, **cfg))
    return res.phrases, global_coverage(red, res.coverage, tokens.size), red


def test_reduction_is_exact_on_planted_nested_and_boundary_repeats():
    rng = np.random.default_rng(17)
    for trial in range(6):
        vocab = int(rng.integers(30, 400))
        tokens, offsets = planted_corpus(rng, int(rng.integers(60, 140)), vocab, nested_phrases(rng, vocab))
        sigma, length = int(rng.integers(3, 9)), int(rng.integers(3, 9))
        single = mine_bloomspan(tokens, offsets, MiningConfig(sigma=sigma, min_length=length))
        phrases_d, coverage_d, red = _reduce_and_mine(tokens, offsets, sigma, length, n_shards=int(rng.integers(1, 5)))
        assert phrases_d == single.phrases, f"trial {trial}"
        assert np.array_equal(coverage_d, single.coverage), f"trial {trial}"
        assert red.n_tokens < tokens.size  # the background was cut away


@settings(max_examples=40, deadline=None)
@given(docs=st.lists(st.lists(st.integers(0, 3), min_size=0, max_size=25), min_size=2, max_size=10),
       sigma=st.integers(2, 4), length=st.integers(2, 4), n_shards=st.integers(1, 3))
def test_reduction_matches_the_definition(docs, sigma, length, n_shards):
    """Dense tiny alphabets (nested, overlapping, self-overlapping repeats) against brute force."""
    tokens, offsets = corpus_of(docs)
    if tokens.size == 0:
        return
    expect = mine_naive(tokens, offsets, sigma, length)
    got, _, _ = _reduce_and_mine(tokens, offsets, sigma, length, min(n_shards, len(docs)))
    assert got == expect


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.one_of(st.integers(0, 7), st.integers(0, 2**64 - 1)), max_size=300))
def test_sort_pairs_is_numpys_stable_sort(keys):
    k = np.asarray(keys, dtype=np.uint64)
    v = np.arange(k.size, dtype=np.int64)[::-1].copy()
    got, ref = sort_pairs(k, v), sort_pairs_reference(k, v)
    assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])


@settings(max_examples=80, deadline=None)
@given(strings=st.lists(st.text(max_size=8), max_size=20), pick=st.lists(st.integers(0, 19), max_size=10))
def test_packed_strings_read_back_every_string_and_hash_as_the_list(strings, pick):
    """Newlines, empty strings, lone surrogates: what is packed is what is read back."""
    from bloomspan.engine.distributed.windows import PackedStrings

    packed = PackedStrings.of(strings)
    assert len(packed) == len(strings) and list(packed) == strings and packed == strings
    ids = [i % len(strings) for i in pick] if strings else []
    assert packed.take(ids) == [strings[i] for i in ids]
    joined = packed.joined(ids)
    if any("\n" in x for x in strings):
        assert joined is None
    else:
        assert joined == "\n".join(strings[i] for i in ids).encode("utf-8", "surrogatepass")
    assert packed.hashes().tolist() == string_hashes_reference(strings).tolist()
    if strings:
        assert packed[-1] == strings[-1]


def test_packed_strings_keep_lone_surrogates():
    from bloomspan.engine.distributed.windows import PackedStrings

    strings = ["a\ud800b", "\udfff", "", "x\ny"]
    assert list(PackedStrings.of(strings)) == strings
