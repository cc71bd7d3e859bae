"""A classic Bloom filter over digests: bit array in uint64 words, double hashing.

Sizing follows the "bytes per item" budget ``B`` used by exact paragraph dedup:

* false-positive rate ``p = exp(-8 B (ln 2)^2)`` (:func:`bloom_rate`);
* bits ``m = ceil(-N ln p / (ln 2)^2) = ceil(8 B N)`` for ``N`` items (:func:`bloom_bits`);
* hashes ``k = max(1, round(8 B ln 2))`` — the optimal ``(m/N) ln 2`` (:func:`bloom_hashes`).

Items are digests (``bytes`` of at least 16 bytes, e.g. SHA-256). The first 8 bytes,
little-endian, give ``h1`` and the next 8 ``h2``; the ``k`` bit indices are the enhanced
double hashing sequence (Kirsch & Mitzenmacher, Dillinger & Manolios)::

    x = h1 mod m;  y = h2 mod m
    for i in 0..k-1:  index_i = x;  x = (x + y) mod m;  y = (y + i) mod m

All index arithmetic stays below ``2 m <= 2^63`` in int64, so nothing wraps. Bit ``i`` lives
in word ``i >> 6`` at position ``i & 63``; bits ``>= m`` of the last word are never set.

Each kernel (``_add_kernel``, ``_query_kernel``, ``_screen_kernel``) is a numba function with a
plain-Python twin (``*_reference``) that the unit tests compare it with.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from bloomspan.engine.mining.config import ConfigError

LN2 = math.log(2.0)
MAX_BITS = 1 << 62  # index arithmetic x + y < 2m must fit in int64
DIGEST_MIN_BYTES = 16


# --------------------------------------------------------------------------- sizing


def bloom_rate(bytes_per_item: float) -> float:
    """False-positive rate ``p = exp(-8 B (ln 2)^2)`` of an optimally hashed filter with ``B`` bytes per item."""
    _check_bytes_per_item(bytes_per_item)
    return math.exp(-8.0 * bytes_per_item * LN2 * LN2)


def bloom_bits(n_items: int, bytes_per_item: float) -> int:
    """Bits ``m = ceil(-N ln p / (ln 2)^2)`` for ``N = max(n_items, 1)`` items at ``p = bloom_rate(B)``.

    ``-ln p / (ln 2)^2`` is exactly ``8 B``; it is computed as such (``ln p`` underflows for
    large ``B``) with a tolerance of 1e-9 so that ``8 * 10 * 5 = 400.0000000001`` stays 400.
    """
    _check_bytes_per_item(bytes_per_item)
    if not isinstance(n_items, (int, np.integer)) or n_items < 0:
        raise ConfigError("n_items", n_items, "must be a non-negative integer")
    n = max(int(n_items), 1)
    m = max(1, math.ceil(8.0 * bytes_per_item * n - 1e-9))
    if m > MAX_BITS:
        raise ConfigError("bloom_bytes_per_item", bytes_per_item, f"gives {m} bits for {n} items; at most 2^62 are supported")
    return m


def bloom_hashes(bytes_per_item: float) -> int:
    """Optimal number of hashes ``k = max(1, round(8 B ln 2))``."""
    _check_bytes_per_item(bytes_per_item)
    return max(1, int(round(8.0 * bytes_per_item * LN2)))


def expected_fp_rate(num_bits: int, num_hashes: int, n_items: int) -> float:
    """False-positive rate ``(1 - exp(-k n / m))^k`` after ``n`` distinct insertions (integer ``k``)."""
    return (1.0 - math.exp(-num_hashes * n_items / num_bits)) ** num_hashes


def _check_bytes_per_item(b: float) -> None:
    if isinstance(b, bool) or not isinstance(b, (int, float)) or not math.isfinite(b) or b <= 0:
        raise ConfigError("bloom_bytes_per_item", b, "must be a finite number > 0 (10 gives p ~ 2e-17, 1 gives p ~ 0.02)")


# --------------------------------------------------------------------------- hashing


def digest_array(digests) -> np.ndarray:
    """Digests as a C-contiguous uint8 array of shape (n, L), L >= 16.

    Accepts a uint8 ndarray (n, L) or a sequence of equal-length ``bytes``.
    """
    if isinstance(digests, np.ndarray):
        arr = digests
        if arr.dtype != np.uint8 or arr.ndim != 2:
            raise ValueError(f"digests: expected a uint8 array of shape (n, L), got {arr.dtype} {arr.shape}")
    else:
        seq = list(digests)
        if not seq:
            return np.empty((0, DIGEST_MIN_BYTES), dtype=np.uint8)
        width = len(seq[0])
        if any(len(d) != width for d in seq):
            raise ValueError("digests: all digests must have the same length")
        arr = np.frombuffer(b"".join(bytes(d) for d in seq), dtype=np.uint8).reshape(len(seq), width)
    if arr.shape[1] < DIGEST_MIN_BYTES:
        raise ValueError(f"digests: need at least {DIGEST_MIN_BYTES} bytes per digest, got {arr.shape[1]}")
    return np.ascontiguousarray(arr)


def hash_pair(digests: np.ndarray, num_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """``(h1 mod m, h2 mod m)`` as int64 arrays of shape (n,), from bytes 0-7 and 8-15 (little-endian)."""
    arr = digest_array(digests)
    head = np.ascontiguousarray(arr[:, :16]).view("<u8")  # (n, 2) uint64
    m = np.uint64(num_bits)
    return (head[:, 0] % m).astype(np.int64), (head[:, 1] % m).astype(np.int64)


def bit_indices(a: int, b: int, num_hashes: int, num_bits: int) -> list[int]:
    """The ``k`` bit indices of one item from its reduced pair ``(a, b)`` (reference, Python ints)."""
    x, y = int(a), int(b)
    out = []
    for i in range(num_hashes):
        out.append(x)
        x = (x + y) % num_bits
        y = (y + i) % num_bits
    return out


# --------------------------------------------------------------------------- kernels


@njit(cache=True)
def _add_kernel(words, a, b, k, m):
    """Set the ``k`` bits of each item. words: uint64 (ceil(m/64),); a, b: int64 (n,)."""
    for j in range(a.shape[0]):
        x = a[j]
        y = b[j]
        for i in range(k):
            words[x >> 6] |= np.uint64(1) << np.uint64(x & 63)
            x = (x + y) % m
            y = (y + i) % m


@njit(cache=True)
def _query_kernel(words, a, b, k, m, out):
    """out[j] = all k bits of item j are set. out: bool (n,)."""
    for j in range(a.shape[0]):
        x = a[j]
        y = b[j]
        hit = True
        for i in range(k):
            if ((words[x >> 6] >> np.uint64(x & 63)) & np.uint64(1)) == 0:
                hit = False
                break
            x = (x + y) % m
            y = (y + i) % m
        out[j] = hit


@njit(cache=True)
def _screen_kernel(words, a, b, k, m, out):
    """In order: out[j] = item j was already present; absent items are inserted. out: bool (n,)."""
    for j in range(a.shape[0]):
        x = a[j]
        y = b[j]
        hit = True
        for i in range(k):
            w = x >> 6
            bit = np.uint64(1) << np.uint64(x & 63)
            if (words[w] & bit) == 0:
                hit = False
                words[w] |= bit
            x = (x + y) % m
            y = (y + i) % m
        out[j] = hit


def _add_reference(words: np.ndarray, a, b, k: int, m: int) -> None:
    for aj, bj in zip(a, b, strict=True):
        for idx in bit_indices(aj, bj, k, m):
            words[idx // 64] |= np.uint64(1 << (idx % 64))


def _query_reference(words: np.ndarray, a, b, k: int, m: int) -> np.ndarray:
    out = np.zeros(len(a), dtype=bool)
    for j, (aj, bj) in enumerate(zip(a, b, strict=True)):
        out[j] = all((int(words[idx // 64]) >> (idx % 64)) & 1 for idx in bit_indices(aj, bj, k, m))
    return out


def _screen_reference(words: np.ndarray, a, b, k: int, m: int) -> np.ndarray:
    out = np.zeros(len(a), dtype=bool)
    for j, (aj, bj) in enumerate(zip(a, b, strict=True)):
        present = _query_reference(words, [aj], [bj], k, m)[0]
        out[j] = present
        if not present:
            _add_reference(words, [aj], [bj], k, m)
    return out


# --------------------------------------------------------------------------- filter


class BloomFilter:
    """Bloom filter of ``num_bits`` bits and ``num_hashes`` hashes over digests.

    ``words``: uint64 array of shape (ceil(num_bits / 64),), bit ``i`` at word ``i >> 6``,
    position ``i & 63``. Methods take digests as accepted by :func:`digest_array`.
    """

    def __init__(self, num_bits: int, num_hashes: int):
        if isinstance(num_bits, bool) or not isinstance(num_bits, (int, np.integer)) or not 1 <= num_bits <= MAX_BITS:
            raise ConfigError("num_bits", num_bits, "must be an integer in [1, 2^62]")
        if isinstance(num_hashes, bool) or not isinstance(num_hashes, (int, np.integer)) or num_hashes < 1:
            raise ConfigError("num_hashes", num_hashes, "must be an integer >= 1")
        self.num_bits = int(num_bits)
        self.num_hashes = int(num_hashes)
        self.words = np.zeros((self.num_bits + 63) // 64, dtype=np.uint64)

    @classmethod
    def for_items(cls, n_items: int, bytes_per_item: float) -> BloomFilter:
        """A filter sized for ``n_items`` at ``bytes_per_item`` bytes each (module docstring)."""
        return cls(bloom_bits(n_items, bytes_per_item), bloom_hashes(bytes_per_item))

    def _pair(self, digests) -> tuple[np.ndarray, np.ndarray]:
        return hash_pair(digest_array(digests), self.num_bits)

    def add(self, digests) -> None:
        """Insert every digest."""
        a, b = self._pair(digests)
        _add_kernel(self.words, a, b, self.num_hashes, self.num_bits)

    def contains(self, digests) -> np.ndarray:
        """bool (n,): True where the digest may have been inserted (never False for an inserted one)."""
        a, b = self._pair(digests)
        out = np.empty(a.shape[0], dtype=bool)
        _query_kernel(self.words, a, b, self.num_hashes, self.num_bits, out)
        return out

    def screen(self, digests) -> np.ndarray:
        """Query-then-insert in order: bool (n,), True where the digest was "maybe seen" before.

        An item repeated inside the batch is flagged at its second occurrence.
        """
        a, b = self._pair(digests)
        out = np.empty(a.shape[0], dtype=bool)
        _screen_kernel(self.words, a, b, self.num_hashes, self.num_bits, out)
        return out

    def __contains__(self, digest: bytes) -> bool:
        return bool(self.contains([digest])[0])

    def bit_count(self) -> int:
        """Number of set bits."""
        return int(np.unpackbits(self.words.view(np.uint8)).sum())

    @property
    def fill_ratio(self) -> float:
        return self.bit_count() / self.num_bits

    @property
    def nbytes(self) -> int:
        return int(self.words.nbytes)

    def __repr__(self) -> str:
        return f"BloomFilter(num_bits={self.num_bits}, num_hashes={self.num_hashes})"


def sizes_for(n_items: int, bytes_per_item: float) -> tuple[int, int, float]:
    """``(m, k, p)`` for ``n_items`` at ``bytes_per_item``: bits, hashes, target false-positive rate."""
    return bloom_bits(n_items, bytes_per_item), bloom_hashes(bytes_per_item), bloom_rate(bytes_per_item)


__all__ = [
    "BloomFilter",
    "bloom_rate",
    "bloom_bits",
    "bloom_hashes",
    "expected_fp_rate",
    "digest_array",
    "hash_pair",
    "bit_indices",
    "sizes_for",
]
