"""Fragments on the wire: packing keeps each distinct content once and unpacks to the very
arrays it was given, whatever repeats, collisions or empty parts it holds."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from bloomspan.engine.distributed import fragment_packing as fp
from bloomspan.engine.distributed.sharded_growth import NO_LEFT, Fragments, fragments_for


def _fragments(contents: list[tuple[list[int], list[int]]], pattern: list[int], owner: int = 3) -> Fragments:
    """Fragments whose f-th content is ``contents[pattern[f]]`` (tokens, starts relative to it)."""
    offsets, tokens, starts = [0], [], []
    for c in pattern:
        body, rel = contents[c]
        starts += [offsets[-1] + r for r in rel]
        tokens += body
        offsets.append(offsets[-1] + len(body))
    n = len(pattern)
    as64 = lambda xs: np.asarray(xs, dtype=np.int64)  # noqa: E731
    return Fragments(as64(range(100, 100 + n)), as64([owner] * n), as64(range(7, 7 + 5 * n, 5)), as64(offsets),
                     np.asarray(tokens, dtype=np.uint32), as64(starts))


def _equal(a: Fragments, b: Fragments) -> bool:
    return all(np.array_equal(getattr(a, k), getattr(b, k)) and getattr(a, k).dtype == getattr(b, k).dtype
               for k in ("doc", "owner", "label", "offsets", "tokens", "starts"))


content = st.integers(1, 6).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([0, 1, 2, int(NO_LEFT)]), min_size=n, max_size=n),
    st.lists(st.integers(1, n - 1), max_size=3, unique=True).map(sorted) if n > 1 else st.just([])))


@settings(max_examples=120, deadline=None)
@given(contents=st.lists(content, min_size=1, max_size=5), pattern=st.lists(st.integers(0, 4), max_size=25))
@example(contents=[([NO_LEFT, 1, 2], [1]), ([NO_LEFT, 1, 2], [2])], pattern=[0, 1, 0, 1])  # same tokens, other starts
def test_unpack_of_pack_is_the_identity(contents, pattern):
    pattern = [p % len(contents) for p in pattern]
    f = _fragments(contents, pattern)
    packed = fp.pack_fragments(f)
    assert _equal(fp.unpack_fragments(packed), f)
    assert _equal(fp.unpack_fragments_reference(packed), f)
    distinct = {(tuple(contents[p][0]), tuple(contents[p][1])) for p in pattern}
    assert packed.offsets.shape[0] - 1 == len(distinct)  # each distinct content once


def test_a_hash_collision_keeps_two_contents(monkeypatch):
    """Contents are compared, not only hashed: with every hash equal nothing merges wrongly."""
    def same_hash(offsets, tokens, start_offsets, rel, out):
        out[:] = 42
    monkeypatch.setattr(fp, "_content_hashes", same_hash)
    f = _fragments([([NO_LEFT, 1, 2], [1]), ([0, 1, 2], [1]), ([NO_LEFT, 1, 2], [1])], [0, 1, 2, 1, 0])
    packed = fp.pack_fragments(f)
    assert packed.offsets.shape[0] - 1 == 2
    assert _equal(fp.unpack_fragments(packed), f)


def test_empty_parts_and_the_fragments_of_a_real_cut():
    assert fp.unpack_fragments(fp.pack_fragments(Fragments.empty())).doc.size == 0
    seg_offsets = np.asarray([0, 6, 12, 18], dtype=np.int64)
    seg_tokens = np.asarray([5, 1, 2, 3, 4, 9] * 3, dtype=np.uint32)  # one interval on three pages
    f = fragments_for(seg_offsets, seg_tokens, np.asarray([0, 1, 2]), np.asarray([10, 40, 90]),
                      np.asarray([0, 0, 1, 1, 2, 2]), np.asarray([1, 2, 1, 2, 1, 2]), np.zeros(6, dtype=np.int64), 0, 1)
    packed = fp.pack_fragments(f)
    assert packed.offsets.shape[0] - 1 == 1 and packed.nbytes < f.nbytes
    assert _equal(fp.unpack_fragments(packed), f)


def test_fragments_of_two_document_shards_are_refused():
    f = _fragments([([1, 2], [1])], [0, 0])
    f.owner[1] = 4
    with pytest.raises(ValueError, match="one document shard"):
        fp.pack_fragments(f)


@settings(max_examples=80, deadline=None)
@given(contents=st.lists(content, min_size=1, max_size=5),
       patterns=st.lists(st.lists(st.integers(0, 4), max_size=12), max_size=4))
def test_unpack_concatenated_equals_each_part_unpacked_then_concatenated(contents, patterns):
    parts = [fp.pack_fragments(_fragments(contents, [i % len(contents) for i in pattern], owner=k))
             for k, pattern in enumerate(patterns)]
    assert _equal(fp.unpack_concatenated(parts), fp.unpack_concatenated_reference(parts))
