"""Incremental forgetful Bloom filter (IFBF): finds frequent elements in fixed memory.

After Martin Jambon's "Forgetful Bloom filters" (``remind.ml``):

* a bit array of fixed length ``m``, at most ``max_set = ceil(r_max * m)`` bits set;
* each element maps to ``K`` bit indices (``bits_per_element``), kept sorted;
* the *sweeper* is a pointer that walks the array in order: whenever a put flips a bit
  from 0 to 1 while ``max_set`` bits are already set, the sweeper advances, clearing the
  first set bit it meets (so the fill ratio stays at ``r_max``);
* ``put`` walks the element's indices in circular order starting from the first index
  ``>= sweeper`` and flips the first ``slice_bits`` unset ones (or as many as remain):
  an element is added slice by slice;
* ``mem`` counts the consecutive set bits of the element in that same circular order,
  and the element is *full* when ``mem == K``: all of its bits are set.

Why the circular order: the sweeper clears an element's indices in exactly that order,
so its set bits form a prefix that the sweeper eats from the front while puts extend it
at the back. An element becomes full only if it is put ``K / slice_bits`` times faster
than the sweeper goes round — i.e. it is frequent in the recent stream. Rare elements
reach full only by aliasing: all their other bits set by other elements.

Index layout (a choice ``remind.ml`` leaves to the caller): the array is cut into K
segments of (nearly) equal length and an element has exactly one index per segment (a
"partitioned" Bloom filter), so its indices are distinct and sorted by construction.
Measured at m = 65,536: with arbitrary sorted indices (K = 32, 8 per put) about 1 % of the
puts of never-seen elements came out full, because puts concentrate set bits just ahead
of the sweeper; with partitioned indices and the defaults K = 64, 8 per put, none of
5 M puts did, while an element put once every 800 puts still became full.

Element hashes are uint64; :func:`element_indices` derives the K indices by enhanced
double hashing from two SplitMix64 mixes of the hash. ``_put_and_check_kernel`` (numba)
and its twin ``_put_and_check_reference`` are compared by the unit tests.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from bloomspan.engine.mining.config import ConfigError

_SWEEP = 0  # state[0]: sweeper position, the next bit to clear
_SET = 1  # state[1]: number of set bits

_P61 = np.uint64((1 << 61) - 1)  # Mersenne prime modulus of the double-hashing sequence
_SM_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_SM_M1 = np.uint64(0xBF58476D1CE4E5B9)
_SM_M2 = np.uint64(0x94D049BB133111EB)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser of ``x + golden gamma``, vectorised: uint64 (n,) -> uint64 (n,)."""
    z = np.atleast_1d(np.asarray(x, dtype=np.uint64)) + _SM_GAMMA  # array ops wrap silently
    z = (z ^ (z >> np.uint64(30))) * _SM_M1
    z = (z ^ (z >> np.uint64(27))) * _SM_M2
    return z ^ (z >> np.uint64(31))


