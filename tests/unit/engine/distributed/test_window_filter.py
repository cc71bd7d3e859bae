"""The pigeonhole count of the distributed miner: kernels against their plain twins, and the
superset property every later stage relies on (every window with df >= sigma is flagged, at
every occurrence, however the documents are split into shards)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from bloomspan.engine.distributed import window_filter as wf
from bloomspan.engine.distributed.sharded_growth import routing_keys
from bloomspan.engine.distributed.windows import distinct_document_counts, string_hashes, window_hashes
from tests.support.planted_corpora import corpus_of

docs_strategy = st.lists(st.lists(st.integers(0, 5), min_size=0, max_size=30), min_size=1, max_size=12)
TOKEN_HASH = string_hashes([f"w{i}" for i in range(6)])


@settings(max_examples=60, deadline=None)
@given(docs=docs_strategy, length=st.integers(1, 6), n_cells=st.sampled_from([1, 3, 64, 1000]))
def test_window_filter_matches_reference(docs, length, n_cells):
    tokens, offsets = corpus_of(docs)
    got = wf.window_filter(tokens, TOKEN_HASH, offsets, length, n_cells)
    assert np.array_equal(got, wf.window_filter_reference(tokens, TOKEN_HASH, offsets, length, n_cells))


def test_window_filter_partitioned_build_and_chunks_match_reference(monkeypatch):
    """A table above the direct-increment size is built region by region and the windows are
    hashed chunk by chunk: the counters are the same as one pass over the corpus."""
    monkeypatch.setattr(wf, "CHUNK_WINDOWS", 7)
    monkeypatch.setattr(wf, "region_layout", lambda n_cells: (3, -(-n_cells >> 3)))
    rng = np.random.default_rng(4)
    docs = [rng.integers(0, 6, int(rng.integers(0, 40))).tolist() for _ in range(30)]
    tokens, offsets = corpus_of(docs)
    for n_cells in (50, 300):
        got = wf.window_filter(tokens, TOKEN_HASH, offsets, 3, n_cells)
        assert np.array_equal(got, wf.window_filter_reference(tokens, TOKEN_HASH, offsets, 3, n_cells))


def test_window_filter_saturates_at_255():
    tokens, offsets = corpus_of([[1, 2]] * 300)
    counters = wf.window_filter(tokens, TOKEN_HASH, offsets, 2, 64)
    assert counters.max() == 255 and counters.sum() == 255


@settings(max_examples=60, deadline=None)
@given(docs=docs_strategy, length=st.integers(1, 5), pick=st.integers(0, 2**16))
def test_flagged_window_starts_match_reference(docs, length, pick):
    tokens, offsets = corpus_of(docs)
    hashes, _ = window_hashes(tokens, TOKEN_HASH, offsets, length)
    rng = np.random.default_rng(pick)
    members = np.unique(np.concatenate([hashes[rng.random(hashes.size) < 0.3],
                                        rng.integers(0, 2**63, 5, dtype=np.int64).astype(np.uint64)]))
    got = wf.flagged_window_starts(tokens, TOKEN_HASH, offsets, length, members)
    assert np.array_equal(got, wf.flagged_window_starts_reference(tokens, TOKEN_HASH, offsets, length, members))


@settings(max_examples=60, deadline=None)
@given(docs=docs_strategy, length=st.integers(1, 6), k=st.integers(1, 6))
def test_routing_keys_at_equal_routing_keys_of_those_windows(docs, length, k):
    k = min(k, length)
    tokens, offsets = corpus_of(docs)
    _, starts = window_hashes(tokens, TOKEN_HASH, offsets, length)
    every = routing_keys(tokens, TOKEN_HASH, offsets, length, k)
    some = np.arange(starts.size)[::2]
    assert np.array_equal(wf.routing_keys_at(tokens, TOKEN_HASH, starts[some], length, k), every[some])
    # every start (runs of consecutive starts, rolled along) and random subsets (runs and gaps)
    assert np.array_equal(wf.routing_keys_at(tokens, TOKEN_HASH, starts, length, k), every)
    for seed in range(3):
        pick = np.flatnonzero(np.random.default_rng(seed).random(starts.size) < 0.7)
        assert np.array_equal(wf.routing_keys_at(tokens, TOKEN_HASH, starts[pick], length, k), every[pick])


def test_local_threshold_is_the_pigeonhole_bound():
    assert wf.local_threshold(20, 2) == 10
    assert wf.local_threshold(20, 3) == 7
    assert wf.local_threshold(20, 20) == 1
    assert wf.local_threshold(1000, 2) == 255


def _pigeonhole_superset(docs, n_shards, sigma, length, cells_per_window=None):
    """The four steps of the module docstring over a split of ``docs`` into shards."""
    cuts = np.linspace(0, len(docs), n_shards + 1).astype(int)
    shards = [corpus_of(docs[a:b]) if b > a else corpus_of([[]]) for a, b in zip(cuts[:-1], cuts[1:])]
    t = wf.local_threshold(sigma, n_shards)
    filters, heavy = [], [np.zeros(0, np.uint64)]
    for tokens, offsets in shards:  # steps 1 and 2 in one pass, as the workers run them
        n_windows = int(np.maximum(np.diff(offsets) - length + 1, 0).sum())
        n_cells = wf.filter_cells(n_windows) if cells_per_window is None else max(1, cells_per_window)
        counters, found = wf.window_filter_heavy(tokens, TOKEN_HASH, offsets, length, n_cells, t)
        filters.append(counters)
        heavy.append(found)
    union = np.unique(np.concatenate(heavy))
    sums = sum(wf.cell_values(f, union).astype(np.int64) for f in filters) if filters else 0
    members = wf.frequent_superset(union, sums, sigma)
    return shards, members


def _frequent_windows(docs, length, sigma):
    """The oracle: the hashes of the windows of ``docs`` with df >= sigma."""
    all_tokens, all_offsets = corpus_of(docs)
    hashes, starts = window_hashes(all_tokens, TOKEN_HASH, all_offsets, length)
    keys, df = distinct_document_counts(hashes, np.searchsorted(all_offsets, starts, side="right") - 1)
    return set(keys[df >= sigma].tolist())


def _reduced_members(built, sigma):
    """The driver's reduction of per-unit filters ``built`` ((counters, heavy) each): the superset F."""
    union = np.unique(np.concatenate([np.zeros(0, np.uint64)] + [h for _, h in built]))
    sums = sum(wf.cell_values(c, union).astype(np.int64) for c, _ in built)
    return wf.frequent_superset(union, sums, sigma)


