"""Coverage of a distributed run, built per document shard and reduced without the mask.

Each document shard turns the occurrences the growth shards sent it into its own coverage
mask (on the worker, the size of its share) and keeps of it what publication and the report
need (:class:`ShardCoverage`, a result that stays on the worker):

* the covered tokens of each of its documents (4 bytes per document): the report's
  ``covered_share``, clutter histogram, most cluttered documents and sites are functions of
  these counts alone, summed on the worker
  (:func:`bloomspan.sidecar.publish.document_figures.document_figures`), and the template stage
  reads them beside the pages (:mod:`.site_templates`);
* for an index run, the covered positions in the full corpus' numbering as roaring bitmaps,
  one per publication chunk (what :func:`bloomspan.sidecar.publish.publication.coverage_for`
  makes of a whole mask): a shard's documents lie anywhere in the canonical order, so the
  worker is given where each of its documents starts (:mod:`.doc_layout`).

The driver receives per shard only its covered tokens (:func:`coverage_sent`,
:class:`CoverageReduction`). The bitmaps stay with the shards: each chunk of the published
coverage is the OR of the shards' parts of it (:func:`union_chunk`), made on a worker
(:func:`chunk_part` beside each shard, then one task per chunk) and fetched by the driver one
chunk at a time into the run folder (:class:`CoverageChunks`). So the driver holds at most one
chunk's compressed bitmap (≤ COVERAGE_CHUNK_TOKENS positions), never the run's coverage, an
integer per document or a byte per token. :class:`CoverageReduction` with bitmaps is the same
OR done in one process (its plain reference, in the tests).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bloomspan.engine.mining.coverage import coverage_mask
from bloomspan.engine.mining.report import covered_per_doc
from bloomspan.sidecar.publish.document_figures import DocumentFigures, document_figures
from bloomspan.sidecar.publish.publication import document_sites
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


def shard_figures(shard, cover: ShardCoverage, global_docs: np.ndarray, site_field: str | None, top: int,
                  bins: int) -> DocumentFigures:
    """The report's figures of one document shard (:class:`~.shards.ShardCorpus`), summed where
    it lives: its covered counts, lengths, global numbers and (with a site field) sites."""
    sites = document_sites(shard.fields[site_field], None) if site_field else None
    return document_figures(cover.covered, np.diff(shard.doc_offsets), global_docs, sites, top, bins)


@dataclass
class CoverageSent:
    """What the driver receives of a :class:`ShardCoverage`: the shard's covered tokens and its bitmaps."""

    covered_tokens: int
    bitmaps: dict[int, bytes] | None

    @property
    def nbytes(self) -> int:
        return int(8 + sum(len(b) for b in (self.bitmaps or {}).values()))


def coverage_sent(summary: ShardCoverage, with_bitmaps: bool = True) -> CoverageSent:
    """The part of a shard's coverage the driver receives (its per-document counts stay):
    its covered tokens and, ``with_bitmaps``, its bitmaps (an index run leaves them on the
    worker for :class:`CoverageChunks`)."""
    return CoverageSent(int(summary.covered.sum(dtype=np.int64)), summary.bitmaps if with_bitmaps else None)


def union_chunk(parts: list[bytes | None]) -> bytes:
    """One chunk of the run's coverage bitmap, serialized: the OR of the shards' parts of it
    (each a serialized bitmap of chunk-relative positions, or None for a shard without one)."""
    from pyroaring import BitMap

    bm = BitMap()
    for data in parts:
        if data is not None:
            bm |= BitMap.deserialize(data)
    return bm.serialize()


def chunk_part(cover: ShardCoverage, k: int) -> bytes | None:
    """The shard's part of coverage chunk ``k`` (None when it covers nothing there)."""
    return (cover.bitmaps or {}).get(k)


class CoverageChunks:
    """The run's coverage bitmaps, left in the shards' :class:`ShardCoverage` on the workers:
    :meth:`write` makes each chunk on a worker (:func:`union_chunk` of the shards'
    :func:`chunk_part`) and writes it to a file before asking for the next."""

    def __init__(self, client, covers: list, n_tokens: int, run: str):
        self._client, self._covers, self._run = client, covers, run
        _, self.n_chunks = coverage_chunks(n_tokens)
        self.bytes_fetched = 0

    def write(self, folder) -> list:
        """The chunk files ``folder/coverage-{k:06d}.roaring``, in chunk order."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for k in range(self.n_chunks):
            parts = [self._client.submit(chunk_part, c, k, key=f"bloomspan-covpart-{self._run}-{j}-{k}")
                     for j, c in enumerate(self._covers)]
            data = self._client.submit(union_chunk, parts, key=f"bloomspan-covchunk-{self._run}-{k}").result()
            del parts
            self.bytes_fetched += len(data)
            path = folder / f"coverage-{k:06d}.roaring"
            path.write_bytes(data)
            paths.append(path)
        return paths


class CoverageReduction:
    """The driver's side: the covered tokens and the coverage bitmaps of ``n_shards`` shards.

    ``add(k, sent)`` in any order; ``covered_tokens`` and ``bitmaps()`` (the list
    :func:`bloomspan.sidecar.publish.template_index.publish` takes) once every shard is in.
    """

    def __init__(self, n_shards: int, n_tokens: int, with_bitmaps: bool):
        from pyroaring import BitMap

        self.n_shards = n_shards
        self.covered_tokens = 0
        _, n_chunks = coverage_chunks(n_tokens)
        self._bitmaps = [BitMap() for _ in range(n_chunks)] if with_bitmaps else None
        self._seen: set[int] = set()

    def add(self, shard_no: int, sent: CoverageSent) -> None:
        from pyroaring import BitMap

        if shard_no in self._seen:
            raise ValueError(f"coverage of shard {shard_no} added twice")
        self._seen.add(shard_no)
        self.covered_tokens += int(sent.covered_tokens)
        if self._bitmaps is not None:
            for k, data in (sent.bitmaps or {}).items():
                self._bitmaps[k] |= BitMap.deserialize(data)

    def bitmaps(self) -> list:
        if self._bitmaps is None:
            raise ValueError("this reduction was built without bitmaps (with_bitmaps=False)")
        if len(self._seen) != self.n_shards:
            raise ValueError(f"coverage of {self.n_shards - len(self._seen)} shard(s) is missing")
        return self._bitmaps
