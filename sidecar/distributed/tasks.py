"""The worker tasks of a distributed mining run. Every task is a pure function of its
arguments and returns its result (no side effects), so Dask may run it again on another
worker after a failure and get the same value.

Shapes follow :mod:`bloomspan.engine.distributed.windows`; ``P`` is the number of
partitions of the key space (reducers), ``S`` the number of shards.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bloomspan.engine.distributed.windows import (
    Segments,
    distinct_document_counts,
    frequent_segments,
    is_member,
    partition_of,
    sum_by_key,
    window_hashes,
)

from .cluster import worker_progress
from .shards import ShardCorpus


@dataclass
class WindowPart:
    """What one shard sends to one reducer: hashes of windows found in exactly one of its
    documents (``once``, the bulk: 8 bytes each) and the others with their document counts."""

    once: np.ndarray    # uint64 (A,)
    keys: np.ndarray    # uint64 (B,)
    counts: np.ndarray  # uint32 (B,)

    @property
    def nbytes(self) -> int:
        return int(self.once.nbytes + self.keys.nbytes + self.counts.nbytes)


def _windows(shard: ShardCorpus, length: int):
    hashes, starts = window_hashes(shard.ids, shard.token_hash, shard.doc_offsets, length)
    return hashes, starts


def window_parts(shard: ShardCorpus, length: int, n_partitions: int, shard_no: int) -> list[WindowPart]:
    """Distinct documents per window hash in this shard, split by reducer."""
    hashes, starts = _windows(shard, length)
    doc = np.searchsorted(shard.doc_offsets, starts, side="right") - 1
    keys, counts = distinct_document_counts(hashes, doc)
    part = partition_of(keys, n_partitions)
    out = []
    for p in range(n_partitions):
        mine = part == p
        k, c = keys[mine], counts[mine]
        single = c == 1
        out.append(WindowPart(k[single], k[~single], c[~single].astype(np.uint32)))
    worker_progress("count", shard_no, 1, None)
    return out


def pick(parts: list, p: int):
    """Element ``p`` of a task's list result (runs where the list is, moves only the element)."""
    return parts[p]


def frequent_windows(parts: list[WindowPart], sigma: int) -> np.ndarray:
    """uint64 ascending: this reducer's window hashes held by >= sigma documents in all."""
    once = np.concatenate([p.once for p in parts]) if parts else np.zeros(0, dtype=np.uint64)
    keys = np.concatenate([once] + [p.keys for p in parts])
    weights = np.concatenate([np.ones(once.shape[0], dtype=np.int64)] + [p.counts.astype(np.int64) for p in parts])
    k, df = sum_by_key(keys, weights)
    return k[df >= sigma]


@dataclass
class ShardSegments:
    """A shard's frequent-window intervals with their tokens.

    segments: local documents and shard positions (:class:`Segments`)
    tokens:   uint32 (T,) the intervals' local token ids, concatenated
    used:     uint32 (U,) distinct local ids among them; ``used_strings`` their strings
    """

    segments: Segments
    tokens: np.ndarray
    used: np.ndarray
    used_strings: list[str]

    @property
    def nbytes(self) -> int:
        s = self.segments
        return int(s.doc.nbytes + s.start.nbytes + s.end.nbytes + self.tokens.nbytes + self.used.nbytes
                   + sum(len(x) for x in self.used_strings))


def shard_segments(shard: ShardCorpus, frequent: list[np.ndarray], length: int, n_partitions: int,
                   shard_no: int) -> ShardSegments:
    """Cut the shard down to its frequent-window intervals (``frequent[p]``: reducer p's set)."""
    hashes, starts = _windows(shard, length)
    part = partition_of(hashes, n_partitions)
    flags = np.zeros(hashes.shape[0], dtype=bool)
    for p in range(n_partitions):
        mine = np.flatnonzero(part == p)
        flags[mine] = is_member(hashes[mine], frequent[p])
    seg = frequent_segments(starts, flags, shard.doc_offsets, length)
    lengths = seg.end - seg.start
    idx = np.repeat(seg.start - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths) + np.arange(lengths.sum())
    tokens = shard.ids[idx] if idx.size else np.zeros(0, dtype=np.uint32)
    used = np.unique(tokens)
    worker_progress("cut", shard_no, 1, None)
    return ShardSegments(seg, tokens, used.astype(np.uint32), [shard.strings[i] for i in used.tolist()])


def used_strings(part: ShardSegments) -> list[str]:
    return part.used_strings


def segment_headers(part: ShardSegments) -> tuple[int, int]:
    """(intervals, tokens) of a shard's cut, for the run statistics."""
    return int(part.segments.doc.shape[0]), int(part.tokens.shape[0])


