"""Find every ``length``-token window of known phrases in documents: a hash index over windows.

Every ``min_length`` window of a mined maximal phrase is itself frequent (a window occurs in
every document its phrase occurs in), so a run of such windows in a new document is known
boilerplate by the criterion that mined the phrase, even where the phrase's own neighbours
differ (a cookie banner followed by a button the corpus never showed). This module finds
those windows; :class:`~bloomspan.ingest.match.phrase_matcher.PhraseMatcher` (``match="windows"``) merges
them into spans.

Index (:func:`build_window_index`): the n distinct windows of the patterns (Z symbols in
all), numbered in the order of their first occurrence and each stored as a position in the
patterns' concatenated symbols (no copy of the window); the m entries, one per distinct
``(window, scope)`` pair, attributed to the first pattern of that scope holding the window;
an open-addressing table (T slots, a power of two >= 2n) from a window's 64-bit polynomial
hash to its number; and for each window its *successor*, the window that follows its first
occurrence in its pattern. Memory: 4 bytes per pattern symbol, about 40 bytes per distinct
window, 4 per entry and 1 per pattern; an Aho–Corasick trie over the windows would hold
``length`` states per window instead. Phrases matched whole that have exactly ``length``
symbols can be held too (``whole``): each occurrence is then reported on its own.

Scan (:func:`window_runs`, numba): one rolling hash per document that restarts after a
symbol 0 (a token in no pattern, which no window holds). Inside boilerplate, consecutive
positions hold consecutive windows of one pattern: where the previous position's window has
a successor whose last symbol is the next token, that successor is the window (it equals the
previous window shifted by one token), with no hash lookup and no comparison. Elsewhere a bit
filter (16 bits per window, small enough for the cache) turns most absent windows away, and a
table probe compares the window token by token with every window of the same hash, so a hash
collision can never report a window. Consecutive windows of one pattern are reported as one
run (:meth:`WindowIndex.find_runs`); scope filtering is the caller's. Plain twin of the scan:
:func:`window_runs_reference`; of what the runs cover: :func:`window_cover_reference`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .scopes import GLOBAL_SCOPE

_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd: multiplication by it is invertible mod 2**64
_MIX = np.uint64(0xBF58476D1CE4E5B9)  # Fibonacci-style mixing of a hash into a table slot
_FILTER_MIX = np.uint64(0x94D049BB133111EB)  # another one for the bit filter, so its bits are independent
FILTER_BITS_PER_ENTRY = 16  # bit filter size: about 1/16 of the windows not in the index get a table probe
MAX_SYMBOLS = 2**31 - 1  # window numbers are int32


@njit(cache=True, nogil=True)
def _pattern_window_hashes(symbols, pattern_offsets, length, out_hash, out_start, out_pattern):
    """Hash every window of ``length`` of each pattern; returns the number of windows written.

    symbols int32 (Z,); pattern_offsets int64 (P+1,); out_* (capacity >= Z): hash uint64,
    start int64 (into symbols), pattern int32. Windows come in the order of their start.
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
def _first_occurrences(symbols, length, order, hashes, starts, first):
    """For each window occurrence, the first occurrence (lowest start) of an equal window.

    ``order`` int64 (k,) sorts the occurrences by (hash, start); hashes uint64, starts int64
    (k,). Writes ``first`` int64 (k,), an occurrence index. Equal windows have equal hashes,
    so an occurrence is compared, token by token, with the distinct windows of its hash only.
    """
    k = order.shape[0]
    distinct = np.empty(k, dtype=np.int64)  # first occurrences seen so far under the current hash
    n_distinct = 0
    for r in range(k):
        i = order[r]
        if r > 0 and hashes[order[r - 1]] != hashes[i]:
            n_distinct = 0
        first[i] = i
        for g in range(n_distinct):
            j = distinct[g]
            same = True
            for t in range(length):
                if symbols[starts[j] + t] != symbols[starts[i] + t]:
                    same = False
                    break
            if same:
                first[i] = j
                break
        if first[i] == i:
            distinct[n_distinct] = i
            n_distinct += 1


@njit(cache=True, nogil=True)
def _build_table(hashes, bits):
    """Open-addressing table (2**bits slots, int32, -1 = empty) of every window's number."""
    size = np.int64(1) << bits
    mask = size - 1
    table = np.full(size, -1, dtype=np.int32)
    shift = np.uint64(64 - bits)
    for w in range(hashes.shape[0]):
        slot = np.int64((hashes[w] * _MIX) >> shift)
        while table[slot] != -1:
            slot = (slot + 1) & mask
        table[slot] = w
    return table


