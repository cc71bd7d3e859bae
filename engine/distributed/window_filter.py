"""Which windows can be frequent, without shuffling every window: per-shard counting filters
and the pigeonhole.

Why this is exact
-----------------
The reduction of :mod:`.windows` needs the shards to flag a *superset* of the frequent
windows (df >= sigma), the same way at every occurrence: any superset works, a larger one
only makes the intervals longer. This module finds such a superset with traffic that does
not grow with the corpus:

1. Each of the ``G`` count units (a worker's shards, or one shard) counts its ``length``-windows in a saturating
   byte filter of its own (cell = the window's 64-bit hash, multiply-shift): ``c_k(W) >=
   min(occ_k(W), 255) >= min(df_k(W), 255)``, collisions only add.
2. Pigeonhole: if ``df(W) = sum_k df_k(W) >= sigma`` then some unit has ``df_k(W) >=
   ceil(sigma / G)``. So every frequent window is among the *heavy* windows of some unit,
   those whose cell reads ``>= t = min(ceil(sigma / G), 255)``. Each unit sends the driver the
   distinct hashes of its heavy windows: the union ``U``. The pipeline finds them in the same pass
   that builds the filter (:func:`window_filter_heavy`): every window whose cell reads ``>= t``
   right after its own increment, which holds every window with ``>= t`` occurrences in the unit
   (so every one the pigeonhole needs) and only windows whose final cell reads ``>= t``.
3. Each unit reads its cell for every hash of ``U`` (its upper bound of the window's
   documents there); the driver sums them. ``sum_k c_k(W) >= sum_k min(df_k(W), 255) >=
   min(df(W), 255)``, so a frequent window's sum reaches ``min(sigma, 255)``: the windows of
   ``U`` whose sum does are the superset, ``F``.
4. Each shard flags its windows whose hash is in ``F`` (:func:`flagged_window_starts`), or,
   cheaper, whose cell in its unit's table is the cell of a hash of ``F``
   (:func:`flagged_by_cells`: the count keeps every window's cell, so nothing is hashed
   again; a superset of the former, which the reduction allows).

What crosses the network is ``U`` (8 bytes per heavy window, once per unit and once back)
and one byte per unit and hash of ``U``: boilerplate's vocabulary of windows, not the
corpus. It needs ``t >= 2`` to filter at all, i.e. ``G < sigma``; the caller falls back to
counting every window when there are more units (:mod:`bloomspan.sidecar.distributed.pipeline`).

Hashes are those of :func:`.windows.window_hashes` (polynomial over the strings' 64-bit
hashes, splitmix64-finished): the same window has the same hash on every worker. Kernels
recompute them on the fly (no array of a hash per window is ever allocated); each kernel has
a plain twin that the tests compare it to.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from bloomspan.engine.mining.counting_filter import hot_any_bitmap, region_layout, saturating_increment

from .windows import _finish, _rolled, _top_power, _window_at, window_hashes_reference

MAX_COUNT = 255
# Filter bytes per counted window. One, as the single process's counting filter: a collision
# only adds windows to the superset (26.5 M-token crawl, two units: 23 k hashes instead of
# 17 k, 3 % more reduced tokens), and half the table counts ~25 % faster (the count's
# increments are its largest part) and holds 1 B per token of a unit instead of 2.
CELLS_PER_WINDOW = 1
_S32 = np.uint64(32)
_TWO32 = 1 << 32


def local_threshold(sigma: int, n_units: int) -> int:
    """The heavy threshold ``min(ceil(sigma / n_units), 255)`` of the pigeonhole (step 2)."""
    if sigma < 1 or n_units < 1:
        raise ValueError(f"sigma={sigma}, n_units={n_units}: both must be >= 1")
    return min(-(-sigma // n_units), MAX_COUNT)


def filter_cells(n_windows: int) -> int:
    """Cells of a unit's filter for ``n_windows`` counted windows (at least 64, below 2**32)."""
    return int(min(max(64, CELLS_PER_WINDOW * int(n_windows)), _TWO32 - 1))


@njit(cache=True, nogil=True, inline="always")
def _cell(h, n_cells):
    return np.int64(((h >> _S32) * np.uint64(n_cells)) >> _S32)


def _cell_py(h: int, n_cells: int) -> int:
    return ((h >> 32) * n_cells) >> 32


