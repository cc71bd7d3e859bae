"""Counting filter: one saturating byte counter per cell, one key per counted position.

Keys. With min_length-windows on (``kgram = min_length >= 3``; our addition to the
article's Part 4), a position ``p`` is counted when the window ``tokens[p:p + kgram]``
lies inside one document and holds only frequent words; its key is the window. Every
returned phrase has length >= min_length, so each of its occurrences starts such a
window, and that window occurs in >= sigma documents. Positions that start no such window
are not counted at all. Without windows (``kgram = 0``, min_length 2) every in-document
bigram of two frequent words is counted, keyed by the bigram (the article's filter). A
position is a *candidate* when its key's cell reads at least ``min(sigma, 255)``.

Earlier versions counted the bigram next to the window as well and required both cells
to pass. A window that truly occurs >= sigma times implies its first bigram does too, so
the bigram test only caught collisions of the window's cell: with a table sized for the
keys (below) that is a few per cent of extra candidates, which exact counting removes
later, for half the random accesses.

No false negatives. Let ``c(S)`` be the occurrences of key ``S`` and ``c^(S)`` its cell.
Collisions only add and saturation stops at 255, so ``c^(S) >= min(c(S), 255)``; every
document containing ``S`` contributes an occurrence, so ``c(S) >= df(S)``. If ``df(S) >=
sigma`` then ``c^(S) >= min(sigma, 255)``. The comparison must be against ``min(sigma,
255)``, not ``sigma``: with ``sigma > 255`` a saturated cell would otherwise reject every
frequent key (regression test ``test_sigma_above_255_keeps_frequent_bigrams``). The
guarantee holds for any table size and any order of the increments (a saturating sum
does not depend on the order), which is what the partitioned build below relies on.

Size. The table is sized by the keys it will count, not by the corpus
(:meth:`bloomspan.engine.mining.config.MiningConfig.filter_size_for`); :func:`estimate_keys`
counts them on a sample of the documents (exactly on small corpora).

Memory access. Keys are hashed a chunk of documents at a time into a buffer of cells.
A table that fits in cache is incremented straight from the buffer; a larger one gets the
buffer's cells radix-partitioned by their high bits first (a counting sort into
``2**k``-cell regions of at most ``REGION_CELLS``), so the increments walk one
cache-sized region after the other instead of jumping across the whole table (at 89 M
tokens that random access into 512 MiB was the largest stage of the miner). The query
tests one bit per key in the table's *hot bitmap* (cell >= threshold), an eighth of the
table, a few thousand tokens of documents at a time (buffers in L1). Boilerplate makes
few cells hot (42,654 of 75 M at 100 M web tokens), so a second, small bitmap of the hot
cells' residues (:func:`hot_any_bitmap`, 64 bits per hot cell) is tested first and the
big one is read only by the keys it lets through; when the hot cells are too many for
that, the keys of large chunks are radix-partitioned by bitmap region as in the build.
No structure the length of the corpus is allocated: hits are kept as 4-byte offsets.

Rare words: kernels take the word filter's bitmap of frequent words; keys containing a
rare word can never be frequent and are neither counted nor returned.

Hashes: bigrams use 64-bit FNV-1a over the token ids, one 32-bit word per step (the
article's "FNV-1a over integer tokens", Part 4; byte-wise FNV would be 8 dependent multiplies).
Windows use a rolling polynomial hash (base ``KGRAM_BASE``, mod 2^64): O(1) per position
instead of O(k). A hash becomes a cell by Fibonacci hashing and multiply-shift
(:func:`cell_of`; no division): for windows that is the whole finish, one multiply after
the polynomial. The polynomial alone leaves its high bits almost blind to the window's
last token (added with coefficient 1); the Fibonacci multiply carries every bit of the sum
to the high bits the cell is taken from. Earlier versions ran the murmur3 64-bit mixer
first (two more multiplies and three shifts per position, in the build and in the query):
on the 30 M-token web store it changed the candidates by under 0.1 % (bench/RESULTS.md).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .word_filter import is_frequent

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
KGRAM_BASE = 0x100000001B3  # odd (the FNV prime); any odd base makes a rolling hash
GOLDEN = 0x9E3779B97F4A7C15  # 2**64 / golden ratio, odd
_MASK64 = (1 << 64) - 1

_OFFSET_U64 = np.uint64(FNV_OFFSET)
_PRIME_U64 = np.uint64(FNV_PRIME)
_BASE_U64 = np.uint64(KGRAM_BASE)
_GOLDEN_U64 = np.uint64(GOLDEN)
_S32 = np.uint64(32)
_S58 = np.uint64(58)
_DEBRUIJN = 0x03F79D71B4CB0A89  # every 6-bit window of it distinct: (lowest bit * it) >> 58 names the bit
_DEBRUIJN_U64 = np.uint64(_DEBRUIJN)
_DEBRUIJN_INDEX = np.zeros(64, dtype=np.int64)
_DEBRUIJN_INDEX[[((1 << i) * _DEBRUIJN & _MASK64) >> 58 for i in range(64)]] = np.arange(64)
_TWO32 = 2**32

# Tables up to this many cells are incremented in hash order; larger ones region by region.
DIRECT_MAX_CELLS = 8 * 1024 * 1024
REGION_CELLS = 256 * 1024      # a region of the partitioned build: a quarter of a 1 MiB L2
MAX_REGIONS = 4096             # scatter targets of one partitioning pass
BUILD_CHUNK_TOKENS = (1 << 20, 1 << 25)  # bounds of the build's chunk (sized by the table)
HOT_REGION_BYTES = 256 * 1024  # a slice of the hot bitmap the query tests at a time: a quarter of L2
QUERY_CHUNK_TOKENS = (1 << 12, 1 << 23)  # bounds of the query's chunk (small: its buffers stay in L1)
HOT_ANY_BITS_PER_HOT = 64      # size of the query's first bitmap per hot cell ...
HOT_ANY_MAX_BYTES = 4 * 1024 * 1024  # ... up to this (an eighth of L3); more hot cells: regions
KEY_SAMPLE_CHUNK_TOKENS = 1 << 16  # the table size is estimated on every 16th chunk of this size
KEY_SAMPLE_EVERY = 16


def filter_threshold(sigma: int) -> int:
    """Counter value a candidate needs: ``min(sigma, 255)`` (counters saturate at 255)."""
    return min(int(sigma), 255)


@njit(cache=True)
def fnv1a_bigram(t1, t2):
    """64-bit FNV-1a over the two token ids, one 32-bit word per step (uint64)."""
    h = (_OFFSET_U64 ^ np.uint64(t1)) * _PRIME_U64
    return (h ^ np.uint64(t2)) * _PRIME_U64


def fnv1a_bigram_reference(t1: int, t2: int) -> int:
    """Readable twin of :func:`fnv1a_bigram` on Python ints."""
    h = FNV_OFFSET
    for t in (int(t1), int(t2)):
        h = ((h ^ t) * FNV_PRIME) & _MASK64
    return h


@njit(cache=True)
def cell_of(h, n_cells):
    """Map a 64-bit hash onto [0, n_cells).

    Fibonacci hashing first (multiply by 2**64 / golden ratio: every bit of ``h`` reaches
    the high bits; word-wise FNV alone leaves its top bits almost constant for small ids),
    then Lemire's multiply-shift of the high 32 bits, no division. A modulo if
    ``n_cells >= 2**32``.
    """
    g = h * _GOLDEN_U64
    if n_cells < _TWO32:
        return np.int64(((g >> _S32) * np.uint64(n_cells)) >> _S32)
    return np.int64(g % np.uint64(n_cells))


def cell_of_reference(h: int, n_cells: int) -> int:
    g = (h * GOLDEN) & _MASK64
    if n_cells < 2**32:
        return ((g >> 32) * n_cells) >> 32
    return g % n_cells


def kgram_hash_reference(window) -> int:
    """Hash of a window of token ids: ``sum w[i] * BASE**(k-1-i) mod 2**64`` (its cell is
    :func:`cell_of_reference` of it)."""
    h = 0
    for t in window:
        h = (h * KGRAM_BASE + int(t)) & _MASK64
    return h


@njit(cache=True, inline="always")
def _frequent(bits, t):
    return ((bits[t >> 3] >> (t & 7)) & 1) == 1


@njit(cache=True)
def _count_keys_kernel(tokens, doc_offsets, frequent, kgram):
    n_docs = doc_offsets.shape[0] - 1
    total = 0
    for d in range(n_docs):
        s = doc_offsets[d]
        e = doc_offsets[d + 1]
        if kgram >= 3:
            # Rare words inside the window [p, p + kgram): a rolling count.
            rare = 0
            for j in range(s, min(s + kgram - 1, e)):
                rare += not _frequent(frequent, tokens[j])
            for p in range(s, e - kgram + 1):
                rare += not _frequent(frequent, tokens[p + kgram - 1])
                total += rare == 0
                rare -= not _frequent(frequent, tokens[p])
        else:
            for p in range(s, e - 1):
                total += _frequent(frequent, tokens[p]) and _frequent(frequent, tokens[p + 1])
    return total


@njit(cache=True)
def _key_cells(tokens, doc_offsets, d_lo, d_hi, frequent, kgram, n_cells, cells, offsets, with_offsets):
    """Cells of the keys of documents [d_lo, d_hi), in position order, into ``cells`` (and,
    if ``with_offsets``, each key's position minus ``doc_offsets[d_lo]`` into ``offsets``).
    Returns the number of keys."""
    n = 0
    base = doc_offsets[d_lo]
    top = np.uint64(1)  # BASE**(kgram-1)
    for _ in range(kgram - 1):
        top = top * _BASE_U64
    for d in range(d_lo, d_hi):
        s = doc_offsets[d]
        e = doc_offsets[d + 1]
        if kgram >= 3:
            h = np.uint64(0)
            rare = 0
            for j in range(s, min(s + kgram - 1, e)):
                h = h * _BASE_U64 + np.uint64(tokens[j])
                rare += not _frequent(frequent, tokens[j])
            for p in range(s, e - kgram + 1):
                t = tokens[p + kgram - 1]
                h = h * _BASE_U64 + np.uint64(t)
                rare += not _frequent(frequent, t)
                if rare == 0:
                    cells[n] = cell_of(h, n_cells)
                    if with_offsets:
                        offsets[n] = p - base
                    n += 1
                h = h - np.uint64(tokens[p]) * top
                rare -= not _frequent(frequent, tokens[p])
        else:
            for p in range(s, e - 1):
                if _frequent(frequent, tokens[p]) and _frequent(frequent, tokens[p + 1]):
                    cells[n] = cell_of(fnv1a_bigram(tokens[p], tokens[p + 1]), n_cells)
                    if with_offsets:
                        offsets[n] = p - base
                    n += 1
    return n


@njit(cache=True)
def saturating_increment(counters, cells, n):
    """counters[cells[i]] += 1 for the first n cells, stopping at 255 (byte counters)."""
    for i in range(n):
        c = cells[i]
        v = counters[c]
        counters[c] = v + (v < 255)  # saturating, branch-free


@njit(cache=True)
def _increment_by_region(counters, cells, n, shift, n_regions, scratch):
    """Counting sort of ``cells[:n]`` by region (``cell >> shift``) into ``scratch``, then
    the increments in that order: one region of the table at a time."""
    start = np.zeros(n_regions + 1, dtype=np.int64)
    for i in range(n):
        start[(cells[i] >> shift) + 1] += 1
    for r in range(n_regions):
        start[r + 1] += start[r]
    for i in range(n):
        c = cells[i]
        r = c >> shift
        scratch[start[r]] = c
        start[r] += 1
    saturating_increment(counters, scratch, n)


@njit(cache=True)
def _build_kernel(tokens, doc_offsets, bounds, frequent, kgram, counters, cells, scratch, shift, n_regions):
    n_cells = counters.shape[0]
    no_offsets = np.empty(0, dtype=np.uint32)
    for c in range(bounds.shape[0] - 1):
        n = _key_cells(tokens, doc_offsets, bounds[c], bounds[c + 1], frequent, kgram, n_cells,
                       cells, no_offsets, False)
        if n_regions <= 1:
            saturating_increment(counters, cells, n)
        else:
            _increment_by_region(counters, cells, n, shift, n_regions, scratch)


@njit(cache=True)
def _lowest_bit(word):
    """Index of the lowest set bit of a non-zero uint64 (de Bruijn multiply)."""
    return _DEBRUIJN_INDEX[((word & (~word + np.uint64(1))) * _DEBRUIJN_U64) >> _S58]


@njit(cache=True)
def _query_chunk(tokens, doc_offsets, d_lo, d_hi, frequent, kgram, n_cells, hot, hot_any, buf, shift, n_regions,
                 hits):
    """Candidate positions of documents [d_lo, d_hi), as offsets from ``doc_offsets[d_lo]``,
    ascending, into ``hits``; returns their number.

    The chunk's keys are hashed into ``buf.cells`` / ``buf.offsets`` first. A hot bitmap that
    fits in L2 (``n_regions == 1``, ``hot_any`` empty) is tested in position order, so the
    hits come out sorted. With few hot cells (``hot_any``, see :func:`hot_any_bitmap`) a key
    reads the big bitmap only when its bit in the small one is set, also in position order.
    A larger one with many hot cells gets the (cell, offset) pairs radix-partitioned by bitmap region first (the
    build's counting sort, carrying the offsets), so the bit tests walk one cache-sized slice
    of the bitmap after the other; the hits, then out of order, are set in a bit array over
    the chunk and read back in order."""
    cells = buf.cells
    offsets = buf.offsets
    n = _key_cells(tokens, doc_offsets, d_lo, d_hi, frequent, kgram, n_cells, cells, offsets, True)
    k = 0
    if hot_any.shape[0] > 0:
        mask = np.int64(hot_any.shape[0]) * 8 - 1
        for i in range(n):
            c = cells[i]
            a = np.int64(c) & mask
            if (hot_any[a >> 3] >> (a & 7)) & 1 and (hot[c >> 3] >> (c & 7)) & 1:
                hits[k] = offsets[i]
                k += 1
        return k
    if n_regions <= 1:
        for i in range(n):
            c = cells[i]
            hits[k] = offsets[i]
            k += (hot[c >> 3] >> (c & 7)) & 1  # branch-free: the write is undone by not counting it
        return k
    start = np.zeros(n_regions + 1, dtype=np.int64)
    for i in range(n):
        start[(cells[i] >> shift) + 1] += 1
    for r in range(n_regions):
        start[r + 1] += start[r]
    sorted_cells = buf.scratch_cells
    sorted_offsets = buf.scratch_offsets
    for i in range(n):
        c = cells[i]
        r = c >> shift
        j = start[r]
        sorted_cells[j] = c
        sorted_offsets[j] = offsets[i]
        start[r] = j + 1
    passed = buf.passed
    one = np.uint64(1)
    for i in range(n):
        c = sorted_cells[i]
        if (hot[c >> 3] >> (c & 7)) & 1:
            o = sorted_offsets[i]
            passed[o >> 6] |= one << np.uint64(o & 63)
    span = doc_offsets[d_hi] - doc_offsets[d_lo]
    for w in range((span + 63) >> 6):
        word = passed[w]
        if word:
            passed[w] = 0  # clean for the next chunk
            while word:
                hits[k] = (w << 6) + _lowest_bit(word)
                k += 1
                word &= word - one
    return k


@njit(cache=True)
def _query_kernel(tokens, doc_offsets, bounds, frequent, kgram, n_cells, hot, hot_any, buf, shift, n_regions, hits):
    """:func:`_query_chunk` over every chunk; returns the hits of all chunks one after the
    other (uint32 offsets, an array grown by doubling) and the number of each chunk's."""
    n_chunks = bounds.shape[0] - 1
    counts = np.zeros(n_chunks, dtype=np.int64)
    found = np.empty(max(1024, hits.shape[0]), dtype=np.uint32)
    total = 0
    for c in range(n_chunks):
        k = _query_chunk(tokens, doc_offsets, bounds[c], bounds[c + 1], frequent, kgram, n_cells, hot, hot_any, buf,
                         shift, n_regions, hits)
        if total + k > found.shape[0]:
            grown = np.empty(max(2 * found.shape[0], total + k), dtype=np.uint32)
            grown[:total] = found[:total]
            found = grown
        found[total:total + k] = hits[:k]
        total += k
        counts[c] = k
    return found[:total].copy(), counts


@njit(cache=True)
def _place_candidates(doc_offsets, bounds, counts, offsets, pos, doc):
    """Absolute positions and documents of the chunks' candidate offsets (chunk c holds
    ``counts[c]`` of them, ascending, from ``doc_offsets[bounds[c]]``)."""
    k = 0
    for c in range(bounds.shape[0] - 1):
        base = doc_offsets[bounds[c]]
        d = bounds[c]
        for _ in range(counts[c]):
            p = base + np.int64(offsets[k])
            while doc_offsets[d + 1] <= p:
                d += 1
            pos[k] = p
            doc[k] = d
            k += 1


def _largest_id(tokens, max_id) -> int:
    """``max_id`` when the caller knows it (it saves a pass over the corpus), else found."""
    if max_id is not None:
        return int(max_id)
    return int(tokens.max()) if tokens.size else 0


def _bitmap(tokens, frequent, max_id=None):
    if frequent is None:
        return np.full(_largest_id(tokens, max_id) // 8 + 1, 0xFF, dtype=np.uint8)
    if frequent.dtype != np.uint8 or (tokens.size and frequent.shape[0] * 8 <= _largest_id(tokens, max_id)):
        raise ValueError(f"frequent: a uint8 bitmap with a bit for every token id "
                         f"(got {frequent.dtype}{frequent.shape})")
    return frequent


def _kgram(kgram: int) -> int:
    if kgram < 0 or kgram in (1, 2):
        raise ValueError(f"kgram={kgram}: must be 0 (bigram keys) or >= 3 (window keys)")
    return int(kgram)


def _chunk_bounds(doc_offsets: np.ndarray, chunk_tokens: int) -> tuple[np.ndarray, int]:
    """Document boundaries of chunks of about ``chunk_tokens`` tokens (a longer document is a
    chunk of its own) and the most tokens any chunk holds."""
    n_docs = doc_offsets.shape[0] - 1
    total = int(doc_offsets[-1])
    targets = np.arange(chunk_tokens, total, chunk_tokens, dtype=np.int64)
    cuts = np.searchsorted(doc_offsets, targets, side="right") - 1
    bounds = np.unique(np.concatenate(([0], cuts, [n_docs]))).astype(np.int64)
    widest = int(np.diff(doc_offsets[bounds]).max()) if bounds.shape[0] > 1 else 0
    return bounds, max(widest, 1)


def _cell_dtype(n_cells: int):
    return np.uint32 if n_cells <= 2**32 else np.int64


def count_keys(tokens: np.ndarray, doc_offsets: np.ndarray, frequent: np.ndarray | None = None,
               kgram: int = 0) -> int:
    """Number of positions the filter counts: clean ``kgram``-windows (kgram >= 3) or
    bigrams of two frequent words (kgram 0). One sequential pass, no hashing."""
    frequent = _bitmap(tokens, frequent)
    return int(_count_keys_kernel(tokens, doc_offsets, frequent, np.int64(_kgram(kgram))))


def estimate_keys(tokens: np.ndarray, doc_offsets: np.ndarray, frequent: np.ndarray | None = None,
                  kgram: int = 0, sample_every: int = KEY_SAMPLE_EVERY, max_id: int | None = None) -> int:
    """:func:`count_keys`, exact on corpora of up to ``sample_every`` chunks of
    ``KEY_SAMPLE_CHUNK_TOKENS``; on larger ones counted on every ``sample_every``-th chunk
    of documents and scaled by tokens. Only the table's size depends on it, never a result.
    max_id: the largest token id if known (else one pass finds it; also below)."""
    frequent = _bitmap(tokens, frequent, max_id)
    kgram = _kgram(kgram)
    bounds, _ = _chunk_bounds(doc_offsets, KEY_SAMPLE_CHUNK_TOKENS)
    n_chunks = bounds.shape[0] - 1
    if n_chunks <= sample_every:
        return int(_count_keys_kernel(tokens, doc_offsets, frequent, np.int64(kgram)))
    keys = sampled = 0
    for c in range(sample_every // 2, n_chunks, sample_every):
        lo, hi = int(bounds[c]), int(bounds[c + 1])
        part = doc_offsets[lo:hi + 1]
        keys += int(_count_keys_kernel(tokens[part[0]:part[-1]], part - part[0], frequent, np.int64(kgram)))
        sampled += int(part[-1] - part[0])
    return int(round(keys * int(doc_offsets[-1]) / max(1, sampled)))


def region_layout(n_cells: int) -> tuple[int, int]:
    """``(shift, n_regions)`` of the partitioned build: regions of ``2**shift`` cells, at most
    ``REGION_CELLS`` of them unless that takes more than ``MAX_REGIONS`` regions; (0, 1) for
    a table small enough to increment directly."""
    if n_cells <= DIRECT_MAX_CELLS:
        return 0, 1
    shift = max(1, (REGION_CELLS - 1).bit_length())
    while -(-n_cells >> shift) > MAX_REGIONS:
        shift += 1
    return shift, -(-n_cells >> shift)


def build_counting_filter(tokens: np.ndarray, doc_offsets: np.ndarray, n_cells: int,
                          frequent: np.ndarray | None = None, kgram: int = 0, max_id: int | None = None) -> np.ndarray:
    """Count every key (see the module docstring) into ``n_cells`` saturating byte counters.

    tokens: uint32 (W,); doc_offsets: int64 (D+1,); frequent: uint8 bitmap of the frequent
    words (:func:`bloomspan.engine.mining.word_filter.frequent_bitmap`; None: every word);
    kgram: 0 (bigram keys) or the window length >= 3. Returns uint8 (n_cells,).
    """
    if n_cells < 1:
        raise ValueError(f"n_cells={n_cells}: must be >= 1")
    frequent = _bitmap(tokens, frequent, max_id)
    kgram = _kgram(kgram)
    shift, n_regions = region_layout(n_cells)
    lo, hi = BUILD_CHUNK_TOKENS
    bounds, widest = _chunk_bounds(doc_offsets, min(hi, max(lo, n_cells)))
    # Allocated by numpy, not inside the kernel: numpy asks the kernel for transparent huge
    # pages on large arrays, which saves a TLB miss on most counter accesses.
    counters = np.zeros(n_cells, dtype=np.uint8)
    cells = np.empty(widest, dtype=_cell_dtype(n_cells))
    scratch = np.empty(widest if n_regions > 1 else 0, dtype=cells.dtype)
    with np.errstate(over="ignore"):  # uint64 wrap-around is the hash; JIT-less runs warn
        _build_kernel(tokens, doc_offsets, bounds, frequent, np.int64(kgram), counters, cells, scratch,
                      np.int64(shift), np.int64(n_regions))
    return counters


@njit(cache=True)
def _hot_bitmap_kernel(counters, threshold, bits):
    for c in range(counters.shape[0]):
        bits[c >> 3] |= np.uint8(counters[c] >= threshold) << np.uint8(c & 7)


@njit(cache=True)
def _popcount_kernel(bits):
    total = 0
    for b in range(bits.shape[0]):
        x = bits[b]
        while x:
            x &= x - np.uint8(1)
            total += 1
    return total


def _count_set_bits(bits: np.ndarray) -> int:
    return int(_popcount_kernel(bits))


def hot_bitmap(counters: np.ndarray, threshold: int) -> np.ndarray:
    """uint8 (ceil(n_cells / 8) + 1,): bit ``c % 8`` of byte ``c // 8`` set iff ``counters[c] >= threshold``.

    A kernel rather than ``np.packbits(counters >= threshold)``, whose boolean temporary is
    as large as the table."""
    bits = np.zeros((counters.shape[0] + 7) // 8 + 1, dtype=np.uint8)
    _hot_bitmap_kernel(counters, np.int64(threshold), bits)
    return bits


def hot_bitmap_reference(counters, threshold: int) -> np.ndarray:
    """Readable twin of :func:`hot_bitmap`."""
    bits = np.packbits(np.asarray(counters) >= threshold, bitorder="little")
    return np.concatenate([bits, np.zeros(1, dtype=np.uint8)])


class QueryBuffers(NamedTuple):
    """Scratch of the query, sized for its widest chunk of documents (``n_cells <= 2**32``:
    uint32 cells; else int64). cells/offsets: a chunk's keys and their positions in it;
    scratch_cells/scratch_offsets: the same, partitioned by bitmap region (empty when the
    bitmap is tested directly); passed: uint64 bit array over the chunk's positions."""

    cells: np.ndarray
    offsets: np.ndarray
    scratch_cells: np.ndarray
    scratch_offsets: np.ndarray
    passed: np.ndarray


@njit(cache=True)
def _hot_any_kernel(hot, n_bits, out):
    mask = np.int64(n_bits - 1)
    for b in range(hot.shape[0]):
        byte = hot[b]
        if byte:
            for j in range(8):
                if (byte >> j) & 1:
                    a = (np.int64(b) * 8 + j) & mask
                    out[a >> 3] |= np.uint8(1) << np.uint8(a & 7)


def hot_any_bitmap(hot: np.ndarray, n_bits: int) -> np.ndarray:
    """uint8 (n_bits / 8,): bit ``a`` set iff some hot cell ``c`` has ``c % n_bits == a``
    (``n_bits`` a power of two). A key whose bit here is clear is not a candidate; one whose
    bit is set still reads its own bit of ``hot``. Cells are spread uniformly by
    :func:`cell_of`, so with ``n_bits`` >= ``HOT_ANY_BITS_PER_HOT`` times the hot cells at
    most one key in that many that is not a candidate reads the big bitmap."""
    out = np.zeros(n_bits // 8, dtype=np.uint8)
    _hot_any_kernel(hot, np.int64(n_bits), out)
    return out


def hot_any_bitmap_reference(hot, n_bits: int) -> np.ndarray:
    """Readable twin of :func:`hot_any_bitmap`."""
    hot_cells = np.flatnonzero(np.unpackbits(np.asarray(hot, dtype=np.uint8), bitorder="little"))
    bits = np.zeros(n_bits, dtype=bool)
    bits[hot_cells % n_bits] = True
    return np.packbits(bits, bitorder="little")


def query_layout(n_cells: int, n_hot: int = 0) -> tuple[int, int, int, int]:
    """``(shift, n_regions, chunk_tokens, any_bits)`` of the query for a table of ``n_cells``
    with ``n_hot`` hot cells.

    * The hot bitmap (an eighth of the table) fits in ``HOT_REGION_BYTES``: tested directly,
      ``(0, 1, ..., 0)``.
    * Few hot cells (boilerplate: 0.06 % of the cells at 100 M web tokens): a small bitmap
      of ``any_bits`` bits, ``HOT_ANY_BITS_PER_HOT`` per hot cell, at most
      ``HOT_ANY_MAX_BYTES``, is tested first (:func:`hot_any_bitmap`), ``(0, 1, ..., any_bits)``.
    * Otherwise the bitmap is tested in regions of ``2**shift`` cells, each
      ``HOT_REGION_BYTES`` of bitmap, by chunks that hold enough keys to touch most of its
      cache lines once per pass.
    """
    region_cells = 8 * HOT_REGION_BYTES
    lo, hi = QUERY_CHUNK_TOKENS
    if n_cells <= region_cells:
        return 0, 1, lo, 0
    any_bits = 1 << max(16, (HOT_ANY_BITS_PER_HOT * max(1, n_hot) - 1).bit_length())
    if any_bits <= 8 * HOT_ANY_MAX_BYTES:
        return 0, 1, lo, any_bits
    shift = (region_cells - 1).bit_length()
    return shift, -(-n_cells >> shift), min(hi, max(lo, n_cells // 8)), 0


def candidate_occurrences(tokens: np.ndarray, doc_offsets: np.ndarray, counters: np.ndarray, threshold: int,
                          frequent: np.ndarray | None = None, kgram: int = 0,
                          max_id: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Start positions of the counted keys (see :func:`build_counting_filter`) whose cell
    reads >= ``threshold``.

    One pass over the corpus, a chunk of documents at a time (:func:`_query_chunk`); the
    chunks' hits are kept as uint32 offsets (4 bytes per candidate, no array the length of
    the corpus) and placed at the end. Returns ``(pos, doc)``: int64 (C,) ascending positions
    and int32 (C,) their documents.
    """
    frequent = _bitmap(tokens, frequent, max_id)
    kgram = _kgram(kgram)
    n_cells = counters.shape[0]
    hot = hot_bitmap(counters, threshold)
    shift, n_regions, chunk_tokens, any_bits = query_layout(n_cells, _count_set_bits(hot))
    hot_any = hot_any_bitmap(hot, any_bits) if any_bits else np.zeros(0, dtype=np.uint8)
    bounds, widest = _chunk_bounds(doc_offsets, chunk_tokens)
    partitioned = n_regions > 1
    cell_dtype = _cell_dtype(n_cells)
    buf = QueryBuffers(np.empty(widest, dtype=cell_dtype), np.empty(widest, dtype=np.uint32),
                       np.empty(widest if partitioned else 0, dtype=cell_dtype),
                       np.empty(widest if partitioned else 0, dtype=np.uint32),
                       np.zeros(widest // 64 + 1 if partitioned else 0, dtype=np.uint64))
    hits = np.empty(widest, dtype=np.uint32)
    with np.errstate(over="ignore"):  # uint64 wrap-around is the hash; JIT-less runs warn
        offsets, counts = _query_kernel(tokens, doc_offsets, bounds, frequent, np.int64(kgram), np.int64(n_cells),
                                        hot, hot_any, buf, np.int64(shift), np.int64(n_regions), hits)
    del hot, hot_any, buf, hits
    pos = np.empty(offsets.shape[0], dtype=np.int64)
    doc = np.empty(offsets.shape[0], dtype=np.int32)
    _place_candidates(doc_offsets, bounds, counts, offsets, pos, doc)
    return pos, doc


def _key_cells_reference(tokens, doc_offsets, n_cells, frequent, kgram):
    """Readable twin's core: {position: (document, cell)} of every counted key."""
    def ok(t):
        return frequent is None or is_frequent(frequent, int(t))

    out = {}
    for d in range(len(doc_offsets) - 1):
        s, e = int(doc_offsets[d]), int(doc_offsets[d + 1])
        for p in range(s, e - 1):
            if kgram >= 3:
                window = [int(t) for t in tokens[p:p + kgram]]
                if p + kgram <= e and all(ok(t) for t in window):
                    out[p] = (d, cell_of_reference(kgram_hash_reference(window), n_cells))
            elif ok(tokens[p]) and ok(tokens[p + 1]):
                out[p] = (d, cell_of_reference(fnv1a_bigram_reference(int(tokens[p]), int(tokens[p + 1])), n_cells))
    return out


def count_keys_reference(tokens, doc_offsets, frequent=None, kgram: int = 0) -> int:
    """Readable twin of :func:`count_keys`."""
    return len(_key_cells_reference(tokens, doc_offsets, 1, frequent, kgram))


def build_counting_filter_reference(tokens, doc_offsets, n_cells: int, frequent=None, kgram: int = 0) -> np.ndarray:
    """Readable twin of :func:`build_counting_filter`: one increment per key, in position order."""
    counters = [0] * n_cells
    for _, c in _key_cells_reference(tokens, doc_offsets, n_cells, frequent, kgram).values():
        counters[c] = min(counters[c] + 1, 255)
    return np.asarray(counters, dtype=np.uint8)


def candidate_occurrences_reference(tokens, doc_offsets, counters, threshold: int, frequent=None, kgram: int = 0):
    """Readable twin of :func:`candidate_occurrences`."""
    cells = _key_cells_reference(tokens, doc_offsets, len(counters), frequent, kgram)
    hits = [(p, d) for p, (d, c) in sorted(cells.items()) if counters[c] >= threshold]
    return (np.asarray([p for p, _ in hits], dtype=np.int64), np.asarray([d for _, d in hits], dtype=np.int32))


def fill_ratio(counters: np.ndarray) -> float:
    """Share of cells that are non-zero."""
    return float(np.count_nonzero(counters)) / max(1, counters.shape[0])
