"""Run ids numbered by range partitions (:mod:`bloomspan.sidecar.distributed.run_ids`) equal
the ranks in the sorted union of every shard's strings, the plain twin: for any shards, any
number of ranges, shared and unshared strings, empty shards, and strings the wire carries
specially (newlines, lone surrogates)."""
from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings, strategies as st

from bloomspan.sidecar.distributed.run_ids import (
    range_block,
    range_bounds,
    range_of,
    rank_range,
    ranks_for,
    run_ids_reference,
    sample_of,
    shard_run_ids,
    sorted_used,
    splitters_of,
    strings_at,
)

TOKEN = st.text(st.sampled_from(["a", "b", "z", "é", "\ud800", "\n", "ж", "1"]), min_size=1, max_size=4)


def _number(used: list[list[str]], n_ranges: int, sample_size: int):
    """The stages as RunIdRanges runs them on the workers, here in one process."""
    sortings = [sorted_used(u) for u in used]
    splitters = splitters_of([sample_of(s, sample_size) for s in sortings], n_ranges)
    bounds = [range_bounds(s, splitters) for s in sortings]
    R = len(splitters) + 1
    ranges = [rank_range([range_block(s, b, p) for s, b in zip(sortings, bounds)]) for p in range(R)]
    offsets = np.concatenate([[0], np.cumsum([r.size for r in ranges])]).astype(np.int64)
    ids = [shard_run_ids(s, b, [ranks_for(r, k) for r in ranges], offsets)
           for k, (s, b) in enumerate(zip(sortings, bounds))]
    return ids, ranges, offsets, splitters


@st.composite
def shards(draw):
    pool = draw(st.lists(TOKEN, unique=True, max_size=60))
    n = draw(st.integers(0, 5))
    return [draw(st.lists(st.sampled_from(pool), unique=True)) if pool else [] for _ in range(n)]


@settings(max_examples=300, derandomize=True, deadline=None)
@given(shards(), st.integers(1, 6), st.integers(1, 8))
@example([["b", "a"], [], ["c", "a"]], 3, 1)  # an empty shard between others
@example([["x\ny", "x"], ["\ud800", "x"]], 2, 64)  # newline and lone surrogate on the wire
def test_range_numbering_equals_the_ranks_of_the_sorted_union(used, n_ranges, sample_size):
    ids, ranges, offsets, splitters = _number(used, n_ranges, sample_size)
    expected = run_ids_reference(used)
    assert [a.tolist() for a in ids] == [b.tolist() for b in expected]
    assert int(offsets[-1]) == len(set().union(*used)) if used else int(offsets[-1]) == 0
    assert len(splitters) <= max(n_ranges - 1, 0) and splitters == sorted(set(splitters))
    union = sorted(set().union(*used)) if used else []
    if union:  # a range hands back the strings of its ids
        every = np.arange(len(union), dtype=np.int64)
        at = range_of(every, offsets)
        got = [strings_at(ranges[p], every[at == p] - offsets[p]) for p in range(len(ranges))]
        assert [s for part in got for s in part] == union


def test_a_range_numbers_each_string_once_across_shards():
    rr = rank_range([range_block(sorted_used(["b", "a"]), np.array([0, 2]), 0),
                     range_block(sorted_used(["a", "c"]), np.array([0, 2]), 0)])
    assert rr.size == 3 and rr.strings.strings() == ["a", "b", "c"]
    assert [r.tolist() for r in rr.ranks] == [[0, 1], [0, 2]]


def test_splitters_never_leave_the_first_range_empty_and_stay_few():
    assert splitters_of([["a", "b", "c", "d"]], 2) == ["c"]
    assert splitters_of([["a"], ["a"]], 4) == []  # one distinct string: one range
    assert splitters_of([], 3) == [] and splitters_of([["a", "b"]], 1) == []
    assert len(sample_of(sorted_used([f"t{i}" for i in range(1000)]), 64)) == 64