@njit(cache=True, nogil=True)
def _chunk_cells(ids, token_hash, doc_offsets, d_lo, d_hi, length, n_cells, hashes, cells):
    """Hash and cell of every window of documents [d_lo, d_hi), in order; returns how many."""
    top = _top_power(length)
    n = 0
    for d in range(d_lo, d_hi):
        a, b = doc_offsets[d], doc_offsets[d + 1]
        if b - a < length:
            continue
        h = _window_at(ids, token_hash, a, length)
        for s in range(a, b - length + 1):
            if s > a:
                h = _rolled(h, ids, token_hash, s, length, top)
            f = _finish(h)
            hashes[n] = f
            cells[n] = _cell(f, n_cells)
            n += 1
    return n


@njit(cache=True, nogil=True)
def _by_region(cells, hashes, n, shift, n_regions, cells_out, hashes_out):
    """Counting sort of the first n (cell, hash) pairs by region (``cell >> shift``), so the
    table is then read one cache-sized region after the other (as the single-node filter)."""
    start = np.zeros(n_regions + 1, dtype=np.int64)
    for i in range(n):
        start[(np.int64(cells[i]) >> shift) + 1] += 1
    for r in range(n_regions):
        start[r + 1] += start[r]
    for i in range(n):
        r = np.int64(cells[i]) >> shift
        j = start[r]
        cells_out[j] = cells[i]
        hashes_out[j] = hashes[i]
        start[r] = j + 1


@njit(cache=True, nogil=True)
def _increment_emitting(counters, cells, hashes, n, threshold, out, recent):
    """Saturating increments of the first n cells, in order; the hash of every window whose
    cell reads >= threshold right after its own increment goes to ``out`` (returns how many).
    A window with >= threshold occurrences is emitted at least at its threshold-th one (its
    own increments alone bring its cell there); every emitted window's final cell reads
    >= threshold (cells only grow).

    ``recent`` (uint64, a power of two long, from :func:`recent_table`) holds the last hash
    emitted into each of its slots (slot = the hash's low bits): a hash equal to its slot's is
    not emitted again. Boilerplate windows pass the threshold at every later occurrence, so
    this drops most repeats before the final ``np.unique`` (which makes the set exact: a hash
    pushed out of its slot is emitted again, never lost)."""
    mask = np.uint64(recent.shape[0] - 1)
    k = 0
    for i in range(n):
        c = cells[i]
        v = counters[c]
        v = v + (v < 255)  # saturating, branch-free
        counters[c] = v
        if v >= threshold:
            h = hashes[i]
            slot = h & mask
            if recent[slot] != h:
                recent[slot] = h
                out[k] = h
                k += 1
    return k


RECENT_SLOTS = 1 << 14  # 128 KiB of recently emitted hashes: stays in cache next to a filter region


def recent_table(n_slots: int | None = None) -> np.ndarray:
    """uint64 (n_slots,), a power of two (default RECENT_SLOTS): the dedupe table of
    :func:`_increment_emitting`. Slot s starts at ``~s``, a value whose low bits are not s, so
    no hash matches it."""
    n_slots = RECENT_SLOTS if n_slots is None else n_slots
    if n_slots < 2 or n_slots & (n_slots - 1):
        raise ValueError(f"n_slots={n_slots}: must be a power of two >= 2")
    return ~np.arange(n_slots, dtype=np.uint64)


# A unit's table up to this many cells (bytes) is incremented in window order, without the
# region sort the single process's counting filter uses above 8 Mi cells: with every window's
# hash travelling along (8 B) the sort costs more than the cache misses it saves while the
# table fits in about half of this machine's 32 MiB L3 (two 13 Mi-cell units counting at
# once: 15 against 18 ns per token). Larger tables (a unit of more than ~16 M tokens) are
# sorted by region as before. Either order gives the same table; the heavy windows may
# differ by windows whose final cell reads >= the threshold, which the superset allows.
DIRECT_UNIT_CELLS = 16 << 20


def unit_layout(n_cells: int) -> tuple[int, int]:
    """``(shift, n_regions)`` of a unit's count: (0, 1), increments in window order, up to
    ``DIRECT_UNIT_CELLS``; else the single process's :func:`region_layout`."""
    return (0, 1) if n_cells <= DIRECT_UNIT_CELLS else region_layout(n_cells)