def _assert_every_frequent_window_flagged(docs, shards, members, length, sigma):
    """``members`` holds every window of ``docs`` with df >= sigma, and every shard
    ``(ids, token_hash, offsets)`` flags it at every start."""
    frequent = _frequent_windows(docs, length, sigma)
    assert frequent <= set(members.tolist())
    for ids, token_hash, offsets in shards:
        h, s = window_hashes(ids, token_hash, offsets, length)
        flagged = set(wf.flagged_window_starts(ids, token_hash, offsets, length, members).tolist())
        assert {int(x) for x, y in zip(s.tolist(), h.tolist()) if y in frequent} <= flagged


@settings(max_examples=80, deadline=None)
@given(docs=st.lists(st.lists(st.integers(0, 3), min_size=0, max_size=25), min_size=1, max_size=30),
       n_shards=st.integers(1, 6), sigma=st.integers(2, 8), length=st.integers(1, 4),
       tiny=st.booleans())
@example(docs=[[0, 1, 2]] * 6, n_shards=3, sigma=6, length=3, tiny=False)  # two documents per shard
@example(docs=[[0, 1]] * 5 + [[2, 3]], n_shards=6, sigma=5, length=2, tiny=True)  # one per shard, t = 1
def test_every_frequent_window_is_flagged_at_every_occurrence(docs, n_shards, sigma, length, tiny):
    """df >= sigma  =>  flagged, in every shard, at every start (any split, any table size)."""
    shards, members = _pigeonhole_superset(docs, n_shards, sigma, length, cells_per_window=3 if tiny else None)
    _assert_every_frequent_window_flagged(docs, [(t, TOKEN_HASH, o) for t, o in shards], members, length, sigma)


