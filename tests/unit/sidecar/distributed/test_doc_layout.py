"""The global starts computed beside the shards (:mod:`bloomspan.sidecar.distributed.doc_layout`)
equal the full corpus' document offsets, for documents of a shard scattered anywhere in the
global order (an index run) and for shards that follow each other (a file run), empty
documents and empty shards included."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings, strategies as st

from bloomspan.sidecar.distributed.doc_layout import (
    contiguous_numbers,
    contiguous_starts,
    length_block,
    summed,
    tokens_before,
)


def _shard(lengths: np.ndarray):
    return SimpleNamespace(doc_offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(0, 60), n_shards=st.integers(1, 6))
def test_starts_of_scattered_documents_are_the_global_offsets(seed, n_docs, n_shards):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 20, n_docs)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    owner = rng.integers(0, n_shards, n_docs)
    # a shard keeps its read order, which is not the global order
    global_docs = [rng.permutation(np.flatnonzero(owner == k)) for k in range(n_shards)]
    shards = [_shard(lengths[g]) for g in global_docs]
    blocks = [length_block(s, g) for s, g in zip(shards, global_docs)]
    for g in global_docs:
        starts = summed(*[tokens_before(b, g) for b in blocks])
        assert starts.tolist() == offsets[g].tolist()


def test_shards_that_follow_each_other():
    lengths = [np.array([3, 0, 2]), np.array([], dtype=np.int64), np.array([4, 1])]
    offsets = np.concatenate([[0], np.cumsum(np.concatenate(lengths))]).astype(np.int64)
    doc_base = token_base = 0
    for n in lengths:
        shard = _shard(n)
        numbers = contiguous_numbers(n.shape[0], doc_base)
        assert contiguous_starts(shard, token_base).tolist() == offsets[numbers].tolist()
        doc_base += n.shape[0]
        token_base += int(n.sum())