CHUNK_WINDOWS = 1 << 18  # windows hashed per kernel call: the chunk's buffers stay at ~10 MiB


class _Chunks:
    """Documents in chunks of about CHUNK_WINDOWS windows, with the buffers the kernels share."""

    def __init__(self, doc_offsets: np.ndarray, length: int, n_cells: int, buffers: bool = True):
        per_doc = np.maximum(np.diff(doc_offsets) - length + 1, 0)
        self.ends = np.cumsum(per_doc)
        self.n_docs = per_doc.shape[0]
        widest = 0
        self.bounds = [0]
        while self.bounds[-1] < self.n_docs:
            d = self.bounds[-1]
            base = int(self.ends[d - 1]) if d else 0
            e = max(d + 1, int(np.searchsorted(self.ends, base + CHUNK_WINDOWS, side="right")))
            e = min(e, self.n_docs)
            widest = max(widest, int(self.ends[e - 1]) - base)
            self.bounds.append(e)
        self.widest = widest
        self.shift, self.n_regions = unit_layout(n_cells)
        if not buffers:  # the caller's kernel hashes and uses each window at once
            return
        # cells are uint32 (a filter has fewer than 2**32): half the bytes the chunk moves
        self.hashes = np.empty(widest, dtype=np.uint64)
        self.cells = np.empty(widest, dtype=np.uint32)
        partitioned = self.n_regions > 1
        self.hashes2 = np.empty(widest if partitioned else 0, dtype=np.uint64)
        self.cells2 = np.empty(widest if partitioned else 0, dtype=np.uint32)

    def each(self, ids, token_hash, doc_offsets, length, n_cells, kept=None):
        """Per chunk: (cells, hashes, n) in region order. ``kept``: a uint32 array of a cell per
        window of the shard, filled in window order (before the region sort) on the way: the
        kernel writes the chunk's cells straight into it, no copy."""
        base = 0
        for d, e in zip(self.bounds[:-1], self.bounds[1:]):
            cells = self.cells if kept is None else kept[base:]
            n = _chunk_cells(ids, token_hash, doc_offsets, np.int64(d), np.int64(e), np.int64(length),
                             np.int64(n_cells), self.hashes, cells)
            base += n
            if self.n_regions > 1:
                _by_region(cells, self.hashes, n, np.int64(self.shift), np.int64(self.n_regions),
                           self.cells2, self.hashes2)
                yield self.cells2, self.hashes2, n
            else:
                yield cells, self.hashes, n


def _check(ids, token_hash, doc_offsets, length):
    ids = np.ascontiguousarray(ids, dtype=np.uint32)
    token_hash = np.ascontiguousarray(token_hash, dtype=np.uint64)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    if length < 1:
        raise ValueError(f"length={length}: windows need at least one token")
    if ids.size and int(ids.max()) >= token_hash.shape[0]:
        raise ValueError(f"token_hash has {token_hash.shape[0]} entries; ids reach {int(ids.max())}")
    return ids, token_hash, doc_offsets


def window_filter(ids: np.ndarray, token_hash: np.ndarray, doc_offsets: np.ndarray, length: int,
                  n_cells: int) -> np.ndarray:
    """uint8 (n_cells,): every in-document ``length``-window incremented once into the cell of
    its hash, saturating at 255 (step 1)."""
    ids, token_hash, doc_offsets = _check(ids, token_hash, doc_offsets, length)
    counters = np.zeros(int(n_cells), dtype=np.uint8)
    with np.errstate(over="ignore"):  # uint64 wrap-around is the hash; JIT-less runs warn
        for cells, _, n in _Chunks(doc_offsets, length, n_cells).each(ids, token_hash, doc_offsets, length, n_cells):
            saturating_increment(counters, cells, n)
    return counters