@settings(max_examples=60, deadline=None)
@given(docs=docs_strategy, length=st.integers(1, 5), n_cells=st.sampled_from([1, 2, 17, 500]),
       threshold=st.integers(1, 6))
def test_window_filter_heavy_matches_reference(docs, length, n_cells, threshold):
    tokens, offsets = corpus_of(docs)
    counters, heavy = wf.window_filter_heavy(tokens, TOKEN_HASH, offsets, length, n_cells, threshold)
    ref_counters, ref_heavy = wf.window_filter_heavy_reference(tokens, TOKEN_HASH, offsets, length, n_cells, threshold)
    assert np.array_equal(counters, ref_counters)
    assert np.array_equal(heavy, ref_heavy)
    assert np.array_equal(counters, wf.window_filter(tokens, TOKEN_HASH, offsets, length, n_cells))


def test_window_filter_heavy_partitioned_and_chunked_matches_reference(monkeypatch):
    """Region-partitioned increments over several chunks: the order the emission depends on
    is the reference's too."""
    monkeypatch.setattr(wf, "CHUNK_WINDOWS", 7)
    monkeypatch.setattr(wf, "region_layout", lambda n_cells: (3, -(-n_cells >> 3)))
    rng = np.random.default_rng(5)
    docs = [rng.integers(0, 6, int(rng.integers(0, 40))).tolist() for _ in range(30)]
    tokens, offsets = corpus_of(docs)
    for n_cells, threshold in ((50, 2), (300, 4), (9, 3)):
        got = wf.window_filter_heavy(tokens, TOKEN_HASH, offsets, 3, n_cells, threshold)
        ref = wf.window_filter_heavy_reference(tokens, TOKEN_HASH, offsets, 3, n_cells, threshold)
        assert all(np.array_equal(a, b) for a, b in zip(got, ref))


@settings(max_examples=80, deadline=None)
@given(docs=docs_strategy, length=st.integers(1, 5), n_cells=st.sampled_from([1, 3, 17, 500]),
       threshold=st.integers(1, 6))
def test_one_pass_heavy_set_lies_between_the_occurrence_bound_and_the_final_cells(docs, length, n_cells, threshold):
    """What the pigeonhole relies on: every window with >= threshold occurrences is emitted,
    and nothing whose final cell reads below threshold."""
    tokens, offsets = corpus_of(docs)
    counters, heavy = wf.window_filter_heavy(tokens, TOKEN_HASH, offsets, length, n_cells, threshold)
    hashes, _ = window_hashes(tokens, TOKEN_HASH, offsets, length)
    keys, occ = np.unique(hashes, return_counts=True)
    got = set(heavy.tolist())
    assert set(keys[occ >= threshold].tolist()) <= got
    assert got <= set(wf.heavy_windows_reference(tokens, TOKEN_HASH, offsets, length, counters, threshold).tolist())


@settings(max_examples=80, deadline=None)
@given(docs=st.lists(st.lists(st.integers(0, 3), min_size=0, max_size=25), min_size=1, max_size=30),
       n_shards=st.integers(1, 6), sigma=st.integers(2, 8), length=st.integers(1, 4), tiny=st.booleans())
