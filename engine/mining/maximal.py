"""Maximality: keep the candidates that are not inside another candidate.

Growth hands over candidates in discovery order (seeds by psi). Every candidate is a
frequent phrase of length >= min_length, and every maximal phrase is a candidate (see
:mod:`bloomspan.engine.mining.grow`). A maximal phrase is inside no frequent phrase, and a
non-maximal frequent phrase of length >= min_length is inside a maximal one, so

    maximal phrases = candidates not a proper substring of another candidate,

whatever the order the candidates arrive in. The article decides this incrementally with an
inverted index token -> kept phrases (Part 4, "Maximality check"); here it is one batch
kernel over all candidates at once (:func:`inside_another`), since growth is finished when
the check starts:

1. Every run of ``key_length`` tokens (a *key*; every candidate is at least that long) of
   every candidate is hashed: entries (hash, candidate, offset), sorted by hash.
2. If ``A`` lies inside ``B``, each key of ``A`` is a key of ``B`` at the same shift. So
   only the entries of ``A``'s *rarest* key (fewest entries with its hash) are tried: an
   entry (``B``, ``o``) for ``A``'s key at offset ``oa`` places ``A`` at ``o - oa`` in
   ``B``, and the tokens are compared there. Hashes only pick the places to compare;
   every answer is a token-by-token comparison, so collisions cost time, never a result.

The miner uses ``key_length = min_length``: on a dense vocabulary every candidate contains
the few most common tokens, so single-token keys have long lists, while min_length-grams
stay short.
"""
from __future__ import annotations

import numpy as np
from numba import njit

_BASE = np.uint64(0x100000001B3)  # odd: a polynomial hash of the key mod 2**64


@njit(cache=True)
def _key_hashes(flat, starts, key_length):
    """Hash, candidate and offset of every key of every candidate, sorted by hash."""
    k = key_length
    n_cands = starts.shape[0] - 1
    total = 0
    for i in range(n_cands):
        total += starts[i + 1] - starts[i] - k + 1
    hashes = np.empty(total, dtype=np.uint64)
    owner = np.empty(total, dtype=np.int64)
    offset = np.empty(total, dtype=np.int64)
    top = np.uint64(1)  # BASE**(k-1)
    for _ in range(k - 1):
        top = top * _BASE
    e = 0
    for i in range(n_cands):
        s = starts[i]
        h = np.uint64(0)
        for j in range(s, s + k - 1):
            h = h * _BASE + np.uint64(flat[j])
        for o in range(starts[i + 1] - s - k + 1):
            h = h * _BASE + np.uint64(flat[s + o + k - 1])
            hashes[e] = h
            owner[e] = i
            offset[e] = o
            e += 1
            h = h - np.uint64(flat[s + o]) * top
    order = np.argsort(hashes)
    return hashes[order], owner[order], offset[order]


@njit(cache=True)
def _same_tokens(flat, a, b, n):
    for j in range(n):
        if flat[a + j] != flat[b + j]:
            return False
    return True


@njit(cache=True)
def _inside_kernel(flat, starts, key_length):
    hashes, owner, offset = _key_hashes(flat, starts, key_length)
    n_cands = starts.shape[0] - 1
    inside = np.zeros(n_cands, dtype=np.bool_)
    # First entry of each candidate's keys' hash run: hash -> [lo, hi) in the sorted entries.
    run_lo = np.empty(hashes.shape[0], dtype=np.int64)
    run_hi = np.empty(hashes.shape[0], dtype=np.int64)
    lo = 0
    for e in range(1, hashes.shape[0] + 1):
        if e == hashes.shape[0] or hashes[e] != hashes[lo]:
            for j in range(lo, e):
                run_lo[j] = lo
                run_hi[j] = e
            lo = e
    # Each candidate's rarest key: the entry of its own with the shortest hash run.
    best = np.full(n_cands, -1, dtype=np.int64)
    for e in range(hashes.shape[0]):
        a = owner[e]
        if best[a] < 0 or run_hi[e] - run_lo[e] < run_hi[best[a]] - run_lo[best[a]]:
            best[a] = e
    for a in range(n_cands):
        e = best[a]
        len_a = starts[a + 1] - starts[a]
        oa = offset[e]
        for j in range(run_lo[e], run_hi[e]):
            b = owner[j]
            len_b = starts[b + 1] - starts[b]
            at = offset[j] - oa  # where A would start in B
            if len_b > len_a and at >= 0 and at + len_a <= len_b \
                    and _same_tokens(flat, starts[a], starts[b] + at, len_a):
                inside[a] = True
                break
    return inside


def _check(flat, starts, key_length):
    if key_length < 1:
        raise ValueError(f"key_length={key_length}: must be >= 1")
    lengths = np.diff(starts)
    if lengths.size and lengths.min() < max(2, key_length):
        raise ValueError(f"candidates have length >= max(2, key_length={key_length}); "
                         f"got one of length {int(lengths.min())}")


def inside_another(flat: np.ndarray, starts: np.ndarray, key_length: int = 1) -> np.ndarray:
    """bool (K,): candidate ``i`` is a proper substring of another candidate.

    flat: uint32 (T,) the candidates' tokens, one after the other; starts: int64 (K+1,)
    candidate ``i`` is ``flat[starts[i]:starts[i + 1]]``. Candidates must be distinct and at
    least ``max(2, key_length)`` tokens long.
    """
    flat = np.ascontiguousarray(flat, dtype=np.uint32)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    _check(flat, starts, key_length)
    if starts.shape[0] <= 1:
        return np.zeros(0, dtype=bool)
    with np.errstate(over="ignore"):  # uint64 wrap-around is the hash; JIT-less runs warn
        return _inside_kernel(flat, starts, np.int64(key_length))


def candidate_tokens(tokens: np.ndarray, first: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The candidates' tokens one after the other, for :func:`inside_another`.

    tokens: uint32 (W,); first: int64 (K,) a start position of each candidate; lengths:
    int64 (K,). Returns ``(flat, starts)``: uint32 (sum of lengths,), int64 (K+1,)."""
    starts = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    index = np.repeat(np.asarray(first, dtype=np.int64) - starts[:-1], lengths) + np.arange(starts[-1])
    return np.asarray(tokens[index], dtype=np.uint32), starts


def select_maximal(candidates: list[tuple[int, ...]], key_length: int = 1) -> tuple[list[int], int]:
    """Indices of the candidates inside no other candidate, in input order, and how many
    were inside another. Candidates must be distinct and at least ``max(2, key_length)``
    tokens long."""
    flat = np.fromiter((t for c in candidates for t in c), dtype=np.uint32)
    starts = np.concatenate(([0], np.cumsum([len(c) for c in candidates], dtype=np.int64)))
    inside = inside_another(flat, starts, key_length)
    return np.flatnonzero(~inside).tolist(), int(inside.sum())


def select_maximal_reference(candidates: list[tuple[int, ...]]) -> list[int]:
    """Readable twin of :func:`select_maximal`: compare every pair, O(K^2)."""

    def inside(a, b):
        return len(a) < len(b) and any(b[i:i + len(a)] == a for i in range(len(b) - len(a) + 1))

    return [i for i, a in enumerate(candidates) if not any(inside(a, b) for b in candidates)]