def window_filter_heavy(ids: np.ndarray, token_hash: np.ndarray, doc_offsets: np.ndarray, length: int,
                        n_cells: int, threshold: int) -> tuple[np.ndarray, np.ndarray]:
    """Steps 1 and 2 in one pass over the shard: ``(counters, heavy)``.

    ``counters`` is :func:`window_filter`'s table (increments in the same order: chunk after
    chunk, region after region). ``heavy`` (uint64 ascending, distinct) holds the hash of
    every window whose cell read >= ``threshold`` right after one of its own increments:
    every window with >= ``threshold`` occurrences in the shard is there (at its
    threshold-th occurrence its own increments alone have brought its cell that far), and
    only windows whose final cell reads >= ``threshold``. The pigeonhole needs no more: a
    frequent window has >= ``ceil(sigma / S)`` documents, hence occurrences, in some shard.
    So a second pass over every window (:func:`heavy_windows_reference`) is not needed.
    """
    return unit_filter_heavy([(ids, token_hash, doc_offsets)], length, n_cells, threshold)


def unit_filter_heavy(parts, length: int, n_cells: int, threshold: int, keep_cells: bool = False):
    """:func:`window_filter_heavy` of a count unit made of several shards: ``parts`` is a
    sequence of ``(ids, token_hash, doc_offsets)`` (each shard numbers its own strings; a
    window's hash depends on its strings only), all counted into one table, shard after shard.
    Returns ``(counters, heavy)``, and with ``keep_cells`` also each shard's cells: uint32, the
    cell of every window in window order (what :func:`flagged_by_cells` walks instead of
    hashing every window again; 4 bytes per window while the unit waits for the superset).

    The unit's table is the sum (saturating) of its shards' tables, so its cell of W reads
    >= min(occurrences of W in the unit, 255) >= min(df_unit(W), 255), and a window with >=
    ``threshold`` occurrences in the unit is emitted at its threshold-th one, wherever they lie.
    The pigeonhole then runs over units instead of shards: df(W) = sum over units of df_u(W)
    for any grouping of the documents into disjoint units, so a frequent window has >=
    ceil(sigma / units) documents in some unit (a worker's shards make one unit: the
    threshold follows the workers, not the corpus' size)."""
    if not 1 <= threshold <= MAX_COUNT:
        raise ValueError(f"threshold={threshold}: must lie in [1, {MAX_COUNT}]")
    if keep_cells and n_cells > _TWO32 - 1:
        raise ValueError(f"n_cells={n_cells}: kept cells are uint32, so at most {_TWO32 - 1}")
    counters = np.zeros(int(n_cells), dtype=np.uint8)
    found = [np.zeros(0, dtype=np.uint64)]
    kept_cells = []
    recent = recent_table()  # one for the unit: a hash emitted in one chunk is a repeat in the next
    for ids, token_hash, doc_offsets in parts:
        ids, token_hash, doc_offsets = _check(ids, token_hash, doc_offsets, length)
        chunks = _Chunks(doc_offsets, length, n_cells)
        out = np.empty(chunks.hashes.shape[0], dtype=np.uint64)
        kept = np.empty(int(chunks.ends[-1]) if chunks.n_docs else 0, dtype=np.uint32) if keep_cells else None
        with np.errstate(over="ignore"):  # uint64 wrap-around is the hash; JIT-less runs warn
            for cells, hashes, n in chunks.each(ids, token_hash, doc_offsets, length, n_cells, kept):
                k = _increment_emitting(counters, cells, hashes, n, np.uint8(threshold), out, recent)
                if k:
                    found.append(out[:k].copy())
        kept_cells.append(kept)
    heavy = np.unique(np.concatenate(found))  # one sort of the few hashes the recent table let through
    return (counters, heavy, kept_cells) if keep_cells else (counters, heavy)


def window_filter_heavy_reference(ids, token_hash, doc_offsets, length: int, n_cells: int, threshold: int
                                  ) -> tuple[np.ndarray, np.ndarray]:
    """Plain twin of :func:`window_filter_heavy`."""
    return unit_filter_heavy_reference([(ids, token_hash, doc_offsets)], length, n_cells, threshold)


