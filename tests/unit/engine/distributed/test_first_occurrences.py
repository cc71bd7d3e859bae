"""First occurrences by hash with strings compared, against a dict over every (shard, string)."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from bloomspan.engine.distributed.first_occurrences import first_occurrences, first_occurrences_reference
from bloomspan.engine.distributed.windows import PackedStrings, string_hashes

_shards = st.lists(st.lists(st.text(alphabet="abc\u00e9", max_size=3), max_size=12), min_size=1, max_size=5)


def _parts(shards):
    """Each shard's distinct strings, some of their local ids (ascending), and those strings."""
    ids, packed, all_strings = [], [], []
    for k, words in enumerate(shards):
        vocab = list(dict.fromkeys(words))
        keep = [j for j in range(len(vocab)) if (j + k) % 3]  # a partition holds some of a shard's ids
        ids.append(np.asarray(keep, dtype=np.uint32))
        packed.append(PackedStrings.of([vocab[j] for j in keep]))
        all_strings += [vocab[j] for j in keep]
    return ids, packed, sorted(set(all_strings))


def _assert_same(got, ref, strings, hashes=None):
    assert len(got.first_ids) == len(ref.first_ids)
    for g, r in zip(got.first_ids, ref.first_ids):
        assert g.dtype == r.dtype and np.array_equal(g, r)
    assert np.array_equal(got.locate(strings, hashes), ref.locate(strings))
    assert np.array_equal(got.counts, ref.counts)


@settings(max_examples=80, deadline=None)
@given(shards=_shards)
def test_first_occurrences_match_reference(shards):
    ids, packed, strings = _parts(shards)
    _assert_same(first_occurrences(ids, packed), first_occurrences_reference(ids, packed), strings)


@settings(max_examples=80, deadline=None)
@given(shards=_shards, n_hashes=st.integers(1, 3))
def test_colliding_hashes_never_merge_two_strings(shards, n_hashes):
    """Hashes forced into 1-3 values: every group mixes strings, which are then compared."""
    ids, packed, strings = _parts(shards)
    hashes = [p.hashes() % np.uint64(n_hashes) for p in packed]
    got = first_occurrences(ids, packed, hashes)
    _assert_same(got, first_occurrences_reference(ids, packed), strings,
                 string_hashes(strings) % np.uint64(n_hashes))


def test_a_collision_is_resolved_by_the_strings():
    packed = [PackedStrings.of(["x", "y"]), PackedStrings.of(["y", "z"])]
    ids = [np.asarray([0, 1], dtype=np.uint32), np.asarray([0, 1], dtype=np.uint32)]
    hashes = [np.asarray([7, 7], dtype=np.uint64), np.asarray([7, 9], dtype=np.uint64)]
    got = first_occurrences(ids, packed, hashes)
    assert set(got.collided) == {"x", "y"}
    assert got.locate(["x", "y", "z"], np.asarray([7, 7, 9], dtype=np.uint64)).tolist() == [[0, 0], [0, 1], [1, 1]]
    assert [a.tolist() for a in got.first_ids] == [[0, 1], [1]]


def test_shards_without_strings_between_others_keep_every_string_apart():
    """Empty parts add no bytes to the joined buffer (a pad byte per empty shard once shifted
    the end of the string before it, so '' in shard 3 differed from '' in shard 2)."""
    shards = [[], [], [""], ["a", ""], []]
    ids, packed, strings = _parts(shards)
    _assert_same(first_occurrences(ids, packed), first_occurrences_reference(ids, packed), strings)
