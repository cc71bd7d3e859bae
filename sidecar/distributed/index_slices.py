"""How a Dask run cuts a live index into read tasks: slices of every shard of every index."""
from __future__ import annotations

from .shards import IndexSlice

SLICE_DOCS = 16_000  # at most about this many documents per read task (~10 M tokens of web pages)
MAX_SLICES_PER_PIT = 1024  # the default index.max_slices_per_pit of OpenSearch and Elasticsearch


def slices_per_shard(n_docs: int, n_units: int, n_workers: int) -> int:
    """Slices of each index shard: enough to keep every worker busy twice, and small enough
    that one read task holds at most ~SLICE_DOCS documents (a worker's memory while counting
    grows with the shard it counts, so a few large shards would not fit where many small
    ones do)."""
    units = max(1, n_units)
    by_workers = -(-2 * n_workers // units)
    by_size = -(-max(0, n_docs) // (SLICE_DOCS * units))
    return max(1, min(max(by_workers, by_size), MAX_SLICES_PER_PIT // units))


def index_slices(indices: list[str], units, n_workers: int, pits: dict[str, str | None], n_docs: int
                 ) -> list[IndexSlice]:
    """Read tasks: every shard (``units``: the scan units of ``indices``), split into
    :func:`slices_per_shard` slices, each reading its index's point in time ``pits[index]``."""
    per_shard = slices_per_shard(n_docs, len(units), n_workers)
    shards_of: dict[str, int] = {}
    for u in units:
        shards_of[u.index] = u.n_shards
    return [IndexSlice(index, i, shards_of[index] * per_shard, pits.get(index))
            for index in indices for i in range(shards_of[index] * per_shard)]
