"""Counting filter: one saturating byte counter per cell, one hash function per key kind.

Every bigram occurrence inside a document (``tokens[p], tokens[p+1]``, both in the same
document) increments the cell ``cell_of(fnv1a(t1, t2))``; counters saturate at 255. A
bigram occurrence is a *candidate* when its cell reads at least ``min(sigma, 255)``.

No false negatives. Let ``c(S)`` be the occurrences of key ``S`` and ``c^(S)`` its cell.
Collisions only add and saturation stops at 255, so ``c^(S) >= min(c(S), 255)``; every
document containing ``S`` contributes an occurrence, so ``c(S) >= df(S)``. If ``df(S) >=
sigma`` then ``c^(S) >= min(sigma, 255)``. The comparison must be against ``min(sigma,
255)``, not ``sigma``: with ``sigma > 255`` a saturated cell would otherwise reject every
frequent bigram (regression test ``test_sigma_above_255_keeps_frequent_bigrams``).

k-gram windows (``kgram = min_length >= 3``; our addition to the article's Part 4). Every
returned phrase has length >= min_length, so each of its occurrences starts a window of
``min_length`` tokens, inside one document, made of frequent words, occurring in >= sigma
documents. The same table also counts those windows (a second, independent key kind:
sharing cells only adds, so the guarantee above holds for both), and a bigram occurrence
is a candidate only if its window's cell passes too. On natural text almost every
frequent bigram occurrence starts a rare 10-gram, so this cuts the seeds and the growth
to the boilerplate. Positions that start no such window (too close to the document end,
or a rare word inside) are not counted at all, bigram included: a returned phrase's
occurrences all start clean windows, so its bigram is still counted in every document it
occurs in. False positives of either kind are removed by exact counting later.

Rare words: kernels take the word filter's bitmap of frequent words; bigrams and windows
containing a rare word can never be frequent and are neither counted nor returned.

Hashes: bigrams use 64-bit FNV-1a over the token ids, one 32-bit word per step (the
article's "FNV-1a over integer tokens", Part 4; byte-wise FNV would be 8 dependent multiplies).
Windows use a rolling polynomial hash (base ``KGRAM_BASE``, mod 2^64) finished by the
murmur3 64-bit mixer: O(1) per position instead of O(k). A hash becomes a cell by
Fibonacci hashing and multiply-shift (:func:`cell_of`; no division).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .word_filter import is_frequent

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
KGRAM_BASE = 0x100000001B3  # odd (the FNV prime); any odd base makes a rolling hash
GOLDEN = 0x9E3779B97F4A7C15  # 2**64 / golden ratio, odd
_MIX1 = 0xFF51AFD7ED558CCD
_MIX2 = 0xC4CEB9FE1A85EC53
_MASK64 = (1 << 64) - 1

_OFFSET_U64 = np.uint64(FNV_OFFSET)
_PRIME_U64 = np.uint64(FNV_PRIME)
_BASE_U64 = np.uint64(KGRAM_BASE)
_GOLDEN_U64 = np.uint64(GOLDEN)
_MIX1_U64 = np.uint64(_MIX1)
_MIX2_U64 = np.uint64(_MIX2)
_S32 = np.uint64(32)
_S33 = np.uint64(33)
_TWO32 = 2**32

# Kernels hash a block of positions first and touch the counters second: the counter
# accesses are cache misses (the table is ~8 bytes per token), and with the hashing out
# of the way the CPU keeps many of them in flight at once.
_BLOCK = 512


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


@njit(cache=True)
def _mix64(h):
    h = h ^ (h >> _S33)
    h = h * _MIX1_U64
    h = h ^ (h >> _S33)
    h = h * _MIX2_U64
    return h ^ (h >> _S33)


def kgram_hash_reference(window) -> int:
    """Hash of a window of token ids: ``mix64(sum w[i] * BASE**(k-1-i) mod 2**64)``."""
    h = 0
    for t in window:
        h = (h * KGRAM_BASE + int(t)) & _MASK64
    for mult in (_MIX1, _MIX2, None):
        h ^= h >> 33
        if mult is not None:
            h = (h * mult) & _MASK64
    return h


@njit(cache=True, inline="always")
def _frequent(bits, t):
    return ((bits[t >> 3] >> (t & 7)) & 1) == 1


@njit(cache=True)
def _scan(tokens, doc_offsets, n_cells, frequent, kgram, counters, threshold, build, passed):
    """Shared pass. build: increment counters; else: set passed[p] for candidates.

    Returns the number of positions counted (build) or candidates (query).
    """
    n_docs = doc_offsets.shape[0] - 1
    buf_b = np.empty(_BLOCK, dtype=np.int64)   # bigram cell (build only)
    buf_k = np.empty(_BLOCK, dtype=np.int64)   # window cell, -1 if no window check
    buf_p = np.empty(_BLOCK, dtype=np.int64)   # position
    use_k = kgram >= 3
    top = np.uint64(1)  # BASE**(k-1)
    if use_k:
        for _ in range(kgram - 1):
            top = top * _BASE_U64
    n = 0
    total = 0
    for d in range(n_docs):
        s = doc_offsets[d]
        e = doc_offsets[d + 1]
        h = np.uint64(0)
        rare = 0
        if use_k:
            for j in range(s, min(s + kgram - 1, e)):
                h = h * _BASE_U64 + np.uint64(tokens[j])
                rare += not _frequent(frequent, tokens[j])
        for p in range(s, e - 1):
            kcell = np.int64(-1)
            if use_k:
                # Roll the window [p, p + kgram); a position without a clean window in its
                # document cannot start a returned phrase: it is not counted at all.
                j = p + kgram - 1
                if j >= e:
                    break
                h = h * _BASE_U64 + np.uint64(tokens[j])
                rare += not _frequent(frequent, tokens[j])
                clean = rare == 0
                if clean:
                    kcell = cell_of(_mix64(h), n_cells)
                h = h - np.uint64(tokens[p]) * top
                rare -= not _frequent(frequent, tokens[p])
                if not clean:
                    continue
            else:
                if not (_frequent(frequent, tokens[p]) and _frequent(frequent, tokens[p + 1])):
                    continue
            if build:
                buf_b[n] = cell_of(fnv1a_bigram(tokens[p], tokens[p + 1]), n_cells)
            buf_k[n] = kcell
            buf_p[n] = p
            n += 1
            if n == _BLOCK:
                total += _flush(tokens, n_cells, counters, buf_b, buf_k, buf_p, n, threshold, build, passed)
                n = 0
    total += _flush(tokens, n_cells, counters, buf_b, buf_k, buf_p, n, threshold, build, passed)
    return total


@njit(cache=True)
def _flush(tokens, n_cells, counters, buf_b, buf_k, buf_p, n, threshold, build, passed):
    if build:
        for j in range(n):
            c = buf_b[j]
            v = counters[c]
            counters[c] = v + (v < 255)  # saturating, branch-free
            c = buf_k[j]
            if c >= 0:
                v = counters[c]
                counters[c] = v + (v < 255)
        return n
    hits = 0
    for j in range(n):
        # The window (when there is one) is far more selective: test it first and hash
        # the bigram only for the survivors.
        if buf_k[j] >= 0 and counters[buf_k[j]] < threshold:
            continue
        p = buf_p[j]
        if counters[cell_of(fnv1a_bigram(tokens[p], tokens[p + 1]), n_cells)] >= threshold:
            passed[p] = 1
            hits += 1
    return hits


@njit(cache=True)
def _build_kernel(tokens, doc_offsets, counters, frequent, kgram):
    _scan(tokens, doc_offsets, counters.shape[0], frequent, kgram, counters, 0, True, np.zeros(0, dtype=np.uint8))


def _bitmap(tokens, frequent):
    if frequent is None:
        return np.full((int(tokens.max()) if tokens.size else 0) // 8 + 1, 0xFF, dtype=np.uint8)
    if frequent.dtype != np.uint8 or (tokens.size and frequent.shape[0] * 8 <= int(tokens.max())):
        raise ValueError(f"frequent: a uint8 bitmap with a bit for every token id "
                         f"(got {frequent.dtype}{frequent.shape})")
    return frequent


def build_counting_filter(tokens: np.ndarray, doc_offsets: np.ndarray, n_cells: int,
                          frequent: np.ndarray | None = None, kgram: int = 0) -> np.ndarray:
    """Count every in-document bigram (and ``kgram``-window if kgram >= 3) into byte counters.

    tokens: uint32 (W,); doc_offsets: int64 (D+1,); frequent: uint8 bitmap of the frequent
    words (:func:`bloomspan.engine.mining.word_filter.frequent_bitmap`; None: every word), keys with
    a rare word are not counted. Returns uint8 (n_cells,).
    """
    if n_cells < 1:
        raise ValueError(f"n_cells={n_cells}: must be >= 1")
    frequent = _bitmap(tokens, frequent)
    # Allocated by numpy, not inside the kernel: numpy asks the kernel for transparent huge
    # pages on large arrays, which saves a TLB miss on most random counter accesses.
    counters = np.zeros(n_cells, dtype=np.uint8)
    with np.errstate(over="ignore"):  # uint64 wrap-around is the hash; JIT-less runs warn
        _build_kernel(tokens, doc_offsets, counters, frequent, np.int64(kgram))
    return counters


def _key_cells(tokens, doc_offsets, n_cells, frequent, kgram):
    """Readable twin's core: per position, (bigram cell, window cell or None, window ok)."""
    def ok(t):
        return frequent is None or is_frequent(frequent, int(t))

    out = {}
    for d in range(len(doc_offsets) - 1):
        s, e = int(doc_offsets[d]), int(doc_offsets[d + 1])
        for p in range(s, e - 1):
            a, b = int(tokens[p]), int(tokens[p + 1])
            if not (ok(a) and ok(b)):
                continue
            window = [int(t) for t in tokens[p:p + kgram]] if kgram >= 3 else None
            w_ok = window is None or (p + kgram <= e and all(ok(t) for t in window))
            w_cell = cell_of_reference(kgram_hash_reference(window), n_cells) if window is not None and w_ok else None
            out[p] = (cell_of_reference(fnv1a_bigram_reference(a, b), n_cells), w_cell, w_ok)
    return out


