"""Coverage of a distributed run, built per document shard and reduced without the mask.

Each document shard turns the occurrences the growth shards sent it into its own coverage
mask (on the worker, the size of its share) and sends back only what publication and the
report need of it (:class:`ShardCoverage`):

* the covered tokens of each of its documents (4 bytes per document): the report's
  ``covered_share``, clutter histogram, most cluttered documents and sites are functions of
  these counts alone (:func:`bloomspan.engine.mining.report.coverage_report_from_counts`);
* for an index run, the covered positions in the full corpus' numbering as roaring bitmaps,
  one per publication chunk (what :func:`bloomspan.sidecar.publish.publication.coverage_for`
  makes of a whole mask): a shard's documents lie anywhere in the canonical order, so the
  worker is told where each of its documents starts.

The driver (:class:`CoverageReduction`) places the counts by global document number and ORs
the bitmaps chunk by chunk as the shards finish. It holds one integer per document and the
compressed coverage bitmap it publishes, never a byte per token.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bloomspan.engine.mining.coverage import coverage_mask
from bloomspan.engine.mining.report import covered_per_doc
from bloomspan.sidecar.publish.template_index import COVERAGE_CHUNK_TOKENS


def coverage_chunks(n_tokens: int) -> tuple[int, int]:
    """(chunk_tokens, chunks) of a corpus' published coverage, as ``coverage_for`` cuts it:
    one bitmap of absolute positions up to COVERAGE_CHUNK_TOKENS tokens, else chunks of it."""
    if n_tokens <= COVERAGE_CHUNK_TOKENS:
        return max(n_tokens, 1), 1
    return COVERAGE_CHUNK_TOKENS, -(-n_tokens // COVERAGE_CHUNK_TOKENS)


@dataclass
class ShardCoverage:
    """What one document shard sends the driver.

    covered: uint32 (D_k,) covered tokens of each of the shard's documents, in shard order
    bitmaps: {chunk: serialized roaring bitmap} of the shard's covered positions in the full
             corpus (chunk-relative), only chunks it covers; None when not asked for
    """

    covered: np.ndarray
    bitmaps: dict[int, bytes] | None

    @property
    def nbytes(self) -> int:
        return int(self.covered.nbytes + sum(len(b) for b in (self.bitmaps or {}).values()))


def shard_mask(doc_offsets: np.ndarray, parts: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """bool (W_k,) coverage mask of one document shard (W_k = doc_offsets[-1]) from the
    occurrences (starts in the shard, lengths) every growth shard sent it."""
    starts = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    lengths = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    return coverage_mask(int(doc_offsets[-1]), starts, lengths)


def shard_coverage(doc_offsets: np.ndarray, parts: list[tuple[np.ndarray, np.ndarray]],
                   global_starts: np.ndarray | None, n_tokens_total: int) -> ShardCoverage:
    """This document shard's coverage summary.

    doc_offsets:   int64 (D_k+1,) the shard's document boundaries (shard positions)
    parts:         (occurrence starts in the shard, lengths) from every growth shard
    global_starts: int64 (D_k,) where each of its documents starts in the full corpus, or
                   None for no bitmaps (a JSON Lines run publishes none)
    n_tokens_total: tokens of the full corpus (fixes the chunking)
    """
    from pyroaring import BitMap

    doc_offsets = np.asarray(doc_offsets, dtype=np.int64)
    mask = shard_mask(doc_offsets, parts)
    covered = covered_per_doc(mask, doc_offsets).astype(np.uint32)
    if global_starts is None:
        return ShardCoverage(covered, None)
    chunk_tokens, _ = coverage_chunks(n_tokens_total)
    positions = np.flatnonzero(mask)
    doc = np.searchsorted(doc_offsets, positions, side="right") - 1
    positions += np.asarray(global_starts, dtype=np.int64)[doc] - doc_offsets[doc]
    del doc, mask
    positions.sort()
    chunk = positions // chunk_tokens
    bitmaps = {}
    for k in np.unique(chunk).tolist():
        a, b = np.searchsorted(chunk, [k, k + 1])
        bm = BitMap((positions[a:b] - k * chunk_tokens).astype(np.uint32))
        bm.run_optimize()
        bitmaps[int(k)] = bm.serialize()
    return ShardCoverage(covered, bitmaps)


class CoverageReduction:
    """The driver's side: per-document counts by global number, and the coverage bitmaps.

    ``add(k, summary)`` in any order; ``covered`` (int64 (D,)) and ``bitmaps()`` (the list
    :func:`bloomspan.sidecar.publish.template_index.publish` takes) once every shard is in.
    """

    def __init__(self, global_docs: list[np.ndarray], n_tokens: int, with_bitmaps: bool):
        from pyroaring import BitMap

        self.global_docs = global_docs
        self.covered = np.zeros(int(sum(g.shape[0] for g in global_docs)), dtype=np.int64)
        _, n_chunks = coverage_chunks(n_tokens)
        self._bitmaps = [BitMap() for _ in range(n_chunks)] if with_bitmaps else None
        self._seen: set[int] = set()

    def add(self, shard_no: int, summary: ShardCoverage) -> None:
        from pyroaring import BitMap

        if shard_no in self._seen:
            raise ValueError(f"coverage of shard {shard_no} added twice")
        self._seen.add(shard_no)
        self.covered[self.global_docs[shard_no]] = summary.covered
        if self._bitmaps is not None:
            for k, data in (summary.bitmaps or {}).items():
                self._bitmaps[k] |= BitMap.deserialize(data)

    @property
    def covered_tokens(self) -> int:
        return int(self.covered.sum())

    def bitmaps(self) -> list:
        if self._bitmaps is None:
            raise ValueError("this reduction was built without bitmaps (with_bitmaps=False)")
        if len(self._seen) != len(self.global_docs):
            raise ValueError(f"coverage of {len(self.global_docs) - len(self._seen)} shard(s) is missing")
        return self._bitmaps