@example(docs=[[0, 1, 2]] * 6, n_shards=3, sigma=6, length=3, tiny=False)
@example(docs=[[0, 1]] * 5 + [[2, 3]], n_shards=6, sigma=5, length=2, tiny=True)
def test_one_pass_pigeonhole_flags_every_frequent_window_at_every_occurrence(docs, n_shards, sigma, length, tiny):
    """The pipeline's path (filter and heavy windows in one pass): df >= sigma => flagged, in
    every shard, at every start."""
    cuts = np.linspace(0, len(docs), n_shards + 1).astype(int)
    shards = [corpus_of(docs[a:b]) if b > a else corpus_of([[]]) for a, b in zip(cuts[:-1], cuts[1:])]
    t = wf.local_threshold(sigma, n_shards)
    built = []
    for tokens, offsets in shards:
        n_windows = int(np.maximum(np.diff(offsets) - length + 1, 0).sum())
        n_cells = 3 if tiny else wf.filter_cells(n_windows)
        built.append(wf.window_filter_heavy(tokens, TOKEN_HASH, offsets, length, n_cells, t))
    _assert_every_frequent_window_flagged(docs, [(t, TOKEN_HASH, o) for t, o in shards], _reduced_members(built, sigma),
                                          length, sigma)


# ---------------------------------------------------------------------- count units (several shards, one filter)
def _renumbered(tokens, offsets, seed):
    """The shard with its own local numbering of the strings (as every worker's shard has)."""
    perm = np.random.default_rng(seed).permutation(TOKEN_HASH.shape[0])
    token_hash = np.empty_like(TOKEN_HASH)
    token_hash[perm] = TOKEN_HASH
    return perm[np.asarray(tokens, dtype=np.int64)].astype(np.uint32), token_hash, offsets


def _split(docs, n_shards):
    cuts = np.linspace(0, len(docs), n_shards + 1).astype(int)
    return [corpus_of(docs[a:b]) if b > a else corpus_of([[]]) for a, b in zip(cuts[:-1], cuts[1:])]


@settings(max_examples=60, deadline=None)
@given(docs=docs_strategy, n_shards=st.integers(1, 4), length=st.integers(1, 5),
       n_cells=st.sampled_from([1, 2, 17, 500]), threshold=st.integers(1, 6))
def test_unit_filter_heavy_matches_reference(docs, n_shards, length, n_cells, threshold):
    parts = [_renumbered(t, o, k) for k, (t, o) in enumerate(_split(docs, n_shards))]
    got = wf.unit_filter_heavy(parts, length, n_cells, threshold)
    ref = wf.unit_filter_heavy_reference(parts, length, n_cells, threshold)
    assert all(np.array_equal(a, b) for a, b in zip(got, ref))


@settings(max_examples=60, deadline=None)
@given(docs=docs_strategy, n_shards=st.integers(1, 4), length=st.integers(1, 5),
       n_cells=st.sampled_from([1, 3, 17, 500]), threshold=st.integers(1, 6))
def test_unit_filter_is_the_saturated_sum_of_its_shards_filters_and_emits_the_units_heavy_windows(
        docs, n_shards, length, n_cells, threshold):
    """Counts add over a unit's shards: the table is min(sum of the shards' tables, 255), and
    every window with >= threshold occurrences in the unit (not in one shard) is emitted."""
    parts = [_renumbered(t, o, k) for k, (t, o) in enumerate(_split(docs, n_shards))]
    counters, heavy = wf.unit_filter_heavy(parts, length, n_cells, threshold)
    total = sum(wf.window_filter(i, h, o, length, n_cells).astype(np.int64) for i, h, o in parts)
    assert np.array_equal(counters, np.minimum(total, wf.MAX_COUNT).astype(np.uint8))
    tokens, offsets = corpus_of(docs)
    keys, occ = np.unique(window_hashes(tokens, TOKEN_HASH, offsets, length)[0], return_counts=True)
    assert set(keys[occ >= threshold].tolist()) <= set(heavy.tolist())
    assert set(heavy.tolist()) <= set(wf.heavy_windows_reference(tokens, TOKEN_HASH, offsets, length, counters,
                                                                 threshold).tolist())


@settings(max_examples=80, deadline=None)
@given(docs=st.lists(st.lists(st.integers(0, 3), min_size=0, max_size=25), min_size=1, max_size=30),
       n_shards=st.integers(1, 6), n_units=st.integers(1, 6), sigma=st.integers(2, 8), length=st.integers(1, 4),
       tiny=st.booleans(), seed=st.integers(0, 3))
