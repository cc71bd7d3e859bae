"""How a Dask index run cuts the index into read tasks."""
from __future__ import annotations

import pytest

from bloomspan.sidecar.distributed.index_slices import MAX_SLICES_PER_PIT, SLICE_DOCS, slices_per_shard


@pytest.mark.parametrize("n_docs,units,workers,expected", [
    (1_000, 2, 1, 1),                 # small index: two read tasks for one worker
    (1_000, 2, 2, 2),                 # every worker busy twice
    (160_000, 2, 1, 5),               # large index: ~SLICE_DOCS documents per task
    (160_000, 2, 8, 8),
    (0, 3, 1, 1),
    (10**12, 4, 1, MAX_SLICES_PER_PIT // 4),  # never above the point in time's slice limit
])
def test_slices_per_shard(n_docs, units, workers, expected):
    got = slices_per_shard(n_docs, units, workers)
    assert got == expected
    if expected < MAX_SLICES_PER_PIT // units:
        assert n_docs / (got * units) <= SLICE_DOCS
