"""Canonical Roaring bytes: one serialization per member set, whatever built the bitmap (an
update from positions, an OR of shard bitmaps, ranges, a deserialized copy, run_optimize'd or
not), and plain portable Roaring that pyroaring reads and writes back unchanged."""
from __future__ import annotations

import base64
import struct

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st
from pyroaring import BitMap

from bloomspan.sidecar.publish import roaring_format
from bloomspan.sidecar.publish.bitmaps import encode_bitmap
from bloomspan.sidecar.publish.roaring_format import (
    ARRAY,
    BITSET,
    RUN,
    RoaringFormatError,
    canonical_kind,
    canonical_serialization,
)

SPAN = 1 << 16
# the bitmaps of the report that found the tie: members 23, 369-371, 388-391, 442 (9 members in
# 4 runs, 18 bytes either way), once as a run container, once as an array
TIE_AS_RUN = "OzAAAAEAAAgABAAXAAAAcQECAIQBAwC6AQAA"
TIE_AS_ARRAY = "OjAAAAEAAAAAAAgAEAAAABcAcQFyAXMBhAGFAYYBhwG6AQ=="
TIE_MEMBERS = [23, 369, 370, 371, 388, 389, 390, 391, 442]

# ranges (container, first, length) in a few containers, the last one near 2**32; lengths from
# single members (arrays, ties) to more than 4096 (bitsets) and whole containers
ranges = st.lists(st.tuples(st.sampled_from([0, 1, 7, SPAN - 1]), st.integers(0, SPAN - 1),
                            st.one_of(st.integers(1, 4), st.integers(1, 9000), st.just(SPAN))),
                  max_size=40)


def _members(spans) -> np.ndarray:
    """uint32 sorted members of the union of ``(container, first, length)`` ranges."""
    parts = [np.arange(c * SPAN + a, min(c * SPAN + a + n, (c + 1) * SPAN), dtype=np.int64) for c, a, n in spans]
    return np.unique(np.concatenate(parts)).astype(np.uint32) if parts else np.zeros(0, dtype=np.uint32)


def _constructions(spans, members: np.ndarray, seed: int) -> dict[str, BitMap]:
    rng = np.random.default_rng(seed)
    built = {"update": BitMap(members)}
    by_ranges = BitMap()
    for c, a, n in spans:
        by_ranges.add_range(c * SPAN + a, min(c * SPAN + a + n, (c + 1) * SPAN))
    built["add_range"] = by_ranges
    ored = BitMap()
    owner = rng.integers(0, 3, members.size)
    for k in range(3):
        part = BitMap(members[owner == k])
        part.run_optimize()
        ored |= part
    built["or_of_parts"] = ored
    hull = BitMap()  # per container: every position from its first member to its last, less the gaps
    for key in np.unique(members >> 16).tolist():
        mine = members[(members >> 16) == key].astype(np.int64)
        hull.add_range(int(mine[0]), int(mine[-1]) + 1)
        hull.difference_update(BitMap(np.setdiff1d(np.arange(mine[0], mine[-1] + 1), mine).astype(np.uint32)))
    built["hull_minus_gaps"] = hull
    built["deserialized"] = BitMap.deserialize(BitMap(members).serialize())
    optimized = BitMap(members)
    optimized.run_optimize()
    built["deserialized_optimized"] = BitMap.deserialize(optimized.serialize())
    for name in list(built):
        copy = BitMap(built[name])
        copy.run_optimize()
        built[f"{name}+run_optimize"] = copy
    return built