@example(docs=[[0, 1, 2]] * 6, n_shards=6, n_units=2, sigma=6, length=3, tiny=False, seed=0)  # 3 per unit, 1 per shard
def test_pigeonhole_over_count_units_flags_every_frequent_window_at_every_occurrence(
        docs, n_shards, n_units, sigma, length, tiny, seed):
    """The pipeline's path with a worker's shards counted as one unit and the threshold
    ceil(sigma / units): df >= sigma => flagged in every shard, at every start, for any
    grouping of the shards into units (here: a random assignment)."""
    shards = [_renumbered(t, o, k) for k, (t, o) in enumerate(_split(docs, n_shards))]
    owner = np.random.default_rng(seed).integers(0, n_units, n_shards)
    units = [[shards[k] for k in np.flatnonzero(owner == u).tolist()] for u in range(n_units)]
    units = [u for u in units if u]
    t = wf.local_threshold(sigma, len(units))
    built = []
    for unit in units:
        n_windows = sum(int(np.maximum(np.diff(o) - length + 1, 0).sum()) for _, _, o in unit)
        built.append(wf.unit_filter_heavy(unit, length, 3 if tiny else wf.filter_cells(n_windows), t))
    _assert_every_frequent_window_flagged(docs, shards, _reduced_members(built, sigma), length, sigma)


# ---------------------------------------------------------------------- the cut by kept cells
@settings(max_examples=60, deadline=None)
@given(docs=docs_strategy, n_shards=st.integers(1, 3), length=st.integers(1, 5),
       n_cells=st.sampled_from([1, 3, 17, 64, 500]), pick=st.integers(0, 2**32))
def test_flagged_by_cells_matches_reference_and_holds_the_flagged_windows(docs, n_shards, length, n_cells, pick):
    parts = [_renumbered(t, o, k) for k, (t, o) in enumerate(_split(docs, n_shards))]
    counters, heavy, kept = wf.unit_filter_heavy(parts, length, n_cells, 1, keep_cells=True)
    rng = np.random.default_rng(pick)
    members = np.unique(heavy[rng.random(heavy.shape[0]) < 0.4]) if heavy.size else heavy
    for (ids, token_hash, offsets), cells in zip(parts, kept):
        hashes, _ = window_hashes(ids, token_hash, offsets, length)
        assert np.array_equal(cells, [wf._cell_py(int(h), n_cells) for h in hashes.tolist()])  # window order
        got = wf.flagged_by_cells(offsets, length, cells, members, n_cells)
        assert np.array_equal(got, wf.flagged_by_cells_reference(ids, token_hash, offsets, length, members, n_cells))
        assert set(wf.flagged_window_starts(ids, token_hash, offsets, length, members).tolist()) <= set(got.tolist())


@settings(max_examples=120, deadline=None)
@given(docs=docs_strategy, length=st.integers(1, 5), n_cells=st.sampled_from([1, 3, 17, 64, 500, 5000]),
       pick=st.integers(0, 2**32), chunk=st.sampled_from([1, 7, 1 << 18]), any_bits=st.sampled_from([0, 64, 128, 1024]))
def test_flagged_by_hashed_cells_is_the_cut_by_kept_cells(docs, length, n_cells, pick, chunk, any_bits):
    """Cells hashed again chunk by chunk flag what the kept cells flag, for any chunk size, with
    or without the folded bitmap tested first (``any_bits`` of it: fewer bits than cells fold
    several cells onto one bit)."""
    ids, token_hash, offsets = _renumbered(*corpus_of(docs), 0)
    counters, heavy, (cells,) = wf.unit_filter_heavy([(ids, token_hash, offsets)], length, n_cells, 1, keep_cells=True)
    rng = np.random.default_rng(pick)
    members = np.unique(heavy[rng.random(heavy.shape[0]) < 0.4]) if heavy.size else heavy
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wf, "CHUNK_WINDOWS", chunk)
        mp.setattr(wf, "flag_any_bits", lambda n_members, cells: any_bits)
        got = wf.flagged_by_hashed_cells(ids, token_hash, offsets, length, members, n_cells)
    assert got.dtype == np.int64
    assert np.array_equal(got, wf.flagged_by_cells_reference(ids, token_hash, offsets, length, members, n_cells))
    assert np.array_equal(got, wf.flagged_by_cells(offsets, length, cells, members, n_cells))


