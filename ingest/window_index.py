"""Find every ``length``-token window of known phrases in documents: a hash index over windows.

Every ``min_length`` window of a mined maximal phrase is itself frequent (a window occurs in
every document its phrase occurs in), so a run of such windows in a new document is known
boilerplate by the criterion that mined the phrase, even where the phrase's own neighbours
differ (a cookie banner followed by a button the corpus never showed). This module finds
those windows; :class:`~bloomspan.ingest.matcher.PhraseMatcher` (``match="windows"``) merges
them into spans.

Index (:func:`build_window_index`): the distinct ``(window, scope)`` pairs of the patterns
(Z symbols in all, n entries), each stored as a position in the patterns' concatenated
symbols (no copy of the window), sorted by a 64-bit polynomial hash, plus an
open-addressing table (T slots, a power of two >= 2n) from a hash to its first entry.
Memory: 8 bytes per pattern symbol (symbols, entry start/pattern/scope) and about 40 bytes
per distinct window; an Aho–Corasick trie over the windows would hold ``length`` states
per window instead.

Scan (:func:`window_runs`, numba): one rolling hash per document that restarts after a
symbol 0 (a token in no pattern, which no window holds), a bit filter (16 bits per entry,
small enough for the cache) that turns most absent windows away without a table probe, one
table probe per remaining position, and a token-by-token check of every entry with the same
hash, so a hash collision can never report a window. Consecutive windows of one pattern are
reported as one run (:meth:`WindowIndex.find_runs`); scope filtering is the caller's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd: multiplication by it is invertible mod 2**64
_MIX = np.uint64(0xBF58476D1CE4E5B9)  # Fibonacci-style mixing of a hash into a table slot
_FILTER_MIX = np.uint64(0x94D049BB133111EB)  # another one for the bit filter, so its bits are independent
FILTER_BITS_PER_ENTRY = 16  # bit filter size: about 1/16 of the windows not in the index get a table probe
GLOBAL_SCOPE = -1


@njit(cache=True, nogil=True)
def _pattern_window_hashes(symbols, pattern_offsets, length, out_hash, out_start, out_pattern):
    """Hash every window of ``length`` of each pattern; returns the number of windows written.

    symbols int32 (Z,); pattern_offsets int64 (P+1,); out_* (capacity >= Z): hash uint64,
    start int64 (into symbols), pattern int32.
    """
    top = np.uint64(1)
    for _ in range(length - 1):
        top = top * _BASE
    k = 0
    for p in range(pattern_offsets.shape[0] - 1):
        lo, hi = pattern_offsets[p], pattern_offsets[p + 1]
        if hi - lo < length:
            continue
        h = np.uint64(0)
        for i in range(lo, hi):
            if i - lo >= length:
                h = h - (np.uint64(symbols[i - length]) + np.uint64(1)) * top
            h = h * _BASE + np.uint64(symbols[i]) + np.uint64(1)
            if i - lo + 1 >= length:
                out_hash[k] = h
                out_start[k] = i + 1 - length
                out_pattern[k] = p
                k += 1
    return k


@njit(cache=True, nogil=True)
def _distinct_entries(symbols, length, hashes, starts, scopes, keep):
    """In entries sorted by (hash, scope, pattern), mark the first of each equal (window, scope)."""
    n = hashes.shape[0]
    for i in range(n):
        keep[i] = True
        j = i - 1
        while j >= 0 and hashes[j] == hashes[i] and scopes[j] == scopes[i]:
            if keep[j]:
                same = True
                for t in range(length):
                    if symbols[starts[j] + t] != symbols[starts[i] + t]:
                        same = False
                        break
                if same:
                    keep[i] = False
                    break
            j -= 1


@njit(cache=True, nogil=True)
def _build_table(hashes, bits):
    """Open-addressing table (2**bits slots, int64, -1 = empty) of the first entry of each hash."""
    size = np.int64(1) << bits
    mask = size - 1
    table = np.full(size, -1, dtype=np.int64)
    shift = np.uint64(64 - bits)
    for e in range(hashes.shape[0]):
        if e > 0 and hashes[e] == hashes[e - 1]:
            continue
        slot = np.int64((hashes[e] * _MIX) >> shift)
        while table[slot] != -1:
            slot = (slot + 1) & mask
        table[slot] = e
    return table


@njit(cache=True, nogil=True)
def _build_filter(hashes, bits):
    """A bit set of 2**bits bits, one bit per entry hash (other bits of it than the table's)."""
    words = np.zeros((np.int64(1) << bits) >> 6, dtype=np.uint64)
    shift = np.uint64(64 - bits)
    for e in range(hashes.shape[0]):
        b = np.int64((hashes[e] * _FILTER_MIX) >> shift)
        words[b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    return words


@njit(cache=True, nogil=True)
def window_runs(sym, doc_offsets, length, symbols, entry_start, entry_hash, entry_pattern, n_patterns, table,
                bits, filter_words, filter_bits, out_start, out_end, out_pattern):
    """Runs of window occurrences; returns the number of runs.

    sym int32 (W,) document symbols (0 = in no pattern), doc_offsets int64 (D+1,); the
    index arrays as in :class:`WindowIndex`. A run is a maximal sequence of occurrences of
    one pattern's windows at consecutive starts inside one document: it covers
    ``[out_start[k], out_end[k])`` (int64, end exclusive) and is reported for
    ``out_pattern[k]`` (int32). Every entry with the window's hash is checked token by token
    (a collision reports nothing). Runs come ordered by start; a return value above the
    capacity (out_start.shape[0]) means the caller re-runs with larger buffers.
    """
    cap = out_start.shape[0]
    n_entries = entry_hash.shape[0]
    mask = (np.int64(1) << bits) - 1
    shift = np.uint64(64 - bits)
    filter_shift = np.uint64(64 - filter_bits)
    top = np.uint64(1)
    for _ in range(length - 1):
        top = top * _BASE
    open_run = np.full(n_patterns, -1, dtype=np.int64)  # pattern -> its last run
    run_last = np.empty(max(cap, 1), dtype=np.int64)  # start of the last window of each run
    count = 0
    for d in range(doc_offsets.shape[0] - 1):
        doc_start = doc_offsets[d]
        h = np.uint64(0)
        run = 0  # symbols since the last 0 (capped at length: h covers the last `run` symbols)
        for i in range(doc_start, doc_offsets[d + 1]):
            a = sym[i]
            if a <= 0:
                h = np.uint64(0)
                run = 0
                continue
            if run == length:
                h = h - (np.uint64(sym[i - length]) + np.uint64(1)) * top
            else:
                run += 1
            h = h * _BASE + np.uint64(a) + np.uint64(1)
            if run < length:
                continue
            b = np.int64((h * _FILTER_MIX) >> filter_shift)
            if (filter_words[b >> 6] >> np.uint64(b & 63)) & np.uint64(1) == 0:
                continue
            slot = np.int64((h * _MIX) >> shift)
            first = i + 1 - length
            while table[slot] != -1:
                e = table[slot]
                if entry_hash[e] == h:
                    while e < n_entries and entry_hash[e] == h:
                        s = entry_start[e]
                        same = True
                        for t in range(length):
                            if sym[first + t] != symbols[s + t]:
                                same = False
                                break
                        if same:
                            q = entry_pattern[e]
                            k = open_run[q]
                            if k >= 0 and k < cap and run_last[k] == first - 1 and first - 1 >= doc_start:
                                run_last[k] = first
                                out_end[k] = first + length
                            else:
                                if count < cap:
                                    out_start[count] = first
                                    out_end[count] = first + length
                                    out_pattern[count] = q
                                    run_last[count] = first
                                open_run[q] = count
                                count += 1
                        e += 1
                    break
                slot = (slot + 1) & mask
    return count


@dataclass(frozen=True)
class WindowIndex:
    """The distinct ``(window, scope)`` pairs of a pattern set, hashed. n entries, T = 2**bits slots.

    length:        symbols per window.
    symbols:       int32 (Z,) the patterns' symbols, concatenated.
    entry_start:   int64 (n,) where entry e's window starts in ``symbols``.
    entry_pattern: int32 (n,) the first pattern (lowest index) holding the window in that scope.
    entry_scope:   int32 (n,) the scope id of those patterns (GLOBAL_SCOPE: every document).
    entry_hash:    uint64 (n,) the window's hash, ascending.
    table:         int64 (T,) the first entry of each hash, -1 for an empty slot.
    """

    length: int
    symbols: np.ndarray
    entry_start: np.ndarray
    entry_pattern: np.ndarray
    entry_scope: np.ndarray
    entry_hash: np.ndarray
    table: np.ndarray
    bits: int
    n_patterns: int
    filter_words: np.ndarray
    filter_bits: int

    @property
    def n_entries(self) -> int:
        return int(self.entry_hash.shape[0])

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in (self.symbols, self.entry_start, self.entry_pattern, self.entry_scope,
                                           self.entry_hash, self.table, self.filter_words))

    def find_runs(self, sym: np.ndarray, doc_offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Runs of overlapping window occurrences of one pattern, as ``(start, end, pattern)``
        (int64, int64, int32; end exclusive), sorted by (start, end, pattern).

        A run is a maximal sequence of one pattern's windows at consecutive starts inside one
        document of ``doc_offsets`` (int64 (D+1,)), so its tokens are exactly the tokens those
        windows cover. A window is reported for the first pattern of its scope that holds it
        (the pattern's scope decides where it applies: callers filter by it).
        """
        sym = np.ascontiguousarray(sym, dtype=np.int32)
        doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
        cap = max(16, sym.shape[0] // 16)
        while True:
            r_start = np.empty(cap, dtype=np.int64)
            r_end = np.empty(cap, dtype=np.int64)
            r_pattern = np.empty(cap, dtype=np.int32)
            with np.errstate(over="ignore"):  # the hash wraps mod 2**64 by design (matters without JIT)
                m = window_runs(sym, doc_offsets, self.length, self.symbols, self.entry_start, self.entry_hash,
                                self.entry_pattern, self.n_patterns, self.table, self.bits, self.filter_words,
                                self.filter_bits, r_start, r_end, r_pattern)
            if m <= cap:
                break
            cap = int(m)
        r_start, r_end, r_pattern = r_start[:m], r_end[:m], r_pattern[:m]
        order = np.lexsort((r_pattern, r_end, r_start))
        return r_start[order], r_end[order], r_pattern[order]


def build_window_index(patterns: list[tuple[int, ...]], length: int, scopes: np.ndarray | None = None) -> WindowIndex:
    """Index of every ``length``-window of ``patterns`` (tuples of symbols >= 1); patterns
    shorter than ``length`` contribute none. ``scopes``: int32 (P,) scope id per pattern
    (default: all GLOBAL_SCOPE). A window held by several patterns of one scope is one
    entry, attributed to the first of them."""
    if not isinstance(length, int) or isinstance(length, bool) or length < 1:
        raise ValueError(f"length={length!r}: a window has at least 1 symbol")
    n_patterns = len(patterns)
    if scopes is None:
        scopes = np.full(n_patterns, GLOBAL_SCOPE, dtype=np.int32)
    scopes = np.asarray(scopes, dtype=np.int32)
    if scopes.shape != (n_patterns,):
        raise ValueError(f"scopes: one scope id per pattern ({n_patterns}), got shape {scopes.shape}")
    lengths = np.fromiter(map(len, patterns), dtype=np.int64, count=n_patterns)
    offsets = np.zeros(n_patterns + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    symbols = np.fromiter((a for p in patterns for a in p), dtype=np.int32, count=int(offsets[-1]))
    if symbols.shape[0] and symbols.min() < 1:
        raise ValueError("patterns: symbols must be >= 1 (0 is the sentinel of tokens in no pattern)")
    cap = int(symbols.shape[0])
    hashes = np.empty(cap, dtype=np.uint64)
    starts = np.empty(cap, dtype=np.int64)
    owner = np.empty(cap, dtype=np.int32)
    with np.errstate(over="ignore"):
        k = _pattern_window_hashes(symbols, offsets, length, hashes, starts, owner)
    hashes, starts, owner = hashes[:k], starts[:k], owner[:k]
    entry_scope = scopes[owner]
    order = np.lexsort((owner, entry_scope, hashes))
    hashes, starts, owner, entry_scope = hashes[order], starts[order], owner[order], entry_scope[order]
    keep = np.empty(k, dtype=np.bool_)
    _distinct_entries(symbols, length, hashes, starts, entry_scope, keep)
    hashes, starts, owner, entry_scope = hashes[keep], starts[keep], owner[keep], entry_scope[keep]
    bits = max(4, int(2 * max(hashes.shape[0], 1) - 1).bit_length())
    filter_bits = max(6, int(FILTER_BITS_PER_ENTRY * max(hashes.shape[0], 1) - 1).bit_length())
    with np.errstate(over="ignore"):
        table = _build_table(hashes, bits)
        filter_words = _build_filter(hashes, filter_bits)
    return WindowIndex(length, symbols, starts, owner, entry_scope, hashes, table, bits, n_patterns, filter_words,
                       filter_bits)


def window_cover_reference(patterns: list[tuple], pattern_scope: list[int], tokens: list, length: int,
                           doc_scope: int | None = None) -> list[bool]:
    """Plain twin for one document: True for each token inside an occurrence of a window of
    min(``length``, len(pattern)) tokens of a pattern whose scope is global or ``doc_scope``."""
    wanted: set[tuple] = set()
    for p, sc in zip(patterns, pattern_scope):
        if sc != GLOBAL_SCOPE and sc != doc_scope:
            continue
        w = min(length, len(p))
        wanted.update(tuple(p[j:j + w]) for j in range(len(p) - w + 1))
    covered = [False] * len(tokens)
    for w in {len(x) for x in wanted}:
        for i in range(len(tokens) - w + 1):
            if tuple(tokens[i:i + w]) in wanted:
                covered[i:i + w] = [True] * w
    return covered