@settings(max_examples=120, deadline=None)
@given(ranges, st.integers(0, 2**32 - 1))
@example([(0, 23, 1), (0, 369, 3), (0, 388, 4), (0, 442, 1)], 2019)  # the tie the report found
@example([(0, 0, SPAN), (1, 5, 1)], 0)  # a full container, a single member
@example([(7, a, 1) for a in range(0, 2 * 2049, 2)] + [(7, 5000, 3000)], 1)  # bitset, 2049+ runs
def test_the_same_members_give_the_same_bytes_however_built(spans, seed):
    members = _members(spans)
    built = _constructions(spans, members, seed)
    raw = {name: canonical_serialization(bm.serialize()) for name, bm in built.items()}
    first = raw["update"]
    assert all(data == first for data in raw.values()), {n: d.hex()[:80] for n, d in raw.items()}
    assert {encode_bitmap(bm) for bm in built.values()} == {base64.b64encode(first).decode("ascii")}
    back = BitMap.deserialize(first)
    assert np.array_equal(np.array(back.to_array(), dtype=np.uint32), members)
    assert back.serialize() == first  # pyroaring keeps the container forms it read
    assert canonical_serialization(first) == first
    _assert_containers_follow_the_rule(first, members)


def _assert_containers_follow_the_rule(data: bytes, members: np.ndarray) -> None:
    """Every container is in the form canonical_kind gives its members (read from the spec)."""
    (cookie,) = struct.unpack_from("<I", data, 0)
    keys = np.unique(members >> 16)
    if cookie == 12346:
        flags = [0] * keys.size
    else:
        assert cookie & 0xFFFF == 12347 and (cookie >> 16) + 1 == keys.size
        flags = np.unpackbits(np.frombuffer(data, np.uint8, (keys.size + 7) // 8, 4), bitorder="little")
    for i, key in enumerate(keys.tolist()):
        low = (members[(members >> 16) == key] & 0xFFFF).astype(np.int64)
        n_runs = 1 + int(np.count_nonzero(np.diff(low) != 1))
        expected = canonical_kind(low.size, n_runs)
        assert (RUN if flags[i] else (ARRAY if low.size <= 4096 else BITSET)) == expected, key


def test_the_reported_tie_is_one_serialization():
    as_run, as_array = base64.b64decode(TIE_AS_RUN), base64.b64decode(TIE_AS_ARRAY)
    assert BitMap.deserialize(as_run) == BitMap.deserialize(as_array) == BitMap(TIE_MEMBERS)
    assert as_run != as_array
    assert canonical_serialization(as_run) == canonical_serialization(as_array) == as_array  # ties: array


@pytest.mark.parametrize(("card", "n_runs", "kind"), [
    (9, 4, ARRAY),  # 18 bytes either way: the array
    (11, 4, RUN),  # 18 < 22
    (4096, 2048, ARRAY), (4096, 2047, RUN),  # 8194 > 8192, 8190 < 8192
    (4097, 2048, BITSET), (4097, 2047, RUN), (SPAN, 1, RUN), (1, 1, ARRAY),
])
def test_canonical_kind(card, n_runs, kind):
    assert canonical_kind(card, n_runs) == kind


def test_the_empty_bitmap_is_pyroarings_own_bytes():
    assert canonical_serialization(BitMap().serialize()) == BitMap().serialize()


@pytest.mark.parametrize(("data", "message"), [
    (b"\x01", "too short for a Roaring cookie"),
    (struct.pack("<I", 99), "cookie 99: not a portable Roaring serialization"),
    (struct.pack("<II", 12346, 3), "too short for 3 container headers"),
    (BitMap(range(0, 200, 2)).serialize()[:-2], r"container 0 \(array\) runs past the end"),
])
def test_bytes_that_are_not_roaring_are_refused_by_name(data, message):
    with pytest.raises(RoaringFormatError, match=message):
        canonical_serialization(data)


def test_both_popcounts_count_the_set_bits():
    words = np.random.default_rng(3).integers(0, 2**63, (5, 7), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    naive = np.array([[bin(int(w)).count("1") for w in row] for row in words])
    assert np.array_equal(roaring_format._popcount(words), naive)
    assert np.array_equal(roaring_format._popcount_unpacked(words), naive)
