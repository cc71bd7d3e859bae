"""Roaring bitmaps of a mining result: which documents contain each phrase, and the coverage mask.

Documents containing a phrase
-----------------------------
The engines return every phrase with the start positions of its occurrences
(``Phrase.starts``); its documents are theirs
(:func:`bloomspan.engine.mining.phrases.documents_of`), so a phrase bitmap costs no pass
over the corpus (:func:`bloomspan.sidecar.publish.publication.phrase_documents_for`).

Encoding
--------
Bitmaps are pyroaring ``BitMap`` (32-bit members), ``run_optimize``-d, serialized in the
portable Roaring format with every container in its canonical form
(:func:`bloomspan.sidecar.publish.roaring_format.canonical_serialization`: the same members
give the same bytes however the bitmap was built, by one process, by Dask shards or by an
incremental run) and base64-encoded for OpenSearch ``binary`` fields. Members are canonical
document numbers (:mod:`bloomspan.sidecar.run.snapshot`) or canonical token positions.
"""
from __future__ import annotations

import base64
from array import array

import numpy as np
from pyroaring import BitMap

from .roaring_format import canonical_serialization

BLOCK_TOKENS = 1 << 24  # mask positions turned into bitmap members at a time (bounds the buffer)
MAX_MEMBER = (1 << 32) - 1


def encode_bitmap(bm: BitMap) -> str:
    """Base64 of the canonical portable Roaring serialization of ``bm``'s members: every
    bitmap bloomspan publishes is encoded here. ``run_optimize`` (in place, members unchanged)
    lets the C library do the heavy container conversions first."""
    bm.run_optimize()
    return base64.b64encode(canonical_serialization(bm.serialize())).decode("ascii")


def decode_bitmap(data: str) -> BitMap:
    """Inverse of :func:`encode_bitmap`."""
    return BitMap.deserialize(base64.b64decode(data))


def bitmap_from_array(values: np.ndarray) -> BitMap:
    """BitMap of uint32-representable ``values`` (any int dtype, any order)."""
    values = np.asarray(values)
    if values.size and (values.min() < 0 or values.max() > MAX_MEMBER):
        raise ValueError("bitmap members must lie in [0, 2**32)")
    bm = BitMap()
    if values.size:
        buf = array("I")
        buf.frombytes(np.ascontiguousarray(values, dtype="<u4").tobytes())
        bm.update(buf)
    return bm


def coverage_bitmaps(coverage: np.ndarray, chunk_tokens: int | None = None) -> list[BitMap]:
    """The covered positions of a bool (W,) mask as bitmaps.

    With ``chunk_tokens`` None: one bitmap of absolute positions (W must be < 2**32).
    Otherwise chunk k holds positions ``k*chunk_tokens <= pos < (k+1)*chunk_tokens`` minus
    ``k*chunk_tokens`` (always 32-bit), for masks of any size.
    """
    coverage = np.asarray(coverage, dtype=bool)
    n = coverage.shape[0]
    if chunk_tokens is None:
        if n > MAX_MEMBER + 1:
            raise ValueError(f"{n} tokens do not fit one 32-bit bitmap; give chunk_tokens")
        chunk_tokens = max(n, 1)
    out = []
    for base in range(0, max(n, 1), chunk_tokens):
        bm = BitMap()
        stop = min(base + chunk_tokens, n)
        for a in range(base, stop, BLOCK_TOKENS):  # bounded buffers: 4 bytes per covered token
            b = min(a + BLOCK_TOKENS, stop)
            positions = np.flatnonzero(coverage[a:b]).astype(np.int64) + (a - base)
            if positions.size:
                buf = array("I")
                buf.frombytes(positions.astype("<u4").tobytes())
                bm.update(buf)
        out.append(bm)
    return out


def coverage_from_bitmaps(bitmaps: list[BitMap], n_tokens: int, chunk_tokens: int | None = None) -> np.ndarray:
    """Inverse of :func:`coverage_bitmaps`: bool (n_tokens,)."""
    out = np.zeros(n_tokens, dtype=bool)
    step = chunk_tokens if chunk_tokens is not None else max(n_tokens, 1)
    for k, bm in enumerate(bitmaps):
        members = np.frombuffer(bm.to_array(), dtype=np.uint32).astype(np.int64)
        out[members + k * step] = True
    return out
