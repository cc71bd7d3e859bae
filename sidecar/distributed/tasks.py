"""The worker tasks of a distributed mining run. Every task is a pure function of its
arguments and returns its result (no side effects), so Dask may run it again on another
worker after a failure and get the same value.

Shapes follow :mod:`bloomspan.engine.distributed.windows`; ``P`` is the number of
partitions of the key space (reducers), ``S`` the number of shards.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bloomspan.engine.distributed.first_occurrences import FirstOccurrences, first_occurrences
from bloomspan.engine.distributed.fragment_packing import PackedFragments, pack_fragments, unpack_concatenated
from bloomspan.engine.distributed.sharded_growth import (
    GrownPhrases,
    fragments_for,
    grow_fragments,
    growth_shard_of,
    routing_k,
)
from bloomspan.engine.distributed.window_filter import (
    cell_values,
    filter_cells,
    flagged_by_hashed_cells,
    flagged_window_starts,
    frequent_superset,
    routing_keys_at,
    unit_filter_heavy,
)
from bloomspan.engine.distributed.windows import (
    PackedStrings,
    Segments,
    cut_intervals,
    distinct_document_counts,
    is_member,
    partition_of,
    sum_by_key,
    window_hashes,
)
from bloomspan.engine.mining.config import MiningConfig
from bloomspan.sidecar.publish.bitmaps import bitmap_from_array, encode_bitmap

from . import coverage
from .coverage import ShardCoverage
from .in_worker import release_freed_memory, worker_progress
from .shards import ShardCorpus, _Tokenizer


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
    """A shard's frequent-window intervals with their tokens, and where growth starts in them.

    segments: local documents and shard positions (:class:`Segments`)
    tokens:   uint32 (T,) the intervals' local token ids, concatenated
    used:     uint32 (U,) distinct local ids among them; ``used_strings`` their strings
    win_seg, win_at: int32 (N,) interval and offset in it of every flagged window start
    win_route: int32 (N,) its growth shard (by the window's hash)
    (int32: a flagged window costs 12 bytes, not 24, while the shard waits for growth)
    """

    segments: Segments
    tokens: np.ndarray
    used: np.ndarray
    used_strings: list[str]
    win_seg: np.ndarray
    win_at: np.ndarray
    win_route: np.ndarray

    @property
    def nbytes(self) -> int:
        s = self.segments
        return int(s.doc.nbytes + s.start.nbytes + s.end.nbytes + self.tokens.nbytes + self.used.nbytes
                   + sum(len(x) for x in self.used_strings))


def shard_segments(shard: ShardCorpus, frequent: list[np.ndarray], length: int, n_partitions: int,
                   shard_no: int, n_growth: int = 1) -> ShardSegments:
    """Cut the shard down to its frequent-window intervals (``frequent[p]``: reducer p's set)
    and route each flagged window start to one of ``n_growth`` growth shards."""
    hashes, starts = _windows(shard, length)
    part = partition_of(hashes, n_partitions)
    flags = np.zeros(hashes.shape[0], dtype=bool)
    for p in range(n_partitions):
        mine = np.flatnonzero(part == p)
        flags[mine] = is_member(hashes[mine], frequent[p])
    del hashes
    return _cut(shard, starts[flags], length, shard_no, n_growth)


def flagged_segments(shard: ShardCorpus, members: np.ndarray, length: int, shard_no: int,
                     n_growth: int = 1, n_cells: int | None = None) -> ShardSegments:
    """:func:`shard_segments` for a superset of the frequent windows given as one sorted hash
    array (:mod:`bloomspan.engine.distributed.window_filter`). ``n_cells``: the size of the
    shard's unit's table (:func:`table_size`): the windows whose cell is the cell of one of
    ``members`` are flagged (a bit test per window, no search); without it, the windows of
    ``members`` exactly."""
    if n_cells is not None:
        win = flagged_by_hashed_cells(shard.ids, shard.token_hash, shard.doc_offsets, length, members, n_cells)
    else:
        win = flagged_window_starts(shard.ids, shard.token_hash, shard.doc_offsets, length, members)
    cut = _cut(shard, win, length, shard_no, n_growth)
    del win
    release_freed_memory()  # the flagging's and the cut's temporaries: the worker holds the cut for routing
    return cut


def _cut(shard: ShardCorpus, win: np.ndarray, length: int, shard_no: int, n_growth: int) -> ShardSegments:
    """The intervals of the flagged window starts ``win`` (ascending), their tokens, and each
    start's interval, offset and growth shard."""
    # Per flagged start the cut keeps 12 bytes (int32 interval, offset, growth shard) and makes
    # them with one int64 temporary at a time: a boilerplate shard has a flagged start for most
    # of its reduced tokens, so these arrays are the cut's transient.
    seg, win_seg, tokens = cut_intervals(win, shard.doc_offsets, shard.ids, length, win_seg_dtype=np.int32)
    present = np.zeros(len(shard.strings), dtype=bool)  # distinct ids by a presence table, not a sort
    present[tokens] = True
    used = np.flatnonzero(present)
    del present
    at = seg.start[win_seg]
    np.subtract(win, at, out=at)
    win_at = at.astype(np.int32)
    del at
    route = routing_keys_at(shard.ids, shard.token_hash, win, length, routing_k(length))
    win_route = growth_shard_of(route, n_growth, dtype=np.int32, overwrite=True)
    del route
    worker_progress("cut", shard_no, 1, None)
    return ShardSegments(seg, tokens, used.astype(np.uint32), _strings_of(shard, used), win_seg, win_at, win_route)


def _strings_of(shard: ShardCorpus, ids: np.ndarray) -> list[str]:
    """The shard's strings of local ``ids`` (a batch read of packed strings, or a list's items):
    newline-separated packed strings are sliced out with one kernel and decoded once (a decode
    per string was a fifth of the cut's Python time)."""
    joined = getattr(shard.strings, "joined", None)
    if joined is not None and len(ids):
        block = joined(ids)
        if block is not None:  # None: some string holds a newline; read one at a time
            return block.decode("utf-8", "surrogatepass").split("\n")
    take = getattr(shard.strings, "take", None)
    return take(ids) if take is not None else [shard.strings[i] for i in ids.tolist()]


# ---------------------------------------------------------------------- pigeonhole counting
@dataclass
class ShardFilter:
    """A count unit's counting filter (uint8, stays on its worker) and its heavy window hashes
    (uint64 ascending: what goes to the union), built in one pass (window_filter steps 1-2).
    Nothing per window is kept: the cut hashes its windows' cells again
    (:func:`~bloomspan.engine.distributed.window_filter.flagged_by_hashed_cells`)."""

    counters: np.ndarray
    heavy: np.ndarray


def unit_filter(shards: list[ShardCorpus], length: int, threshold: int, unit_no: int) -> ShardFilter:
    """One count unit's filter and heavy windows (steps 1 and 2): the shards a worker holds,
    counted into one table in one pass (:func:`~bloomspan.engine.distributed.window_filter.unit_filter_heavy`)."""
    n_windows = sum(int(np.maximum(np.diff(s.doc_offsets) - length + 1, 0).sum()) for s in shards)
    counters, heavy = unit_filter_heavy([(s.ids, s.token_hash, s.doc_offsets) for s in shards], length,
                                        filter_cells(n_windows), threshold)
    worker_progress("count", unit_no, 1, None)
    return ShardFilter(counters, heavy)


def table_size(f: ShardFilter) -> int:
    """The unit's table size: what its shards' cuts need of the count to find their windows' cells."""
    return int(f.counters.shape[0])


def heavy_hashes(f: ShardFilter) -> np.ndarray:
    """The heavy hashes alone (runs where the filter is, so only they travel to the union)."""
    return f.heavy


def union_of(*parts: np.ndarray) -> np.ndarray:
    """uint64 ascending, distinct: every shard's heavy hashes (the set U of step 2)."""
    return np.unique(np.concatenate([np.zeros(0, dtype=np.uint64), *parts]))


def upper_counts(f: ShardFilter, union: np.ndarray) -> np.ndarray:
    """uint8 (|U|,): this shard's cell for each hash of U (step 3)."""
    return cell_values(f.counters, union)


def superset_of(union: np.ndarray, sigma: int, *counts: np.ndarray) -> np.ndarray:
    """uint64 ascending: the hashes of U whose summed cells reach min(sigma, 255) (step 3)."""
    total = np.zeros(union.shape[0], dtype=np.int64)
    for c in counts:
        total += c
    return frequent_superset(union, total, sigma)


def used_strings(part: ShardSegments) -> StringBlock:
    """The strings a shard's intervals use, packed for the trip to the driver."""
    return StringBlock.of(part.used_strings)


def segment_headers(part: ShardSegments) -> tuple[int, int]:
    """(intervals, tokens) of a shard's cut, for the run statistics."""
    return int(part.segments.doc.shape[0]), int(part.tokens.shape[0])


def lengths(heavy: list[np.ndarray], union: np.ndarray, members: np.ndarray) -> tuple[int, int, int]:
    """(heavy hashes over all shards, |U|, |F|) for the run statistics, in one task."""
    return int(sum(h.shape[0] for h in heavy)), int(union.shape[0]), int(members.shape[0])


def growth_parts(part: ShardSegments, run_ids: np.ndarray, global_docs: np.ndarray, n_growth: int,
                 shard_no: int) -> list[PackedFragments]:
    """What this document shard sends each growth shard: its interval tails in run ids
    (``run_ids``: uint32, the run id of each of ``part.used_strings``, from the driver: 4 bytes
    per string instead of a string table shipped to every shard) with global document
    numbers; labels are positions in this shard. Identical tails travel once (:mod:`.fragment_packing`)."""
    seg = part.segments
    remap = np.zeros(int(part.used.max()) + 1 if part.used.size else 1, dtype=np.uint32)
    remap[part.used] = np.asarray(run_ids, dtype=np.uint32)
    lengths = seg.end - seg.start
    seg_offsets = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=seg_offsets[1:])
    tokens = remap[part.tokens]
    docs = np.asarray(global_docs, dtype=np.int64)[seg.doc]
    parts = [pack_fragments(fragments_for(seg_offsets, tokens, docs, seg.start, part.win_seg, part.win_at,
                                          part.win_route, g, shard_no)) for g in range(n_growth)]
    del remap, seg_offsets, tokens, docs
    release_freed_memory()  # the unpacked tails: the parts wait on this worker for growth
    return parts


def run_ids_of(used: list[str], run_id_of: dict[str, int]) -> np.ndarray:
    """uint32: the run id of each string of a shard's ``used_strings`` (driver side)."""
    return np.fromiter((run_id_of[s] for s in used), dtype=np.uint32, count=len(used))


def grow_shard(parts: list[PackedFragments], mining_config, shard_no: int) -> GrownPhrases:
    """Every maximal phrase starting with a window routed to this growth shard."""
    worker_progress("grow", shard_no, 0, None)
    fragments = unpack_concatenated(parts)
    grown = grow_fragments(fragments, mining_config.sigma, mining_config.min_length,
                           left_prune=mining_config.left_prune, release_tokens=True)
    del fragments
    release_freed_memory()
    worker_progress("grow", shard_no, 1, None)
    return grown


@dataclass
class PhraseSummary:
    """What a growth shard sends the driver per phrase: tokens, df, occurrences and, for an
    index run, the encoded document bitmap and the first documents (the phrase document's
    ``doc_bitmap`` and ``example_ids``)."""

    tokens: list[tuple[int, ...]]
    df: np.ndarray
    occurrences: np.ndarray
    doc_bitmaps: list[str] | None
    example_docs: list[list[int]] | None
    stats: dict


def phrase_summary(grown: GrownPhrases, with_bitmaps: bool, n_examples: int) -> PhraseSummary:
    bitmaps = examples = None
    if with_bitmaps:
        bitmaps = [encode_bitmap(bitmap_from_array(d)) for d in grown.docs]
        examples = [d[:n_examples].tolist() for d in grown.docs]
    return PhraseSummary(grown.tokens, grown.df, grown.occurrences, bitmaps, examples, grown.stats)


def phrase_head(summary: PhraseSummary) -> PhraseSummary:
    """The summary without its bitmaps and examples (what the driver gathers of an index run's
    growth shard: the bitmaps stay beside it, :func:`phrase_extras`)."""
    return PhraseSummary(summary.tokens, summary.df, summary.occurrences, None, None, summary.stats)


def phrase_extras(summary: PhraseSummary, phrases: list[int]) -> list[tuple[str, list[int]]]:
    """``(encoded document bitmap, first document numbers)`` of the summary's ``phrases``."""
    return [(summary.doc_bitmaps[j], summary.example_docs[j]) for j in phrases]


def occurrences_for(grown: GrownPhrases, owner: int) -> tuple[np.ndarray, np.ndarray]:
    """(positions in document shard ``owner``, lengths) of this growth shard's occurrences there."""
    mine = grown.occ_owner == owner
    return grown.occ_label[mine], grown.lengths()[grown.occ_phrase[mine]]


def shard_coverage(shard: ShardCorpus, parts: list[tuple[np.ndarray, np.ndarray]], global_starts: np.ndarray | None,
                   n_tokens_total: int) -> ShardCoverage:
    """This document shard's covered tokens per document (and coverage bitmaps), runs where
    the shard is (:func:`.coverage.shard_coverage`)."""
    return coverage.shard_coverage(shard.doc_offsets, parts, global_starts, n_tokens_total)


# ---------------------------------------------------------------------- global token ids
@dataclass
class StringBlock:
    """Strings on the wire as one UTF-8 buffer (newline-separated: tokens never hold one),
    not a pickled list: a list of a shard's vocabulary cost ~3x its text in Dask's transfers
    (36.6 MB for a 26.5 M-token crawl on two workers: 1.4 bytes per token)."""

    data: bytes
    count: int
    fallback: list[str] | None = None  # strings holding a newline travel as a list

    @staticmethod
    def of(strings: list[str]) -> StringBlock:
        joined = "\n".join(strings)
        if joined.count("\n") != max(len(strings) - 1, 0):
            return StringBlock(b"", len(strings), list(strings))
        return StringBlock(joined.encode("utf-8", "surrogatepass"), len(strings))

    def packed(self) -> PackedStrings:
        """The strings as a :class:`PackedStrings` over this block's bytes (nothing decoded)."""
        if self.fallback is not None:
            return PackedStrings.of(self.fallback)
        buf = np.frombuffer(self.data, dtype=np.uint8)
        if self.count == 0:
            return PackedStrings(buf, np.zeros(1, dtype=np.int64))
        offsets = np.concatenate([[0], np.flatnonzero(buf == 10) + 1, [buf.shape[0] + 1]]).astype(np.int64)
        return PackedStrings(buf, offsets)

    def strings(self) -> list[str]:
        if self.fallback is not None:
            return self.fallback
        return self.data.decode("utf-8", "surrogatepass").split("\n") if self.count else []


def vocabulary_part(shard: ShardCorpus, p: int, n_partitions: int) -> tuple[np.ndarray, StringBlock]:
    """This shard's local ids (ascending) and strings whose hash falls in partition p."""
    ids = np.flatnonzero(partition_of(shard.token_hash, n_partitions) == p).astype(np.uint32)
    joined = shard.strings.joined(ids) if hasattr(shard.strings, "joined") else None
    if joined is not None:  # sliced from the shard's packed strings: nothing decoded or encoded
        return ids, StringBlock(joined, int(ids.shape[0]))
    return ids, StringBlock.of(_strings_of(shard, ids))


def vocabulary_partition(parts: list[tuple[np.ndarray, StringBlock]]) -> FirstOccurrences:
    """Shards in order: a string's first shard (and its smallest local id there, which is its
    first occurrence) wins. Grouped by hash, strings compared byte for byte: exact under
    collisions (:mod:`bloomspan.engine.distributed.first_occurrences`)."""
    found = first_occurrences([ids for ids, _ in parts], [block.packed() for _, block in parts])
    release_freed_memory()  # its sort's temporaries: the worker holds the result through route and growth
    return found


def partition_counts(vp: FirstOccurrences) -> np.ndarray:
    return vp.counts


def locate(vp: FirstOccurrences, strings: list[str], hashes: np.ndarray | None = None) -> np.ndarray:
    """int64 (n, 2): (first shard, local id) of each string of this partition; ``hashes``: their
    :func:`~bloomspan.engine.distributed.windows.string_hashes`, which the caller partitioned them
    by (None: computed again)."""
    return vp.locate(strings, hashes)


def first_seen_before(vp: FirstOccurrences, where: np.ndarray) -> np.ndarray:
    """int64 (n,): per (shard k, local id j), this partition's strings first seen in shard k
    at a local id below j."""
    out = np.zeros(where.shape[0], dtype=np.int64)
    for k in np.unique(where[:, 0]).tolist():  # one search per shard, not per string
        mine = where[:, 0] == k
        out[mine] = np.searchsorted(vp.first_ids[k], where[mine, 1])
    return out


# ---------------------------------------------------------------------- kernels before the workers start
def warm_kernels(min_length: int = 10) -> None:
    """Run every kernel a worker runs once, on a tiny corpus, in this process.

    A local cluster's workers are forked from the driver (:func:`.cluster.dask_client`), so
    they inherit the kernels loaded (or compiled) here once instead of each loading or
    compiling its own copies: the first run compiles once, later runs load once.
    """
    words = [f"w{i}" for i in range(3 * min_length)]
    tok = _Tokenizer()
    tok.add([" ".join(words)] * 3 + [" ".join(reversed(words))])
    shard = tok.corpus()
    config = MiningConfig(sigma=2, min_length=min_length)
    counted = unit_filter([shard], min_length, 2, 0)
    union = union_of(heavy_hashes(counted))
    members = superset_of(union, 2, upper_counts(counted, union))
    cut = flagged_segments(shard, members, min_length, 0, 1, table_size(counted))
    flagged_segments(shard, members, min_length, 0, 1)
    cut_exact = shard_segments(shard, [frequent_windows([window_parts(shard, min_length, 1, 0)[0]], 2)],
                               min_length, 1, 0, 1)
    table = {t: i for i, t in enumerate(sorted(set(cut.used_strings) | set(cut_exact.used_strings)))}
    grown = grow_shard(growth_parts(cut, run_ids_of(cut.used_strings, table), np.arange(shard.n_docs, dtype=np.int64),
                                    1, 0), config, 0)
    shard_coverage(shard, [occurrences_for(grown, 0)], np.zeros(shard.n_docs, dtype=np.int64), shard.n_tokens)
    locate(vocabulary_partition([vocabulary_part(shard, 0, 1)] * 2), list(cut.used_strings))
