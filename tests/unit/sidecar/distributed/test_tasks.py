"""Driver-side helpers of the vocabulary shuffle against plain per-string twins."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from bloomspan.engine.distributed.first_occurrences import FirstOccurrences
from bloomspan.sidecar.distributed.tasks import StringBlock, first_seen_before, locate


@settings(max_examples=60, deadline=None)
@given(first=st.lists(st.lists(st.integers(0, 50), max_size=20), min_size=1, max_size=5),
       queries=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 60)), max_size=30))
def test_first_seen_before_matches_a_search_per_string(first, queries):
    z = np.zeros(0, dtype=np.int64)
    vp = FirstOccurrences([np.unique(np.asarray(f, dtype=np.uint32)) for f in first], z.astype(np.uint64), z, z, {})
    where = np.asarray([(k % len(first), j) for k, j in queries], dtype=np.int64).reshape(-1, 2)
    expected = [int(np.count_nonzero(vp.first_ids[k] < j)) for k, j in where.tolist()]
    assert first_seen_before(vp, where).tolist() == expected


@settings(max_examples=60, deadline=None)
@given(strings=st.lists(st.text(alphabet="ab\n\u00e9", max_size=3), max_size=8))
def test_a_string_block_packs_to_its_strings(strings):
    assert list(StringBlock.of(strings).packed()) == strings


def test_locate_reads_the_hashes_the_driver_partitioned_by():
    """The driver hashes every string once (to pick its partition) and hands the hashes on: the
    lookup reads them instead of hashing the strings again."""
    keys = np.asarray([3, 8], dtype=np.uint64)  # not the strings' own hashes: only given ones find them
    vp = FirstOccurrences([np.asarray([0], dtype=np.uint32), np.asarray([4], dtype=np.uint32)], keys,
                          np.asarray([0, 1], dtype=np.int64), np.asarray([0, 4], dtype=np.int64), {})
    assert locate(vp, ["x", "y"], np.asarray([8, 3], dtype=np.uint64)).tolist() == [[1, 4], [0, 0]]


@settings(max_examples=60, deadline=None)
@given(strings=st.lists(st.text(max_size=6), min_size=1, max_size=15, unique=True), pick=st.lists(st.integers(0, 14), max_size=10))
def test_strings_of_a_shard_are_its_strings_one_read_or_many(strings, pick):
    """Packed strings read back by one joined slice (or one at a time when one holds a
    newline) equal the list's items, empty strings and lone surrogates included."""
    from bloomspan.engine.distributed.windows import PackedStrings
    from bloomspan.sidecar.distributed.tasks import _strings_of

    ids = np.asarray(sorted({i % len(strings) for i in pick}), dtype=np.int64)
    for held in (PackedStrings.of(strings), list(strings)):
        shard = type("Shard", (), {"strings": held})()
        assert _strings_of(shard, ids) == [strings[i] for i in ids.tolist()]