def test_the_folded_bitmap_has_a_bit_for_every_residue_of_a_set_bit_and_no_other():
    rng = np.random.default_rng(3)
    for n_cells, n_bits in ((64, 64), (1000, 64), (5000, 256), (70000, 1024), (100, 1024)):
        cells = np.unique(rng.integers(0, n_cells, 40))
        members_bits = wf.cell_bitmap(np.zeros(0, dtype=np.uint64), n_cells)
        for c in cells.tolist():
            members_bits[c >> 6] |= np.uint64(1) << np.uint64(c & 63)
        folded = wf.folded_bitmap(members_bits, n_bits)
        want = {c % n_bits for c in cells.tolist()}
        got = {a for a in range(n_bits) if (int(folded[a >> 3]) >> (a & 7)) & 1}
        assert got == want, (n_cells, n_bits)


def test_the_first_bitmap_is_used_only_where_the_cells_bitmap_outgrows_l2_and_it_fits():
    assert wf.flag_any_bits(23_000, 13_000_000) == 1 << 20  # 1.6 MiB of cells' bits: 32 per member
    assert wf.flag_any_bits(71_307, 42_849_319) == 1 << 22
    assert wf.flag_any_bits(23_000, 4_000_000) == 0  # 0.5 MiB: tested directly
    assert wf.flag_any_bits(400_000, 10**9) == 0  # 32 bits per member would not fit in L2


def test_kept_cells_are_in_window_order_with_a_partitioned_build_over_chunks(monkeypatch):
    monkeypatch.setattr(wf, "CHUNK_WINDOWS", 7)
    monkeypatch.setattr(wf, "region_layout", lambda n_cells: (3, -(-n_cells >> 3)))
    rng = np.random.default_rng(7)
    docs = [rng.integers(0, 6, int(rng.integers(0, 40))).tolist() for _ in range(30)]
    tokens, offsets = corpus_of(docs)
    counters, heavy, (cells,) = wf.unit_filter_heavy([(tokens, TOKEN_HASH, offsets)], 3, 300, 2, keep_cells=True)
    hashes, _ = window_hashes(tokens, TOKEN_HASH, offsets, 3)
    assert np.array_equal(cells, [wf._cell_py(int(h), 300) for h in hashes.tolist()])
    assert all(np.array_equal(a, b) for a, b in zip((counters, heavy),
                                                     wf.unit_filter_heavy([(tokens, TOKEN_HASH, offsets)], 3, 300, 2)))


@settings(max_examples=80, deadline=None)
@given(docs=st.lists(st.lists(st.integers(0, 3), min_size=0, max_size=25), min_size=1, max_size=30),
       n_shards=st.integers(1, 6), n_units=st.integers(1, 6), sigma=st.integers(2, 8), length=st.integers(1, 4),
       tiny=st.booleans(), seed=st.integers(0, 3))