@njit(cache=True, nogil=True)
def _build_filter(hashes, bits):
    """A bit set of 2**bits bits, one bit per window hash (other bits of it than the table's)."""
    words = np.zeros((np.int64(1) << bits) >> 6, dtype=np.uint64)
    shift = np.uint64(64 - bits)
    for e in range(hashes.shape[0]):
        b = np.int64((hashes[e] * _FILTER_MIX) >> shift)
        words[b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    return words


@njit(cache=True, nogil=True)
def window_runs(sym, doc_offsets, length, symbols, window_start, window_hash, window_next, entry_ptr,
                entry_pattern, pattern_whole, table, bits, filter_words, filter_bits, out_start, out_end, out_pattern):
    """Runs of window occurrences; returns the number of runs.

    sym int32 (W,) document symbols (0 = in no pattern), doc_offsets int64 (D+1,); the
    index arrays as in :class:`WindowIndex`. A run is a maximal sequence of occurrences of
    one pattern's windows at consecutive starts inside one document (each occurrence of a
    ``pattern_whole`` one is a run of its own): it covers ``[out_start[k], out_end[k])``
    (int64, end exclusive) and is reported for ``out_pattern[k]`` (int32). A window is found through the previous position's
    successor or through the table, where it is compared token by token (a collision
    reports nothing). Runs come ordered by start; a return value above the capacity
    (out_start.shape[0]) means the caller re-runs with larger buffers.
    """
    cap = out_start.shape[0]
    mask = (np.int64(1) << bits) - 1
    shift = np.uint64(64 - bits)
    filter_shift = np.uint64(64 - filter_bits)
    top = np.uint64(1)
    for _ in range(length - 1):
        top = top * _BASE
    open_run = np.full(pattern_whole.shape[0], -1, dtype=np.int64)  # pattern -> its last run
    run_last = np.empty(max(cap, 1), dtype=np.int64)  # start of the last window of each run
    count = 0
    for d in range(doc_offsets.shape[0] - 1):
        doc_start = doc_offsets[d]
        h = np.uint64(0)
        run = 0  # symbols since the last 0 (capped at length: h covers the last `run` symbols)
        prev = -1  # the window starting one position earlier, -1 if none
        for i in range(doc_start, doc_offsets[d + 1]):
            a = sym[i]
            if a <= 0:
                h = np.uint64(0)
                run = 0
                prev = -1
                continue
            if run == length:
                h = h - (np.uint64(sym[i - length]) + np.uint64(1)) * top
            else:
                run += 1
            h = h * _BASE + np.uint64(a) + np.uint64(1)
            if run < length:
                continue
            first = i + 1 - length
            w = -1
            if prev >= 0 and window_next[prev] >= 0 and symbols[window_start[prev] + length] == a:
                w = window_next[prev]
            else:
                b = np.int64((h * _FILTER_MIX) >> filter_shift)
                if (filter_words[b >> 6] >> np.uint64(b & 63)) & np.uint64(1) != 0:
                    slot = np.int64((h * _MIX) >> shift)
                    while table[slot] != -1:
                        c = table[slot]
                        if window_hash[c] == h:
                            s = window_start[c]
                            same = True
                            for t in range(length):
                                if sym[first + t] != symbols[s + t]:
                                    same = False
                                    break
                            if same:
                                w = c
                                break
                        slot = (slot + 1) & mask
            prev = w
            if w < 0:
                continue
            for e in range(entry_ptr[w], entry_ptr[w + 1]):
                q = entry_pattern[e]
                k = open_run[q]
                if k >= 0 and k < cap and run_last[k] == first - 1 and first - 1 >= doc_start and not pattern_whole[q]:
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
    return count


@dataclass(frozen=True)
class WindowIndex:
    """The distinct windows of a pattern set and their ``(window, scope)`` entries.

    n distinct windows, m entries, T = 2**bits table slots, F = 2**filter_bits filter bits.

    length:        symbols per window.
    symbols:       int32 (Z,) the patterns' symbols, concatenated.
    window_start:  int64 (n,) where window w's first occurrence starts in ``symbols``;
                   windows are numbered by that start.
    window_hash:   uint64 (n,) the window's rolling hash.
    window_next:   int32 (n,) the window starting one symbol later in the pattern of the
                   first occurrence (whose last symbol is ``symbols[window_start[w] + length]``),
                   -1 where that pattern ends.
    entry_ptr:     int64 (n+1,) window w's entries are entry_ptr[w]:entry_ptr[w+1].
    entry_pattern: int32 (m,) the first pattern (lowest index) holding the window in the
                   entry's scope, one entry per scope that holds the window; and one entry
                   per whole pattern that spells it.
    pattern_whole: bool (P,) patterns of exactly ``length`` symbols matched as whole phrases:
                   every occurrence is reported on its own, as Aho–Corasick reports it, never
                   merged with an overlapping one or attributed to another pattern.
    table:         int32 (T,) window numbers by hash, -1 for an empty slot.
    filter_words:  uint64 (F/64,) bit filter over the window hashes.
    """

    length: int
    symbols: np.ndarray
    window_start: np.ndarray
    window_hash: np.ndarray
    window_next: np.ndarray
    entry_ptr: np.ndarray
    entry_pattern: np.ndarray
    table: np.ndarray
    bits: int
    pattern_whole: np.ndarray
    filter_words: np.ndarray
    filter_bits: int

    @property
    def n_windows(self) -> int:
        return int(self.window_start.shape[0])

    @property
    def n_patterns(self) -> int:
        return int(self.pattern_whole.shape[0])

    @property
    def n_entries(self) -> int:
        return int(self.entry_pattern.shape[0])

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in (self.symbols, self.window_start, self.window_hash, self.window_next,
                                           self.entry_ptr, self.entry_pattern, self.pattern_whole, self.table,
                                           self.filter_words))

    def find_runs(self, sym: np.ndarray, doc_offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Runs of overlapping window occurrences of one pattern, as ``(start, end, pattern)``
        (int64, int64, int32; end exclusive), sorted by (start, end, pattern).

        A run is a maximal sequence of one pattern's windows at consecutive starts inside one
        document of ``doc_offsets`` (int64 (D+1,)), so its tokens are exactly the tokens those
        windows cover. A window is reported for the first pattern of each scope that holds it
        (the pattern's scope decides where it applies: callers filter by it).
        """
        sym = np.ascontiguousarray(sym, dtype=np.int32)
        doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
        # A run holds at least one window; at 81 % of the tokens covered (100 k phrases over the
        # web crawl) runs are 6.5 % of the tokens, so 1/8 spares the second scan of an overflow.
        cap = max(16, sym.shape[0] // 8)
        while True:
            r_start = np.empty(cap, dtype=np.int64)
            r_end = np.empty(cap, dtype=np.int64)
            r_pattern = np.empty(cap, dtype=np.int32)
            with np.errstate(over="ignore"):  # the hash wraps mod 2**64 by design (matters without JIT)
                m = window_runs(sym, doc_offsets, self.length, self.symbols, self.window_start, self.window_hash,
                                self.window_next, self.entry_ptr, self.entry_pattern, self.pattern_whole, self.table,
                                self.bits, self.filter_words, self.filter_bits, r_start, r_end, r_pattern)
            if m <= cap:
                break
            cap = int(m)
        r_start, r_end, r_pattern = r_start[:m], r_end[:m], r_pattern[:m]
        order = np.lexsort((r_pattern, r_end, r_start))
        return r_start[order], r_end[order], r_pattern[order]


def build_window_index(patterns: list[tuple[int, ...]], length: int, scopes: np.ndarray | None = None,
                       whole: np.ndarray | None = None) -> WindowIndex:
    """Index of every ``length``-window of ``patterns`` (tuples of symbols >= 1); patterns
    shorter than ``length`` contribute none. ``scopes``: int32 (P,) scope id per pattern
    (default: all GLOBAL_SCOPE). A window held by several patterns of one scope is one
    entry, attributed to the first of them. ``whole``: bool (P,) patterns of ``length``
    symbols to report like whole phrases (see :class:`WindowIndex`; default none)."""
    if not isinstance(length, int) or isinstance(length, bool) or length < 1:
        raise ValueError(f"length={length!r}: a window has at least 1 symbol")
    n_patterns = len(patterns)
    if scopes is None:
        scopes = np.full(n_patterns, GLOBAL_SCOPE, dtype=np.int32)
    scopes = np.asarray(scopes, dtype=np.int32)
    if scopes.shape != (n_patterns,):
        raise ValueError(f"scopes: one scope id per pattern ({n_patterns}), got shape {scopes.shape}")
    lengths = np.fromiter(map(len, patterns), dtype=np.int64, count=n_patterns)
    whole = np.zeros(n_patterns, dtype=np.bool_) if whole is None else np.asarray(whole, dtype=np.bool_)
    if whole.shape != (n_patterns,):
        raise ValueError(f"whole: one flag per pattern ({n_patterns}), got shape {whole.shape}")
    if (lengths[whole] != length).any():
        raise ValueError(f"whole: a pattern matched whole by windows of {length} has exactly {length} symbols")
    offsets = np.zeros(n_patterns + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] > MAX_SYMBOLS:
        raise ValueError(f"patterns: {int(offsets[-1]):,} symbols in all, at most {MAX_SYMBOLS:,} fit one index")
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
    # Distinct windows, numbered by first occurrence (occurrences are in start order).
    first = np.empty(k, dtype=np.int64)
    _first_occurrences(symbols, length, np.lexsort((starts, hashes)), hashes, starts, first)
    is_first = first == np.arange(k)
    number = np.cumsum(is_first) - 1  # of a first occurrence: its window's number
    window_of = number[first].astype(np.int32)  # int32 (k,) window of each occurrence
    first_at = np.flatnonzero(is_first)
    after = np.minimum(first_at + 1, max(k - 1, 0))
    has_next = (first_at + 1 < k) & (owner[after] == owner[first_at])  # the next occurrence is in the same pattern
    window_next = np.where(has_next, window_of[after], -1).astype(np.int32)
    # Entries: the first pattern of each (window, scope), and each whole pattern (a key of its own).
    entry_key = np.where(whole[owner], np.int64(MAX_SYMBOLS) + owner, scopes[owner].astype(np.int64))
    order = np.lexsort((owner, entry_key, window_of))
    w_sorted, key_sorted = window_of[order], entry_key[order]
    keep = np.ones(k, dtype=bool)
    keep[1:] = (w_sorted[1:] != w_sorted[:-1]) | (key_sorted[1:] != key_sorted[:-1])
    entry_pattern = owner[order][keep]
    n_windows = int(first_at.shape[0])
    entry_ptr = np.zeros(n_windows + 1, dtype=np.int64)
    np.cumsum(np.bincount(w_sorted[keep], minlength=n_windows), out=entry_ptr[1:])
    window_hash = hashes[first_at]
    bits = max(4, int(2 * max(n_windows, 1) - 1).bit_length())
    filter_bits = max(6, int(FILTER_BITS_PER_ENTRY * max(n_windows, 1) - 1).bit_length())
    with np.errstate(over="ignore"):
        table = _build_table(window_hash, bits)
        filter_words = _build_filter(window_hash, filter_bits)
    return WindowIndex(length, symbols, starts[first_at], window_hash, window_next, entry_ptr, entry_pattern, table,
                       bits, whole, filter_words, filter_bits)


def window_runs_reference(patterns: list[tuple[int, ...]], length: int, scopes: list[int] | None,
                          docs: list[list[int]], whole: list[bool] | None = None) -> list[tuple[int, int, int]]:
    """Plain twin of :meth:`WindowIndex.find_runs` for ``docs`` (lists of symbols, positions
    counted across their concatenation): every ``(start, end, pattern)`` run, sorted."""
    scopes = [GLOBAL_SCOPE] * len(patterns) if scopes is None else list(scopes)
    whole = [False] * len(patterns) if whole is None else list(whole)
    first: dict[tuple, int] = {}  # (window, scope) -> the first pattern holding it there
    holders: dict[tuple, list[int]] = {}
    for p, (pattern, scope) in enumerate(zip(patterns, scopes)):
        if whole[p]:
            holders.setdefault(tuple(pattern), []).append(p)
            continue
        for j in range(len(pattern) - length + 1):
            first.setdefault((tuple(pattern[j:j + length]), scope), p)
    for (window, _), p in first.items():
        holders.setdefault(window, []).append(p)
    runs, base = [], 0
    for doc in docs:
        last: dict[int, list[int]] = {}  # pattern -> its latest run [start, end, pattern]
        for i in range(len(doc) - length + 1):
            for p in holders.get(tuple(doc[i:i + length]), ()):
                run = last.get(p)
                if run is not None and run[1] == base + i + length - 1 and not whole[p]:  # last window at i - 1
                    run[1] += 1
                else:
                    last[p] = [base + i, base + i + length, p]
                    runs.append(last[p])
        base += len(doc)
    return sorted(tuple(r) for r in runs)


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