def element_pairs(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)`` int64 (n,) in [0, P), P = 2^61 - 1: double-hashing start and step of uint64 hashes (n,).

    The sequence runs modulo the prime P, not modulo m: were it run modulo m, with m a
    multiple of the segment length ``len``, only ``(a mod len, b mod len)`` would decide the
    indices — ``len^2`` distinct index sets, so unrelated elements would share all their
    bits (a regression test covers this).
    """
    h = np.asarray(hashes, dtype=np.uint64).reshape(-1)
    h1 = splitmix64(h)
    return (h1 % _P61).astype(np.int64), (splitmix64(h1) % _P61).astype(np.int64)


def segment_bounds(bits_per_element: int, num_bits: int) -> np.ndarray:
    """int64 (K + 1,): segment i of the array is ``[bounds[i], bounds[i + 1])``, ``floor(i m / K)``."""
    return (np.arange(bits_per_element + 1, dtype=np.int64) * num_bits) // bits_per_element


def element_indices(hashes: np.ndarray, bits_per_element: int, num_bits: int) -> np.ndarray:
    """Bit indices of each element, one per segment, hence sorted: int64 (n, K) from uint64 hashes (n,).

    Enhanced double hashing from :func:`element_pairs` gives ``v_0..v_{K-1}``
    (``x = a; y = b``, then K times ``v_i = x; x = (x + y) mod P; y = (y + i) mod P``) and
    index ``i`` is ``lo_i + (v_i xor (v_i >> 31)) mod (hi_i - lo_i)`` in segment ``i``
    (:func:`segment_bounds`); the xor-shift breaks the sequence's additive structure, so two
    elements share about Binomial(K, 1/len) indices, as with independent hashes.
    The kernel computes the same per row; nothing exceeds 2^62, so int64 never wraps.
    """
    x, y = element_pairs(hashes)
    p = int(_P61)
    bounds = segment_bounds(bits_per_element, num_bits)
    out = np.empty((x.shape[0], bits_per_element), dtype=np.int64)
    for i in range(bits_per_element):
        out[:, i] = bounds[i] + (x ^ (x >> 31)) % (bounds[i + 1] - bounds[i])
        x = (x + y) % p
        y = (y + i) % p
    return out


@dataclass(frozen=True)
class ForgetfulBloomConfig:
    """``num_bits`` m; ``bits_per_element`` K; ``slice_bits`` bits flipped per put;
    ``max_fill`` r_max in (0, 1): the fill ratio the sweeper holds."""

    num_bits: int = 1 << 20
    bits_per_element: int = 64
    slice_bits: int = 8
    max_fill: float = 0.5

    def __post_init__(self) -> None:
        if isinstance(self.num_bits, bool) or not isinstance(self.num_bits, int) or not 64 <= self.num_bits <= 1 << 40:
            raise ConfigError("num_bits", self.num_bits, "must be an integer in [64, 2^40] (memory = num_bits / 8 bytes)")
        k = self.bits_per_element
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= min(1024, self.num_bits):
            raise ConfigError("bits_per_element", self.bits_per_element, "must be an integer in [1, min(1024, num_bits)]; 64 is typical")
        if isinstance(self.slice_bits, bool) or not isinstance(self.slice_bits, int) or not 1 <= self.slice_bits <= self.bits_per_element:
            raise ConfigError("slice_bits", self.slice_bits, f"must be an integer in [1, bits_per_element={self.bits_per_element}]")
        if isinstance(self.max_fill, bool) or not isinstance(self.max_fill, (int, float)) or not 0.0 < self.max_fill < 1.0:
            raise ConfigError("max_fill", self.max_fill, "must be a number in (0, 1); 0.5 is the reference value")

    @property
    def max_set(self) -> int:
        """Most bits set at any time: ``ceil(max_fill * num_bits)`` (m/2 rounded up for 0.5)."""
        return max(1, math.ceil(self.max_fill * self.num_bits))


# --------------------------------------------------------------------------- kernels


@njit(cache=True)
def _start(idx, sweep):
    """Index into sorted ``idx`` of the first value >= sweep, 0 when there is none."""
    lo = 0
    hi = idx.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if idx[mid] < sweep:
            lo = mid + 1
        else:
            hi = mid
    return 0 if lo == idx.shape[0] else lo


@njit(cache=True)
def _clear_one(words, state, m):
    """Advance the sweeper until it has cleared one set bit."""
    while True:
        pos = state[_SWEEP]
        state[_SWEEP] = (pos + 1) % m
        w = pos >> 6
        bit = np.uint64(1) << np.uint64(pos & 63)
        if (words[w] & bit) != 0:
            words[w] &= ~bit
            return


@njit(cache=True)
def _put_row(words, state, idx, n, m, max_set):
    alen = idx.shape[0]
    start = _start(idx, state[_SWEEP])
    remaining = n
    for t in range(alen):
        if remaining == 0:
            break
        i = idx[(start + t) % alen]
        w = i >> 6
        bit = np.uint64(1) << np.uint64(i & 63)
        if (words[w] & bit) == 0:
            words[w] |= bit
            remaining -= 1
            if state[_SET] >= max_set:
                _clear_one(words, state, m)
            else:
                state[_SET] += 1


@njit(cache=True)
def _mem_row(words, state, idx):
    alen = idx.shape[0]
    start = _start(idx, state[_SWEEP])
    acc = 0
    for t in range(alen):
        i = idx[(start + t) % alen]
        if ((words[i >> 6] >> np.uint64(i & 63)) & np.uint64(1)) == 0:
            break
        acc += 1
    return acc


@njit(cache=True)
def _put_and_check_kernel(words, state, a, b, bounds, p, n, m, max_set, put, mem_out):
    """For each element in order: put one slice (if ``put``), then mem_out[r] = its mem.

    words uint64 (ceil(m/64),); state int64 (2,); a, b int64 (r,) from :func:`element_pairs`;
    bounds int64 (K + 1,) from :func:`segment_bounds`; p = 2^61 - 1; mem_out int64 (r,). The element's K
    indices (sorted by construction) are built per row exactly as in :func:`element_indices`.
    """
    k = bounds.shape[0] - 1
    idx = np.empty(k, dtype=np.int64)
    for r in range(a.shape[0]):
        x = a[r]
        y = b[r]
        for i in range(k):
            idx[i] = bounds[i] + (x ^ (x >> 31)) % (bounds[i + 1] - bounds[i])
            x += y  # x, y < P: one subtraction reduces mod P
            if x >= p:
                x -= p
            y += i
            if y >= p:
                y -= p
        if put:
            _put_row(words, state, idx, n, m, max_set)
        mem_out[r] = _mem_row(words, state, idx)


# --------------------------------------------------------------------------- reference twin


def _put_and_check_reference(words, state, indices, n, m, max_set, put) -> np.ndarray:
    """Plain-Python twin of ``_put_and_check_kernel``; mutates words/state.

    ``indices``: int64 (r, K) sorted rows from :func:`element_indices`; bits as Python ints.
    """
    bits = [(int(words[i >> 6]) >> (i & 63)) & 1 for i in range(m)]
    count = sum(bits)
    if count != state[_SET]:
        raise AssertionError("state[1] does not match the bit array")
    sweep = int(state[_SWEEP])
    mems = np.zeros(indices.shape[0], dtype=np.int64)
    for r, row in enumerate(indices.tolist()):
        if put:
            ahead = [j for j, v in enumerate(row) if v >= sweep]
            start = ahead[0] if ahead else 0
            remaining = n
            for t in range(len(row)):
                if remaining == 0:
                    break
                i = row[(start + t) % len(row)]
                if not bits[i]:
                    bits[i] = 1
                    remaining -= 1
                    if count >= max_set:
                        while True:  # the sweeper clears the next set bit
                            pos, sweep = sweep, (sweep + 1) % m
                            if bits[pos]:
                                bits[pos] = 0
                                break
                    else:
                        count += 1
        ahead = [j for j, v in enumerate(row) if v >= sweep]
        start = ahead[0] if ahead else 0
        acc = 0
        for t in range(len(row)):
            if not bits[row[(start + t) % len(row)]]:
                break
            acc += 1
        mems[r] = acc
    words[:] = 0
    for i, v in enumerate(bits):
        if v:
            words[i >> 6] |= np.uint64(1 << (i & 63))
    state[_SWEEP] = sweep
    state[_SET] = count
    return mems


# --------------------------------------------------------------------------- filter


class IncrementalForgetfulBloom:
    """The IFBF of the module docstring; memory is ``num_bits / 8`` bytes, fixed.

    ``words``: uint64 (ceil(m/64),); ``sweep_pos`` and ``bits_set`` are the sweeper state.
    Elements are given as uint64 hashes (n,) and processed in order.
    """

    def __init__(self, config: ForgetfulBloomConfig | None = None):
        self.config = config or ForgetfulBloomConfig()
        self.words = np.zeros((self.config.num_bits + 63) // 64, dtype=np.uint64)
        self._state = np.zeros(2, dtype=np.int64)
        self._bounds = segment_bounds(self.config.bits_per_element, self.config.num_bits)

    @property
    def sweep_pos(self) -> int:
        return int(self._state[_SWEEP])

    @property
    def bits_set(self) -> int:
        return int(self._state[_SET])

    @property
    def fill_ratio(self) -> float:
        return self.bits_set / self.config.num_bits

    @property
    def nbytes(self) -> int:
        return int(self.words.nbytes)

    def indices(self, hashes: np.ndarray) -> np.ndarray:
        """int64 (n, K) sorted bit indices of uint64 hashes (n,)."""
        return element_indices(hashes, self.config.bits_per_element, self.config.num_bits)

    def _run(self, hashes, put: bool) -> np.ndarray:
        c = self.config
        a, b = element_pairs(hashes)
        mem = np.empty(a.shape[0], dtype=np.int64)
        _put_and_check_kernel(self.words, self._state, a, b, self._bounds, int(_P61), c.slice_bits, c.num_bits, c.max_set, put, mem)
        return mem

    def put_and_check(self, hashes: np.ndarray) -> np.ndarray:
        """Put each element (one slice) in order and report bool (n,): full right after its put."""
        return self._run(hashes, True) == self.config.bits_per_element

    def put(self, hashes: np.ndarray) -> None:
        """Put each element (one slice of ``slice_bits`` bits), in order."""
        self._run(hashes, True)

    def mem(self, hashes: np.ndarray) -> np.ndarray:
        """int64 (n,): consecutive set bits of each element from the sweeper (0..K); no put."""
        return self._run(hashes, False)

    def full(self, hashes: np.ndarray) -> np.ndarray:
        """bool (n,): all K bits of the element are set; no put."""
        return self.mem(hashes) == self.config.bits_per_element

    def clear(self) -> None:
        """Forget everything."""
        self.words[:] = 0
        self._state[:] = 0