@example(docs=[[0, 1, 2]] * 6, n_shards=6, n_units=2, sigma=6, length=3, tiny=True, seed=0)
def test_cut_by_kept_cells_flags_every_frequent_window_at_every_occurrence(docs, n_shards, n_units, sigma, length,
                                                                           tiny, seed):
    """The pipeline's path end to end: units counted with their cells kept, the cut by cells:
    df >= sigma => flagged in every shard at every start, for any grouping of shards into units."""
    shards = [_renumbered(t, o, k) for k, (t, o) in enumerate(_split(docs, n_shards))]
    owner = np.random.default_rng(seed).integers(0, n_units, n_shards)
    units = [np.flatnonzero(owner == u).tolist() for u in range(n_units)]
    units = [u for u in units if u]
    t = wf.local_threshold(sigma, len(units))
    built, kept = [], {}
    for unit in units:
        n_windows = sum(int(np.maximum(np.diff(shards[k][2]) - length + 1, 0).sum()) for k in unit)
        n_cells = 3 if tiny else wf.filter_cells(n_windows)
        counters, heavy, cells = wf.unit_filter_heavy([shards[k] for k in unit], length, n_cells, t, keep_cells=True)
        built.append((counters, heavy))
        kept.update({k: (c, n_cells) for k, c in zip(unit, cells)})
    members = _reduced_members(built, sigma)
    frequent = _frequent_windows(docs, length, sigma)
    for k, (ids, token_hash, offsets) in enumerate(shards):
        h, s = window_hashes(ids, token_hash, offsets, length)
        flagged = set(wf.flagged_by_cells(offsets, length, kept[k][0], members, kept[k][1]).tolist())
        assert {int(x) for x, y in zip(s.tolist(), h.tolist()) if y in frequent} <= flagged


def test_increment_emitting_drops_repeats_its_recent_table_holds_and_never_a_hash():
    """A hash whose slot still holds it is not emitted again; one pushed out is emitted again
    (so the final ``np.unique`` sees every heavy hash); no hash, 0 or ``~0`` included, matches
    a slot's starting value."""
    recent = wf.recent_table(4)
    cells = np.zeros(6, dtype=np.uint32)
    hashes = np.asarray([0, 0, 4, 0, 2**64 - 1, 2**64 - 1], dtype=np.uint64)  # 0 and 4 share slot 0
    counters = np.zeros(1, dtype=np.uint8)
    out = np.empty(6, dtype=np.uint64)
    k = wf._increment_emitting(counters, cells, hashes, 6, np.uint8(1), out, recent)
    assert out[:k].tolist() == [0, 4, 0, 2**64 - 1]
    assert counters.tolist() == [6]


def test_unit_filter_heavy_with_a_two_slot_recent_table_matches_reference(monkeypatch):
    """Slots evicted at every window: the heavy set is still exact."""
    monkeypatch.setattr(wf, "RECENT_SLOTS", 2)
    monkeypatch.setattr(wf, "CHUNK_WINDOWS", 7)
    rng = np.random.default_rng(9)
    docs = [rng.integers(0, 6, int(rng.integers(0, 40))).tolist() for _ in range(30)]
    parts = [_renumbered(t, o, k) for k, (t, o) in enumerate(_split(docs, 3))]
    for threshold in (1, 2, 4):
        got = wf.unit_filter_heavy(parts, 3, 300, threshold)
        ref = wf.unit_filter_heavy_reference(parts, 3, 300, threshold)
        assert all(np.array_equal(a, b) for a, b in zip(got, ref))


def test_recent_table_wants_a_power_of_two():
    with pytest.raises(ValueError, match="n_slots=3"):
        wf.recent_table(3)


def test_a_unit_filter_has_one_byte_per_counted_window():
    """The table is sized as the single process's counting filter: a cell per window (at least
    64), so a worker holds 1 B per token of its unit while it waits for the superset."""
    assert wf.filter_cells(0) == 64 and wf.filter_cells(10) == 64
    assert wf.filter_cells(1_000_000) == 1_000_000
    assert wf.filter_cells(1 << 40) == (1 << 32) - 1


def test_a_unit_table_that_fits_the_cache_is_counted_without_the_region_sort():
    from bloomspan.engine.mining.counting_filter import region_layout

    assert wf.unit_layout(64) == (0, 1)
    assert wf.unit_layout(13 << 20) == (0, 1)  # a 26.5 M-token crawl's unit on two workers
    assert region_layout(13 << 20)[1] > 1  # which the single process's filter would sort
    big = wf.DIRECT_UNIT_CELLS + 1
    assert wf.unit_layout(big) == region_layout(big) and wf.unit_layout(big)[1] > 1
