"""The workers' canonical numbering equals the one-process numbering (all keys sorted in one
array, :func:`bloomspan.sidecar.run.snapshot.canonical_rows`): every shard's global numbers and
the doc map parts, with skipped documents, non-ASCII keys of any width, empty shards and a key
read by two slices (refused)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings, strategies as st

from bloomspan.sidecar.cluster.document_keys import keys_array
from bloomspan.sidecar.cluster.document_status import SKIP_REASONS, STORED
from bloomspan.sidecar.distributed.doc_numbering import doc_map_part, doc_map_piece, key_block, ranks_in, shard_numbers
from bloomspan.sidecar.run.snapshot import canonical_rows

SKIPPED = next(iter(SKIP_REASONS))


def _shard(keys: list[str], stored: list[bool]):
    meta = np.zeros((len(keys), 5), dtype=np.int64)
    meta[:, 3] = [STORED if s else SKIPPED for s in stored]
    return SimpleNamespace(keys=keys, meta=meta)


def _numbered(shards):
    blocks = [key_block(s) for s in shards]
    out = [shard_numbers(b, *[ranks_in(o, b, j == k) for j, o in enumerate(blocks)]) for k, b in enumerate(blocks)]
    return blocks, out


def _reference(shards):
    """Global numbers per shard (shard order of its stored documents) and the stored keys in
    canonical order, as the driver computed them from every key."""
    keys = [k for s in shards for k in s.keys]
    status = np.concatenate([s.meta[:, 3] for s in shards]) if shards else np.zeros(0, dtype=np.int64)
    owner = np.concatenate([np.full(len(s.keys), k) for k, s in enumerate(shards)])
    rows = canonical_rows(keys_array([k.encode("utf-8", "surrogatepass") for k in keys]))
    stored_rows = rows[status[rows] == STORED]
    number = np.full(len(keys), -1, dtype=np.int64)
    number[stored_rows] = np.arange(stored_rows.size)
    per_shard = [number[(owner == k) & (status == STORED)] for k in range(len(shards))]
    return per_shard, [keys[i] for i in stored_rows.tolist()]


keys_strategy = st.lists(st.text(alphabet="ab\u00e9\u4e2dz0", min_size=1, max_size=6), unique=True, max_size=40)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(keys_strategy, st.integers(1, 4), st.integers(0, 2**32 - 1), st.integers(1, 7))
def test_numbers_and_doc_map_equal_the_one_process_numbering(keys, n_shards, seed, part):
    rng = np.random.default_rng(seed)
    owner = rng.integers(0, n_shards, len(keys))
    stored = rng.random(len(keys)) < 0.8
    shards = [_shard([k for k, o in zip(keys, owner) if o == s], [b for b, o in zip(stored, owner) if o == s])
              for s in range(n_shards)]
    blocks, numbered = _numbered(shards)
    want_numbers, want_keys = _reference(shards)
    for (got, _, repeated), want in zip(numbered, want_numbers):
        assert repeated == 0
        assert got.tolist() == want.tolist()
    n_docs = len(want_keys)
    doc_map = []
    for lo in range(0, n_docs, part):
        hi = min(lo + part, n_docs)
        doc_map += doc_map_part(lo, hi, *[doc_map_piece(b, n[1], lo, hi) for b, n in zip(blocks, numbered)])
    assert doc_map == want_keys
    assert sum(b.n_all for b in blocks) == len(keys)


def test_a_key_read_by_two_slices_is_counted():
    shards = [_shard(["a", "b"], [True, True]), _shard(["b", "c"], [True, False])]
    _, numbered = _numbered(shards)
    assert sum(n[2] for n in numbered) == 2
    _, numbered = _numbered([_shard(["a", "a"], [True, True])])
    assert numbered[0][2] == 1


def test_keys_of_other_widths_are_compared_whole():
    # numpy compares S arrays at one width: a wider key cut to "ab" would rank as "ab"
    shards = [_shard(["ab"], [True]), _shard(["abc", "a"], [True, True])]
    _, numbered = _numbered(shards)
    assert [n[0].tolist() for n in numbered] == [[1], [2, 0]]
