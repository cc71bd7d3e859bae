"""The canonical numbering and the doc map of a Dask index run, computed on the workers.

A document's number is its rank among the run's stored documents in canonical order
(ascending key bytes, :mod:`bloomspan.sidecar.run.snapshot`). Every slice knows its own keys;
the rank of a key in the whole corpus is the sum of its ranks in every slice's sorted keys.
So the workers number the documents without any process holding every key:

* :func:`key_block`: a slice's keys sorted (on the worker holding the shard);
* :func:`ranks_in`: the rank of one block's keys among another block's stored keys, and how
  many of them the other block holds too (a document read twice: the run is refused);
* :func:`shard_numbers`: a shard's global numbers, the sum of its ranks in every block;
* :func:`doc_map_piece` and :func:`doc_map_part`: the keys of documents ``lo .. hi-1``, the
  doc map part the driver writes to its run folder one part at a time.

The driver sends and receives, per slice, the global numbers of its stored documents (8 B per
document, what the mining stages place the shards by) and counts; the keys only travel between
workers, and to the driver one doc map part at a time.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bloomspan.sidecar.cluster.document_keys import keys_array
from bloomspan.sidecar.cluster.document_status import SKIP_REASONS, STORED


@dataclass
class KeyBlock:
    """One slice's keys, sorted.

    keys:     ``S`` array (N,) every key the slice read (stored and skipped), ascending
    rows:     int64 (N,) the row in the slice's read of each key
    stored:   bool (N,) whether the document is stored (mined)
    skipped:  documents skipped, by reason
    """

    keys: np.ndarray
    rows: np.ndarray
    stored: np.ndarray
    skipped: dict[str, int]

    @property
    def n_all(self) -> int:
        return int(self.keys.shape[0])

    def stored_before(self) -> np.ndarray:
        """int64 (N+1,): stored documents among the first i keys."""
        out = np.zeros(self.n_all + 1, dtype=np.int64)
        np.cumsum(self.stored, out=out[1:])
        return out


def key_block(shard) -> KeyBlock:
    """The sorted keys of an index slice's read (:class:`~.shards.ShardCorpus` ``keys``, ``meta``)."""
    keys = keys_array([k.encode("utf-8", "surrogatepass") for k in shard.keys])
    status = np.asarray(shard.meta[:, 3], dtype=np.int64) if len(shard.keys) else np.zeros(0, dtype=np.int64)
    order = np.argsort(keys, kind="stable").astype(np.int64)
    skipped = {name: int(np.count_nonzero(status == code)) for code, name in SKIP_REASONS.items()}
    return KeyBlock(keys[order], order, status[order] == STORED, skipped)


def _common(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both key arrays at one width (numpy would cut the wider ones to the narrower width)."""
    width = max(a.dtype.itemsize, b.dtype.itemsize, 1)
    return a.astype(f"S{width}", copy=False), b.astype(f"S{width}", copy=False)


def ranks_in(other: KeyBlock, block: KeyBlock, same: bool = False) -> tuple[np.ndarray, int]:
    """(int64 (N,) number of ``other``'s stored keys below each key of ``block``, keys of
    ``block`` that ``other`` holds too). ``same``: ``other`` is ``block`` itself (its
    repeated keys count, each key once)."""
    if same:
        repeated = int(np.count_nonzero(block.keys[1:] == block.keys[:-1])) if block.n_all > 1 else 0
        return block.stored_before()[:-1], repeated
    theirs, mine = _common(other.keys, block.keys)
    left = np.searchsorted(theirs, mine, side="left")
    right = np.searchsorted(theirs, mine, side="right")
    return other.stored_before()[left], int(np.count_nonzero(right > left))


def shard_numbers(block: KeyBlock, *ranks: tuple[np.ndarray, int]) -> tuple[np.ndarray, np.ndarray, int]:
    """(global number of each of the shard's stored documents, in the shard's order (its
    ``global_docs``); the same numbers in the block's key order; keys read twice)."""
    total = np.zeros(block.n_all, dtype=np.int64)
    repeated = 0
    for r, n in ranks:
        total += r
        repeated += n
    by_row = np.full(block.n_all, -1, dtype=np.int64)
    by_row[block.rows] = total
    stored_by_row = np.zeros(block.n_all, dtype=bool)
    stored_by_row[block.rows] = block.stored
    return by_row[stored_by_row], total[block.stored], repeated


def doc_map_piece(block: KeyBlock, sorted_numbers: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, list[str]]:
    """(numbers, keys) of the block's stored documents numbered ``lo .. hi-1``.
    ``sorted_numbers``: the global numbers of its stored keys in key order (ascending)."""
    a, b = np.searchsorted(sorted_numbers, [lo, hi])
    keys = block.keys[block.stored][a:b]
    return sorted_numbers[a:b], [k.decode("utf-8", "surrogatepass") for k in keys.tolist()]


def doc_map_part(lo: int, hi: int, *pieces: tuple[np.ndarray, list[str]]) -> list[str]:
    """The keys of documents ``lo .. hi-1`` in number order, from every shard's piece."""
    numbers = np.concatenate([p[0] for p in pieces]) if pieces else np.zeros(0, dtype=np.int64)
    keys = [k for p in pieces for k in p[1]]
    order = np.argsort(numbers, kind="stable")
    if not np.array_equal(numbers[order], np.arange(lo, hi, dtype=np.int64)):
        raise ValueError(f"doc map part {lo}..{hi}: the shards' numbers do not cover it once each")
    return [keys[i] for i in order.tolist()]
