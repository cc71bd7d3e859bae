"""Maximality: keep the candidates that are not inside another candidate.

Growth hands over candidates in discovery order (seeds by psi). Every candidate is a
frequent phrase of length >= min_length, and every maximal phrase is a candidate (see
:mod:`bloomspan.engine.mining.grow`). A maximal phrase is inside no frequent phrase, and a
non-maximal frequent phrase of length >= min_length is inside a maximal one, so

    maximal phrases = candidates not a proper substring of another candidate,

whatever the order the candidates arrive in. The index decides this incrementally, as the
article does (Part 4, "Maximality check"):

(A) Is the new phrase inside an already kept one? An inverted index key -> kept phrases
    containing it. The article's keys are single tokens; here a key is any run of
    ``key_length`` tokens (1 = the article's index). A super-phrase contains every key of
    the new phrase, so only the list of its *rarest* key (shortest list) is compared; an
    empty list answers "no" at once. Candidates all have length >= min_length, so the
    miner uses ``key_length = min_length``: on a dense vocabulary every kept phrase
    contains the few most common tokens and token lists grow with the answer (quadratic),
    while lists of min_length-grams stay short.
(B) Does it absorb kept phrases? A kept phrase inside the new one starts at one of its
    positions, so a second index, first key -> kept phrases, is probed once per position
    (the article does not say how it finds them). Absorbed phrases leave both indexes.

Substring tests compare the phrases' uint32 byte strings (``bytes.find``, aligned hits only).
"""
from __future__ import annotations

import numpy as np


def _blob(tokens) -> bytes:
    return np.asarray(tokens, dtype="<u4").tobytes()


def _contains(big: bytes, small: bytes) -> bool:
    """True if ``small`` occurs in ``big`` at a 4-byte aligned offset."""
    i = big.find(small)
    while i != -1:
        if i % 4 == 0:
            return True
        i = big.find(small, i + 1)
    return False


class MaximalPhraseIndex:
    """Kept phrases with the two indexes above. Keys are the caller's candidate ids.

    key_length: tokens per index key; every offered phrase must be at least that long.
    """

    def __init__(self, key_length: int = 1) -> None:
        if key_length < 1:
            raise ValueError(f"key_length={key_length}: must be >= 1")
        self.key_length = key_length
        self._tokens: dict[int, tuple[int, ...]] = {}
        self._blobs: dict[int, bytes] = {}
        self._by_key: dict[tuple[int, ...], set[int]] = {}
        self._by_head: dict[tuple[int, ...], set[int]] = {}
        self.n_rejected = 0  # (A): inside a kept phrase
        self.n_absorbed = 0  # (B): kept earlier, removed by a longer phrase

    def __len__(self) -> int:
        return len(self._tokens)

    def keys(self) -> list[int]:
        """Ids of the kept phrases, in the order they were offered."""
        return list(self._tokens)

    def _keys_of(self, tokens: tuple[int, ...]) -> set[tuple[int, ...]]:
        k = self.key_length
        return {tokens[i:i + k] for i in range(len(tokens) - k + 1)}

    def _inside_kept(self, tokens: tuple[int, ...], blob: bytes) -> bool:
        rarest = None
        for key in self._keys_of(tokens):
            ids = self._by_key.get(key)
            if not ids:
                return False
            if rarest is None or len(ids) < len(rarest):
                rarest = ids
        n = len(tokens)
        return any(len(self._tokens[k]) > n and _contains(self._blobs[k], blob) for k in rarest)

    def _remove(self, pid: int) -> None:
        tokens = self._tokens.pop(pid)
        del self._blobs[pid]
        for key in self._keys_of(tokens):
            ids = self._by_key[key]
            ids.discard(pid)
            if not ids:
                del self._by_key[key]
        head = tokens[:self.key_length]
        self._by_head[head].discard(pid)
        if not self._by_head[head]:
            del self._by_head[head]

    def offer(self, pid: int, tokens: tuple[int, ...]) -> bool:
        """Add candidate ``pid`` unless a kept phrase contains it; drop what it contains.

        tokens: the phrase, length >= max(2, key_length). Returns True if it is kept (for now).
        """
        k = self.key_length
        if len(tokens) < max(2, k):
            raise ValueError(f"tokens={tokens!r}: phrases have length >= max(2, key_length={k})")
        if pid in self._tokens:
            raise ValueError(f"pid={pid}: offered twice")
        blob = _blob(tokens)
        if self._inside_kept(tokens, blob):
            self.n_rejected += 1
            return False
        n = len(tokens)
        for i in range(n - k + 1):
            for other in list(self._by_head.get(tokens[i:i + k], ())):
                m = len(self._tokens[other])
                if m < n and i + m <= n and tokens[i:i + m] == self._tokens[other]:
                    self._remove(other)
                    self.n_absorbed += 1
        self._tokens[pid] = tokens
        self._blobs[pid] = blob
        for key in self._keys_of(tokens):
            self._by_key.setdefault(key, set()).add(pid)
        self._by_head.setdefault(tokens[:k], set()).add(pid)
        return True


def select_maximal(candidates: list[tuple[int, ...]], key_length: int = 1) -> tuple[list[int], int, int]:
    """Indices of the candidates inside no other candidate, in input order.

    Returns ``(kept, n_rejected, n_absorbed)``. Candidates must be distinct and at least
    ``max(2, key_length)`` tokens long.
    """
    index = MaximalPhraseIndex(key_length)
    for i, tokens in enumerate(candidates):
        index.offer(i, tokens)
    return sorted(index.keys()), index.n_rejected, index.n_absorbed


def select_maximal_reference(candidates: list[tuple[int, ...]]) -> list[int]:
    """Readable twin of :func:`select_maximal`: compare every pair, O(K^2)."""

    def inside(a, b):
        return len(a) < len(b) and any(b[i:i + len(a)] == a for i in range(len(b) - len(a) + 1))

    return [i for i, a in enumerate(candidates) if not any(inside(a, b) for b in candidates)]