def assemble_reduced(parts: list[ShardSegments], global_docs: list[np.ndarray], shard_doc_offsets: list[np.ndarray],
                     doc_starts: np.ndarray, run_id_of: dict[str, int], n_run_ids: int, n_docs: int):
    """The reduced corpus (:func:`bloomspan.engine.distributed.reduced_corpus.reduced_corpus`) of all shards.

    global_docs[k]: int64 (D_k,) global number of shard k's documents; shard_doc_offsets[k]:
    its doc_offsets; doc_starts: int64 (D+1,) global document offsets; run_id_of: string ->
    id in the reduced corpus (all ids < n_run_ids).
    """
    from bloomspan.engine.distributed.reduced_corpus import reduced_corpus

    docs, starts, lengths, toks = [], [], [], []
    for part, gdoc, off in zip(parts, global_docs, shard_doc_offsets):
        seg = part.segments
        remap = np.zeros(int(part.used.max()) + 1 if part.used.size else 1, dtype=np.uint32)
        remap[part.used] = np.asarray([run_id_of[s] for s in part.used_strings], dtype=np.uint32)
        d = gdoc[seg.doc]
        docs.append(d)
        starts.append(doc_starts[d] + (seg.start - off[seg.doc]))
        lengths.append(seg.end - seg.start)
        toks.append(remap[part.tokens])
    seg_doc = np.concatenate(docs) if docs else np.zeros(0, dtype=np.int64)
    seg_start = np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64)
    seg_len = np.concatenate(lengths) if lengths else np.zeros(0, dtype=np.int64)
    seg_off_in = np.concatenate([[0], np.cumsum(seg_len)]).astype(np.int64)
    all_tokens = np.concatenate(toks) if toks else np.zeros(0, dtype=np.uint32)
    order = np.lexsort((seg_start, seg_doc))
    # Intervals in (document, position) order, their tokens gathered in that order.
    src = np.repeat(seg_off_in[:-1][order], seg_len[order])
    within = np.arange(src.shape[0], dtype=np.int64) - np.repeat(
        np.concatenate([[0], np.cumsum(seg_len[order])[:-1]]).astype(np.int64), seg_len[order])
    seg_tokens = all_tokens[src + within] if src.size else np.zeros(0, dtype=np.uint32)
    seg_offsets = np.concatenate([[0], np.cumsum(seg_len[order])]).astype(np.int64)
    worker_progress("assemble", 0, 1, 1)
    return reduced_corpus(seg_doc[order], seg_start[order], seg_offsets, seg_tokens, n_docs, n_run_ids)


def grow(reduced, mining_config):
    """Mine the reduced corpus with the configured exact engine (a MiningResult over it)."""
    from bloomspan.engine.mining.engines import mine
    from bloomspan.engine.mining.phrases import MiningResult

    worker_progress("grow", 0, 0, reduced.n_tokens)
    if reduced.n_tokens == 0:
        return MiningResult(phrases=[], coverage=np.zeros(0, dtype=bool), stats={})
    result = mine(reduced.tokens, reduced.doc_offsets, mining_config)
    worker_progress("grow", 0, reduced.n_tokens, reduced.n_tokens)
    return result


# ---------------------------------------------------------------------- global token ids
@dataclass
class VocabularyPartition:
    """A reducer's share of the global vocabulary: every string (of its partition) with the
    shard and local id where it first occurs, and per shard the local ids first seen there."""

    first: dict[str, tuple[int, int]]
    first_ids: list[np.ndarray]  # per shard: uint32 ascending

    @property
    def counts(self) -> np.ndarray:
        return np.asarray([a.shape[0] for a in self.first_ids], dtype=np.int64)


def vocabulary_part(shard: ShardCorpus, p: int, n_partitions: int) -> tuple[np.ndarray, list[str]]:
    """This shard's local ids (ascending) and strings whose hash falls in partition p."""
    ids = np.flatnonzero(partition_of(shard.token_hash, n_partitions) == p).astype(np.uint32)
    return ids, [shard.strings[i] for i in ids.tolist()]


def vocabulary_partition(parts: list[tuple[np.ndarray, list[str]]]) -> VocabularyPartition:
    """Shards in order: a string's first shard (and its smallest local id there, which is its
    first occurrence) wins. Strings are compared, not hashes: exact under collisions."""
    first: dict[str, tuple[int, int]] = {}
    first_ids = []
    for k, (ids, strings) in enumerate(parts):
        new = []
        for j, s in zip(ids.tolist(), strings):
            if s not in first:
                first[s] = (k, j)
                new.append(j)
        first_ids.append(np.asarray(new, dtype=np.uint32))
    return VocabularyPartition(first, first_ids)


def partition_counts(vp: VocabularyPartition) -> np.ndarray:
    return vp.counts


def locate(vp: VocabularyPartition, strings: list[str]) -> np.ndarray:
    """int64 (n, 2): (first shard, local id) of each string of this partition."""
    return np.asarray([vp.first[s] for s in strings], dtype=np.int64).reshape(-1, 2)


def first_seen_before(vp: VocabularyPartition, where: np.ndarray) -> np.ndarray:
    """int64 (n,): per (shard k, local id j), this partition's strings first seen in shard k
    at a local id below j."""
    out = np.zeros(where.shape[0], dtype=np.int64)
    for i, (k, j) in enumerate(where.tolist()):
        out[i] = np.searchsorted(vp.first_ids[k], j)
    return out
