"""Window coverage: every corpus token inside an occurrence of a frequent window.

The article's coverage mask (Part 4, "The coverage mask") marks the occurrences of the *maximal* phrases. A template
followed by a variable part ("Home › <category>") is often maximal only in its longer,
frequent extensions, so its other occurrences — next to a rarer category — are never marked,
although the shared part is just as much boilerplate. Window coverage marks them: a token is
covered when it lies inside an occurrence of any *frequent window*, a run of exactly
``min_length`` tokens that occurs in at least ``sigma`` documents.

Exactness. The frequent windows are exactly the ``min_length``-token substrings of the
mined maximal phrases: each such substring is frequent (df never grows when a phrase is
extended), and each frequent window extends, one frequent token at a time, to a maximal
phrase that contains it. So the window set is computed from the phrase list, with no second
pass over the corpus statistics, and a token is window-covered iff some frequent run of at
least ``min_length`` tokens covers it. The article's mask is always a subset.

Windows are found with a 64-bit polynomial hash, and every hash hit is verified token by
token against the window it names, so a hash collision can never mark a token.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from .phrases import Phrase

_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd: multiplication by it is invertible mod 2**64


def phrase_windows(phrases: Sequence[Phrase], length: int) -> np.ndarray:
    """Distinct windows of ``length`` tokens of ``phrases``: uint32 array (n, length), sorted."""
    rows = {tuple(p.tokens[j:j + length]) for p in phrases for j in range(len(p.tokens) - length + 1)}
    if not rows:
        return np.zeros((0, length), dtype=np.uint32)
    return np.array(sorted(rows), dtype=np.uint32).reshape(-1, length)


@njit(cache=True)
def _window_hash(tokens, start, length):
    h = np.uint64(0)
    for k in range(length):
        h = h * _BASE + np.uint64(tokens[start + k]) + np.uint64(1)
    return h


@njit(cache=True)
def _hash_rows(windows):
    n, length = windows.shape
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        out[i] = _window_hash(windows[i], 0, length)
    return out


@njit(cache=True)
def _cover_kernel(tokens, doc_offsets, windows, sorted_hashes, order):
    """Mark [i, i + L) for every corpus window equal to one of ``windows``.

    sorted_hashes: uint64 (n,) window hashes ascending; order: int64 (n,) their rows.
    Rolling hash per document: h(i+1) = (h(i) - (t_i + 1) * B**(L-1)) * B + t_{i+L} + 1.
    """
    n_tokens = tokens.shape[0]
    length = windows.shape[1]
    diff = np.zeros(n_tokens + 1, dtype=np.int32)
    top = np.uint64(1)
    for _ in range(length - 1):
        top = top * _BASE
    for d in range(doc_offsets.shape[0] - 1):
        lo, hi = doc_offsets[d], doc_offsets[d + 1]
        if hi - lo < length:
            continue
        h = _window_hash(tokens, lo, length)
        i = lo
        while True:
            j = np.searchsorted(sorted_hashes, h)
            while j < sorted_hashes.shape[0] and sorted_hashes[j] == h:
                row = order[j]
                same = True
                for k in range(length):
                    if tokens[i + k] != windows[row, k]:
                        same = False
                        break
                if same:
                    diff[i] += 1
                    diff[i + length] -= 1
                    break
                j += 1
            if i + length >= hi:
                break
            h = (h - (np.uint64(tokens[i]) + np.uint64(1)) * top) * _BASE + np.uint64(tokens[i + length]) + np.uint64(1)
            i += 1
    covered = np.empty(n_tokens, dtype=np.bool_)
    run = 0
    for i in range(n_tokens):
        run += diff[i]
        covered[i] = run > 0
    return covered


def window_coverage(tokens: np.ndarray, doc_offsets: np.ndarray, phrases: Sequence[Phrase],
                    min_length: int) -> np.ndarray:
    """bool (W,): tokens inside an occurrence of any ``min_length``-window of ``phrases``.

    tokens: uint32 (W,); doc_offsets: int64 (D+1,); phrases: the mined maximal phrases.
    """
    if min_length < 1:
        raise ValueError(f"min_length={min_length}: must be >= 1")
    tokens = np.asarray(tokens)
    doc_offsets = np.asarray(doc_offsets, dtype=np.int64)
    windows = phrase_windows(phrases, min_length)
    if windows.shape[0] == 0 or tokens.shape[0] == 0:
        return np.zeros(tokens.shape[0], dtype=bool)
    with np.errstate(over="ignore"):  # the hash wraps mod 2**64 by design (matters without JIT)
        hashes = _hash_rows(windows)
        order = np.argsort(hashes, kind="stable").astype(np.int64)
        return _cover_kernel(tokens, doc_offsets, windows, hashes[order], order)


def window_coverage_reference(tokens: np.ndarray, doc_offsets: np.ndarray, phrases: Sequence[Phrase],
                              min_length: int) -> np.ndarray:
    """Plain-Python twin of :func:`window_coverage`."""
    wanted = {tuple(p.tokens[j:j + min_length]) for p in phrases for j in range(len(p.tokens) - min_length + 1)}
    toks = [int(t) for t in tokens]
    covered = np.zeros(len(toks), dtype=bool)
    for d in range(len(doc_offsets) - 1):
        lo, hi = int(doc_offsets[d]), int(doc_offsets[d + 1])
        for i in range(lo, hi - min_length + 1):
            if tuple(toks[i:i + min_length]) in wanted:
                covered[i:i + min_length] = True
    return covered