def unit_filter_heavy_reference(parts, length: int, n_cells: int, threshold: int) -> tuple[np.ndarray, np.ndarray]:
    """Plain twin of :func:`unit_filter_heavy`: the windows in the kernel's increment order
    (shard after shard; in a shard, documents in chunks of ``CHUNK_WINDOWS`` windows, each
    chunk stably by region), one Python increment at a time."""
    shift, n_regions = unit_layout(int(n_cells))
    counters = [0] * int(n_cells)
    heavy = set()
    for ids, token_hash, doc_offsets in parts:
        hashes, _ = window_hashes_reference(ids, token_hash, doc_offsets, length)
        per_doc = np.maximum(np.diff(np.asarray(doc_offsets, dtype=np.int64)) - length + 1, 0)
        chunks = _Chunks(np.asarray(doc_offsets, dtype=np.int64), length, n_cells)
        ends = np.concatenate([[0], np.cumsum(per_doc)])
        for d, e in zip(chunks.bounds[:-1], chunks.bounds[1:]):
            chunk = [int(h) for h in hashes[int(ends[d]):int(ends[e])].tolist()]
            cells = [_cell_py(h, int(n_cells)) for h in chunk]
            order = sorted(range(len(chunk)), key=lambda i: cells[i] >> shift) if n_regions > 1 else range(len(chunk))
            for i in order:
                counters[cells[i]] = min(counters[cells[i]] + 1, MAX_COUNT)
                if counters[cells[i]] >= threshold:
                    heavy.add(chunk[i])
    return np.asarray(counters, dtype=np.uint8), np.asarray(sorted(heavy), dtype=np.uint64)


def window_filter_reference(ids, token_hash, doc_offsets, length: int, n_cells: int) -> np.ndarray:
    """Plain twin of :func:`window_filter`."""
    hashes, _ = window_hashes_reference(ids, token_hash, doc_offsets, length)
    counters = np.zeros(int(n_cells), dtype=np.int64)
    for h in hashes.tolist():
        counters[_cell_py(int(h), int(n_cells))] += 1
    return np.minimum(counters, MAX_COUNT).astype(np.uint8)


def heavy_windows_reference(ids, token_hash, doc_offsets, length: int, counters, threshold: int) -> np.ndarray:
    """uint64 ascending, distinct: hashes of the windows whose final cell reads >= ``threshold``
    (step 2 by its definition: the plain bound :func:`window_filter_heavy`'s one pass is tested against)."""
    hashes, _ = window_hashes_reference(ids, token_hash, doc_offsets, length)
    n_cells = len(counters)
    keep = {int(h) for h in hashes.tolist() if int(counters[_cell_py(int(h), n_cells)]) >= threshold}
    return np.asarray(sorted(keep), dtype=np.uint64)


