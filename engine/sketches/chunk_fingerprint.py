"""Per-document fingerprint for near-duplicate collapse: content-defined chunks in a tiny Bloom filter.

After Jain, Dahlin & Tewari, "Using Bloom Filters to Refine Web Search Results":

1. normalise the text to its tokens joined by one space (``normalize=True``), UTF-8;
2. cut it into content-defined chunks with a gear rolling hash: after each byte
   ``h = ((h << 1) & (2^63 - 1)) + GEAR[byte]``; a chunk ends after byte ``i`` when it is at
   least ``min_chunk`` bytes long and ``h & mask == 0``, or when it reaches ``max_chunk``
   bytes. ``mask`` has ``mask_bits`` ones ending at bit ``window - 1``, so the decision
   depends only on the last ``window`` bytes: an edit moves at most the boundaries within
   ``window`` bytes after it, and later chunks are unchanged (expected chunk length about
   ``min_chunk + 2^mask_bits``);
3. hash each chunk (blake2b, 16 bytes: two little-endian uint64 ``h1``, ``h2``); when a
   document has more than ``max_chunks`` distinct chunks, keep the ``max_chunks`` with the
   smallest ``h1`` (a bottom-s sample, the same rule in every document, so the filter of a
   long document does not saturate);
4. insert each chunk into a Bloom filter of ``num_bits`` bits with ``num_hashes`` hashes
   (enhanced double hashing of ``h1 mod m``, ``h2 mod m`` as in
   :mod:`bloomspan.engine.sketches.bloom_filter`). Bit ``i`` is bit ``i & 7`` of byte ``i >> 3``.

The fingerprint is ``num_bits / 8`` bytes (64 for the default 512 bits); store it base64
encoded in an OpenSearch ``binary`` field (:func:`fingerprint_b64`). Documents are compared
by bitwise AND of their filters (:mod:`bloomspan.ingest.companions.near_duplicates`).

Kernels ``_cdc_kernel`` and ``_bloom_bytes_kernel`` (numba) have plain-Python twins
``_cdc_reference`` and ``_bloom_bytes_reference``.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass

import numpy as np
from numba import njit

from bloomspan.engine.mining.config import ConfigError
from bloomspan.engine.text.tokenizer import tokenize

_LOW63 = np.uint64((1 << 63) - 1)


def _gear_table(seed: int = 0x6A09E667F3BCC908) -> np.ndarray:
    """256 pseudo-random 63-bit values (SplitMix64 sequence), uint64 (256,)."""
    out = []
    x = seed
    for _ in range(256):
        x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        out.append((z ^ (z >> 31)) & ((1 << 63) - 1))
    return np.array(out, dtype=np.uint64)


GEAR = _gear_table()


@dataclass(frozen=True)
class FingerprintConfig:
    """``num_bits``: filter size (multiple of 64, at most 65,536); ``num_hashes``: bits per chunk;
    ``mask_bits``/``window``/``min_chunk``/``max_chunk``: chunking (module docstring);
    ``max_chunks``: most chunks inserted; ``normalize``: chunk the token stream, not raw text."""

    num_bits: int = 512
    num_hashes: int = 2
    mask_bits: int = 4
    window: int = 16
    min_chunk: int = 8
    max_chunk: int = 256
    max_chunks: int = 128
    normalize: bool = True

    def __post_init__(self) -> None:
        def int_in(name: str, lo: int, hi: int, fix: str) -> None:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise ConfigError(name, v, fix)

        int_in("num_bits", 64, 1 << 16, "must be an integer in [64, 65536]")
        if self.num_bits % 64:
            raise ConfigError("num_bits", self.num_bits, "must be a multiple of 64 (512 is the default)")
        int_in("num_hashes", 1, 16, "must be an integer in [1, 16]")
        int_in("window", 2, 63, "must be an integer in [2, 63] (bytes the boundary test looks back)")
        int_in("mask_bits", 1, self.window, f"must be an integer in [1, window={self.window}]")
        int_in("min_chunk", 1, 1 << 20, "must be an integer >= 1")
        int_in("max_chunk", self.min_chunk, 1 << 24, f"must be an integer >= min_chunk={self.min_chunk}")
        int_in("max_chunks", 1, 1 << 20, "must be an integer >= 1")
        if not isinstance(self.normalize, bool):
            raise ConfigError("normalize", self.normalize, "must be True or False")

    @property
    def mask(self) -> int:
        return ((1 << self.mask_bits) - 1) << (self.window - self.mask_bits)

    @property
    def num_bytes(self) -> int:
        return self.num_bits // 8


DEFAULT_CONFIG = FingerprintConfig()


# --------------------------------------------------------------------------- kernels


@njit(cache=True)
def _cdc_kernel(data, gear, mask, min_size, max_size, ends):
    """Chunk ends (exclusive) of ``data`` (uint8 (n,)) into ``ends`` (int64, len >= n); returns the count."""
    n = data.shape[0]
    count = 0
    start = 0
    h = np.uint64(0)
    for i in range(n):
        h = ((h << np.uint64(1)) & _LOW63) + gear[data[i]]
        size = i + 1 - start
        if size >= min_size and ((h & mask) == 0 or size >= max_size):
            ends[count] = i + 1
            count += 1
            start = i + 1
    if start < n:
        ends[count] = n
        count += 1
    return count


def _cdc_reference(data: bytes, gear, mask: int, min_size: int, max_size: int) -> list[int]:
    ends = []
    start = 0
    h = 0
    for i, byte in enumerate(data):
        h = ((h << 1) & ((1 << 63) - 1)) + int(gear[byte])
        size = i + 1 - start
        if size >= min_size and ((h & mask) == 0 or size >= max_size):
            ends.append(i + 1)
            start = i + 1
    if start < len(data):
        ends.append(len(data))
    return ends


@njit(cache=True)
def _bloom_bytes_kernel(a, b, k, m, out):
    """Set the k bits of each chunk in ``out`` (uint8 (m/8,)); a, b int64 (c,) in [0, m)."""
    for j in range(a.shape[0]):
        x = a[j]
        y = b[j]
        for i in range(k):
            out[x >> 3] |= np.uint8(1 << (x & 7))
            x = (x + y) % m
            y = (y + i) % m


def _bloom_bytes_reference(a, b, k: int, m: int) -> bytes:
    bits = bytearray(m // 8)
    for aj, bj in zip(a, b, strict=True):
        x, y = int(aj), int(bj)
        for i in range(k):
            bits[x >> 3] |= 1 << (x & 7)
            x = (x + y) % m
            y = (y + i) % m
    return bytes(bits)


# --------------------------------------------------------------------------- pipeline


def normalized_bytes(text: str, normalize: bool = True) -> bytes:
    """The bytes that are chunked: tokens joined by one space (or the raw text), UTF-8."""
    s = " ".join(tokenize(text)) if normalize else text
    return s.encode("utf-8", "surrogatepass")


def chunk_ends(data: bytes | np.ndarray, config: FingerprintConfig = DEFAULT_CONFIG) -> np.ndarray:
    """Exclusive chunk ends, int64 (c,), of ``data`` (bytes or uint8 (n,)); the last is ``n``."""
    arr = np.frombuffer(data, dtype=np.uint8) if isinstance(data, (bytes, bytearray, memoryview)) else data
    if arr.dtype != np.uint8 or arr.ndim != 1:
        raise ValueError(f"data: expected bytes or a uint8 array of shape (n,), got {arr.dtype} {arr.shape}")
    ends = np.empty(arr.shape[0] + 1, dtype=np.int64)
    c = _cdc_kernel(arr, GEAR, np.uint64(config.mask), config.min_chunk, config.max_chunk, ends)
    return ends[:c].copy()


def chunk_hashes(data: bytes, ends: np.ndarray) -> np.ndarray:
    """uint64 (c, 2): blake2b-128 of each chunk as two little-endian words."""
    out = bytearray()
    start = 0
    for e in ends.tolist():
        out += hashlib.blake2b(data[start:e], digest_size=16).digest()
        start = e
    return np.frombuffer(bytes(out), dtype="<u8").reshape(-1, 2).astype(np.uint64)


def select_chunks(hashes: np.ndarray, max_chunks: int) -> np.ndarray:
    """Distinct chunk hashes, at most ``max_chunks``: those with the smallest ``h1`` (uint64 (s, 2))."""
    if hashes.shape[0] == 0:
        return hashes
    uniq = np.unique(hashes, axis=0)  # sorted by h1, then h2
    return uniq[:max_chunks]


def filter_from_hashes(hashes: np.ndarray, config: FingerprintConfig = DEFAULT_CONFIG) -> bytes:
    """Bloom filter bytes (num_bits / 8) of chunk hashes uint64 (c, 2)."""
    m = np.uint64(config.num_bits)
    a = (hashes[:, 0] % m).astype(np.int64)
    b = (hashes[:, 1] % m).astype(np.int64)
    out = np.zeros(config.num_bytes, dtype=np.uint8)
    _bloom_bytes_kernel(a, b, config.num_hashes, config.num_bits, out)
    return out.tobytes()


def fingerprint(text: str, config: FingerprintConfig = DEFAULT_CONFIG) -> bytes:
    """The document's filter: ``num_bits / 8`` bytes (all zero for a text without tokens)."""
    data = normalized_bytes(text, config.normalize)
    ends = chunk_ends(data, config)
    return filter_from_hashes(select_chunks(chunk_hashes(data, ends), config.max_chunks), config)


def fingerprint_b64(text: str, config: FingerprintConfig = DEFAULT_CONFIG) -> str:
    """:func:`fingerprint` base64-encoded (ASCII) for an OpenSearch ``binary`` field."""
    return base64.b64encode(fingerprint(text, config)).decode("ascii")


def decode_fingerprint(value: bytes | bytearray | memoryview | str) -> bytes:
    """Raw filter bytes from raw bytes or a base64 string (as stored in ``_source``)."""
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as e:
            raise ValueError(f"fingerprint: not valid base64 ({e})") from None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"fingerprint: expected bytes or a base64 str, got {type(value).__name__}")