def build_counting_filter_reference(tokens, doc_offsets, n_cells: int, frequent=None, kgram: int = 0) -> np.ndarray:
    """Readable twin of :func:`build_counting_filter`."""
    counters = [0] * n_cells
    for b_cell, w_cell, w_ok in _key_cells(tokens, doc_offsets, n_cells, frequent, kgram).values():
        if not w_ok:
            continue
        for c in (b_cell, w_cell):
            if c is not None:
                counters[c] = min(counters[c] + 1, 255)
    return np.asarray(counters, dtype=np.uint8)


@njit(cache=True)
def _candidates_kernel(tokens, doc_offsets, counters, threshold, frequent, kgram, passed):
    n_tokens = tokens.shape[0]
    n_pass = _scan(tokens, doc_offsets, counters.shape[0], frequent, kgram, counters, threshold, False, passed)
    pos = np.empty(n_pass, dtype=np.int64)
    doc = np.empty(n_pass, dtype=np.int32)
    k = 0
    d = 0
    for p in range(n_tokens):
        if passed[p]:
            while doc_offsets[d + 1] <= p:
                d += 1
            pos[k] = p
            doc[k] = d
            k += 1
    return pos, doc


def candidate_occurrences(tokens: np.ndarray, doc_offsets: np.ndarray, counters: np.ndarray, threshold: int,
                          frequent: np.ndarray | None = None, kgram: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Start positions of in-document bigrams of frequent words whose cell reads >=
    ``threshold`` (and, if ``kgram >= 3``, whose ``kgram``-window lies in the document, has
    only frequent words and a cell that passes too).

    Returns ``(pos, doc)``: int64 (C,) ascending positions and int32 (C,) their documents.
    """
    frequent = _bitmap(tokens, frequent)
    with np.errstate(over="ignore"):
        return _candidates_kernel(tokens, doc_offsets, counters, np.int64(threshold), frequent,
                                  np.int64(kgram), np.zeros(tokens.shape[0], dtype=np.uint8))


def candidate_occurrences_reference(tokens, doc_offsets, counters, threshold: int, frequent=None, kgram: int = 0):
    """Readable twin of :func:`candidate_occurrences`."""
    pos, doc = [], []
    n_cells = len(counters)
    cells = _key_cells(tokens, doc_offsets, n_cells, frequent, kgram)
    for d in range(len(doc_offsets) - 1):
        for p in range(int(doc_offsets[d]), int(doc_offsets[d + 1]) - 1):
            if p not in cells:
                continue
            b_cell, w_cell, w_ok = cells[p]
            if w_ok and counters[b_cell] >= threshold and (w_cell is None or counters[w_cell] >= threshold):
                pos.append(p)
                doc.append(d)
    return np.asarray(pos, dtype=np.int64), np.asarray(doc, dtype=np.int32)


def fill_ratio(counters: np.ndarray) -> float:
    """Share of cells that are non-zero."""
    return float(np.count_nonzero(counters)) / max(1, counters.shape[0])