def cell_values(counters: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """uint8 (N,): the filter's cell of each hash (step 3: this unit's upper bound of its documents)."""
    hashes = np.asarray(hashes, dtype=np.uint64)
    cells = ((hashes >> _S32) * np.uint64(counters.shape[0])) >> _S32
    return counters[cells.astype(np.int64)]


def frequent_superset(union: np.ndarray, cell_sums: np.ndarray, sigma: int) -> np.ndarray:
    """uint64 ascending: the hashes of ``union`` whose summed cells reach ``min(sigma, 255)`` (step 3)."""
    return np.asarray(union, dtype=np.uint64)[np.asarray(cell_sums) >= min(sigma, MAX_COUNT)]


# ---------------------------------------------------------------------- flagging (step 4)
@njit(cache=True, nogil=True)
def _flag_starts(ids, token_hash, doc_offsets, length, members, bits, bit_shift, out):
    """Starts of the windows whose hash is in ``members`` (sorted), in order. ``bits``: a bitmap
    of the members' top ``64 - bit_shift`` bits, tested before the binary search."""
    top = _top_power(length)
    m = members.shape[0]
    n = 0
    for d in range(doc_offsets.shape[0] - 1):
        a, b = doc_offsets[d], doc_offsets[d + 1]
        if b - a < length:
            continue
        h = _window_at(ids, token_hash, a, length)
        for s in range(a, b - length + 1):
            if s > a:
                h = _rolled(h, ids, token_hash, s, length, top)
            f = _finish(h)
            slot = np.int64(f >> bit_shift)
            if (bits[slot >> 6] >> np.uint64(slot & 63)) & np.uint64(1):
                lo, hi = 0, m
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if members[mid] < f:
                        lo = mid + 1
                    else:
                        hi = mid
                if lo < m and members[lo] == f:
                    out[n] = s
                    n += 1
    return n


def _member_bits(members: np.ndarray) -> tuple[np.ndarray, int]:
    """A bitmap of about 64 bits per member (at least 2**12) over the hashes' top bits."""
    n_bits_log = max(12, min(34, int(np.ceil(np.log2(max(1, members.size) * 64)))))
    shift = 64 - n_bits_log
    bits = np.zeros(max(1, (1 << n_bits_log) >> 6), dtype=np.uint64)
    slots = (members >> np.uint64(shift)).astype(np.int64)
    np.bitwise_or.at(bits, slots >> 6, np.left_shift(np.uint64(1), (slots & 63).astype(np.uint64)))
    return bits, shift


def flagged_window_starts(ids: np.ndarray, token_hash: np.ndarray, doc_offsets: np.ndarray, length: int,
                          members: np.ndarray) -> np.ndarray:
    """int64 ascending: the start of every in-document ``length``-window whose hash is in
    ``members`` (uint64 ascending, distinct)."""
    ids, token_hash, doc_offsets = _check(ids, token_hash, doc_offsets, length)
    members = np.ascontiguousarray(members, dtype=np.uint64)
    n_windows = int(np.maximum(np.diff(doc_offsets) - length + 1, 0).sum())
    if members.size == 0 or n_windows == 0:
        return np.zeros(0, dtype=np.int64)
    bits, shift = _member_bits(members)
    out = np.empty(n_windows, dtype=np.int64)
    n = _flag_starts(ids, token_hash, doc_offsets, np.int64(length), members, bits, np.uint64(shift), out)
    return out[:n].copy()


def flagged_window_starts_reference(ids, token_hash, doc_offsets, length: int, members) -> np.ndarray:
    """Plain twin of :func:`flagged_window_starts`."""
    hashes, starts = window_hashes_reference(ids, token_hash, doc_offsets, length)
    keep = {int(x) for x in np.asarray(members).tolist()}
    return np.asarray([s for h, s in zip(hashes.tolist(), starts.tolist()) if int(h) in keep], dtype=np.int64)


def cell_bitmap(members: np.ndarray, n_cells: int) -> np.ndarray:
    """uint64 (ceil(n_cells / 64),): bit c set iff some hash of ``members`` has cell c in a
    table of ``n_cells`` (the cell is a function of the hash alone)."""
    bits = np.zeros(max(1, -(-int(n_cells) // 64)), dtype=np.uint64)
    if members.size:
        cells = ((np.asarray(members, dtype=np.uint64) >> _S32) * np.uint64(n_cells)) >> _S32
        cells = cells.astype(np.int64)
        np.bitwise_or.at(bits, cells >> 6, np.left_shift(np.uint64(1), (cells & 63).astype(np.uint64)))
    return bits


@njit(cache=True, nogil=True)
def _flag_by_cells(doc_offsets, length, cells, bits, out):
    """Starts of the windows whose kept cell has its bit set, in order; returns how many."""
    n = 0
    i = 0
    for d in range(doc_offsets.shape[0] - 1):
        a, b = doc_offsets[d], doc_offsets[d + 1]
        for s in range(a, b - length + 1):
            c = np.int64(cells[i])
            i += 1
            if (bits[c >> 6] >> np.uint64(c & 63)) & np.uint64(1):
                out[n] = s
                n += 1
    return n


def flagged_by_cells(doc_offsets: np.ndarray, length: int, cells: np.ndarray, members: np.ndarray,
                     n_cells: int) -> np.ndarray:
    """int64 ascending: the start of every in-document ``length``-window whose kept cell
    (``cells``: one per window in window order, from :func:`unit_filter_heavy`) is the cell of
    some hash of ``members`` in the unit's table of ``n_cells``.

    A superset of :func:`flagged_window_starts` (a window of ``members`` has its own cell),
    which is all the reduction asks for: every frequent window is flagged at every occurrence;
    a window sharing a cell with one is flagged too (its intervals grow), never missed. No
    window is hashed again: one sequential read and one bit test per window."""
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    cells = np.ascontiguousarray(cells, dtype=np.uint32)
    n_windows = int(np.maximum(np.diff(doc_offsets) - length + 1, 0).sum())
    if cells.shape[0] != n_windows:
        raise ValueError(f"cells has {cells.shape[0]} entries; the shard has {n_windows} {length}-windows")
    members = np.asarray(members, dtype=np.uint64)
    if members.size == 0 or n_windows == 0:
        return np.zeros(0, dtype=np.int64)
    out = np.empty(n_windows, dtype=np.int64)
    n = _flag_by_cells(doc_offsets, np.int64(length), cells, cell_bitmap(members, n_cells), out)
    return out[:n].copy()


# The flag's first test (:func:`flagged_by_hashed_cells`): a bitmap of the members' cells folded
# onto FLAG_ANY_BITS_PER_MEMBER bits per member (about one window in that many that is not
# flagged reads the big bitmap), used where the big bitmap (an eighth of the table) exceeds
# FLAG_ANY_MIN_BYTES and the folded one stays within FLAG_ANY_MAX_BYTES, this machine's L2 per
# core, as the single process's query does with its hot cells. At 95.7 M tokens (43 M cells,
# 71 k members; best of 4): 21.6 ns per token without it, 11.5 with 32 bits, 10.4 with 64.
FLAG_ANY_BITS_PER_MEMBER = 32
FLAG_ANY_MIN_BYTES = 1 << 20
FLAG_ANY_MAX_BYTES = 1 << 20


def flag_any_bits(n_members: int, n_cells: int) -> int:
    """Bits of the flag's first bitmap for ``n_members`` members in a table of ``n_cells``: a
    power of two, or 0 (none: the big bitmap is small enough, or the members too many)."""
    if n_cells // 8 <= FLAG_ANY_MIN_BYTES:
        return 0
    bits = 1 << max(16, (FLAG_ANY_BITS_PER_MEMBER * max(1, n_members) - 1).bit_length())
    return bits if bits <= 8 * FLAG_ANY_MAX_BYTES else 0


def folded_bitmap(bits: np.ndarray, n_bits: int) -> np.ndarray:
    """uint8 (n_bits / 8,): bit ``a`` set iff some set bit ``c`` of ``bits`` (uint64 words, bit c at
    word c >> 6) has ``c % n_bits == a`` (``n_bits`` a power of two >= 8): the first test of
    :func:`_flag_hashed`, made by the single process's :func:`~bloomspan.engine.mining.counting_filter.hot_any_bitmap`
    from the words' bytes in little-endian order (bit c at byte c >> 3)."""
    return hot_any_bitmap(np.ascontiguousarray(bits, dtype="<u8").view(np.uint8), n_bits)


@njit(cache=True, nogil=True)
def _flag_hashed(ids, token_hash, doc_offsets, d_lo, d_hi, length, n_cells, bits, any_bits, out):
    """Starts of the windows of documents [d_lo, d_hi) whose cell has its bit set in ``bits``,
    in order, hashing each window on the way (nothing per window is written but a flagged
    start); returns how many. ``any_bits`` (uint8, a power-of-two number of bits, or empty):
    tested first at the cell's residue, so most windows never read the big bitmap."""
    top = _top_power(length)
    any_mask = np.int64(any_bits.shape[0] * 8 - 1)
    first = any_bits.shape[0] > 0
    n = 0
    for d in range(d_lo, d_hi):
        a, b = doc_offsets[d], doc_offsets[d + 1]
        if b - a < length:
            continue
        h = _window_at(ids, token_hash, a, length)
        for s in range(a, b - length + 1):
            if s > a:
                h = _rolled(h, ids, token_hash, s, length, top)
            c = _cell(_finish(h), n_cells)
            r = c & any_mask
            if not first or (any_bits[r >> 3] >> np.uint8(r & 7)) & np.uint8(1):
                if (bits[c >> 6] >> np.uint64(c & 63)) & np.uint64(1):
                    out[n] = s
                    n += 1
    return n


def flagged_by_hashed_cells(ids: np.ndarray, token_hash: np.ndarray, doc_offsets: np.ndarray, length: int,
                            members: np.ndarray, n_cells: int) -> np.ndarray:
    """:func:`flagged_by_cells` with every window's cell computed again from its hash, a chunk
    of documents at a time (``CHUNK_WINDOWS``), instead of kept by the count: the flagged
    starts are the same (a cell is a function of the window's hash), the count keeps nothing
    per window (4 B per window less from the count to the cut, where a worker's memory
    peaked), and the output is built a chunk at a time (not an int64 per window of the
    shard), for one more hash of every window.

    One kernel hashes and tests (:func:`_flag_hashed`), and where the cells' bitmap is larger
    than L2 a small folded copy (:func:`flag_any_bits`) is tested first: a window's cell is
    flagged only if its residue's bit is set there too, so the result is the same. At 95.7 M
    tokens (43 M cells, 71 k members), hashing into buffers and then testing the 5 MiB bitmap
    cost 21.6 ns per token, hashing and testing both bitmaps 11.5."""
    ids, token_hash, doc_offsets = _check(ids, token_hash, doc_offsets, length)
    members = np.asarray(members, dtype=np.uint64)
    chunks = _Chunks(doc_offsets, length, n_cells, buffers=False)
    if members.size == 0 or chunks.n_docs == 0 or int(chunks.ends[-1]) == 0:
        return np.zeros(0, dtype=np.int64)
    bits = cell_bitmap(members, n_cells)
    n_any = flag_any_bits(members.shape[0], n_cells)
    any_bits = folded_bitmap(bits, n_any) if n_any else np.zeros(0, dtype=np.uint8)
    found = [np.zeros(0, dtype=np.int64)]
    out = np.empty(chunks.widest, dtype=np.int64)
    with np.errstate(over="ignore"):  # uint64 wrap-around is the hash; JIT-less runs warn
        for d, e in zip(chunks.bounds[:-1], chunks.bounds[1:]):
            k = _flag_hashed(ids, token_hash, doc_offsets, np.int64(d), np.int64(e), np.int64(length),
                             np.int64(n_cells), bits, any_bits, out)
            if k:
                found.append(out[:k].copy())
    return np.concatenate(found)


def flagged_by_cells_reference(ids, token_hash, doc_offsets, length: int, members, n_cells: int) -> np.ndarray:
    """Plain twin of :func:`flagged_by_cells` and :func:`flagged_by_hashed_cells`, from the
    windows' hashes (not kept cells)."""
    hashes, starts = window_hashes_reference(ids, token_hash, doc_offsets, length)
    wanted = {_cell_py(int(h), int(n_cells)) for h in np.asarray(members).tolist()}
    return np.asarray([s for h, s in zip(hashes.tolist(), starts.tolist()) if _cell_py(int(h), int(n_cells)) in wanted],
                      dtype=np.int64)


# ---------------------------------------------------------------------- routing keys at flagged starts
@njit(cache=True, nogil=True)
def _routing_at(ids, token_hash, starts, length, k, out):
    """out[i] = min over the k-grams inside window starts[i] of their hash (as routing_keys).

    Consecutive starts (s, s + 1, ...: most of a boilerplate interval's) share all but one
    k-gram: along such a run each k-gram is hashed once, rolled from the previous one, and kept
    in a ring of the window's ``length - k + 1`` k-grams (a window is inside its document, so
    a run never crosses one). A start after a gap hashes its window's k-grams afresh."""
    top = _top_power(k)
    w = length - k + 1
    ring = np.empty(w, dtype=np.uint64)
    n = starts.shape[0]
    h = np.uint64(0)
    for i in range(n):
        s = starts[i]
        if i > 0 and s == starts[i - 1] + 1:
            j = s + w - 1  # the one new k-gram: rolled from the last one of the previous window
            h = _rolled(h, ids, token_hash, j, k, top)
            ring[(s + w - 1) % w] = _finish(h)
        else:
            h = _window_at(ids, token_hash, s, k)
            ring[s % w] = _finish(h)
            for j in range(s + 1, s + w):
                h = _rolled(h, ids, token_hash, j, k, top)
                ring[j % w] = _finish(h)
        m = ring[0]
        for q in range(1, w):
            if ring[q] < m:
                m = ring[q]
        out[i] = m


def routing_keys_at(ids: np.ndarray, token_hash: np.ndarray, starts: np.ndarray, length: int, k: int) -> np.ndarray:
    """uint64 (N,): the routing key (:func:`.sharded_growth.routing_keys`) of the windows
    starting at ``starts`` only: the smallest hash of the k-grams inside each."""
    if not 1 <= k <= length:
        raise ValueError(f"k={k}: must lie in [1, length={length}]")
    ids = np.ascontiguousarray(ids, dtype=np.uint32)
    token_hash = np.ascontiguousarray(token_hash, dtype=np.uint64)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    if starts.size and (int(starts.min()) < 0 or int(starts.max()) + length > ids.shape[0]):
        raise ValueError("a window reaches past the shard's tokens")
    out = np.empty(starts.shape[0], dtype=np.uint64)
    _routing_at(ids, token_hash, starts, np.int64(length), np.int64(k), out)
    return out
