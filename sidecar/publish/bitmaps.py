"""Roaring bitmaps of a mining result: which documents contain each phrase, and the coverage mask.

Documents containing a phrase
-----------------------------
The engines return phrases with df and occurrence counts, not their positions. The set of
documents of every phrase is recomputed in one pass over the corpus with the Aho–Corasick
scan of :mod:`bloomspan.ingest.matcher` (symbols = token id + 1), a block of documents at
a time so memory stays bounded. Each phrase's document set must have exactly ``df``
members and its match count must equal ``occurrences`` — a check of the engine and of the
scan against each other; a mismatch raises.

Encoding
--------
Bitmaps are pyroaring ``BitMap`` (32-bit members), ``run_optimize``-d, serialized in the
portable Roaring format and base64-encoded for OpenSearch ``binary`` fields. Members are
canonical document numbers (:mod:`bloomspan.sidecar.run.snapshot`) or canonical token positions.
"""
from __future__ import annotations

import base64
from array import array

import numpy as np
from pyroaring import BitMap

BLOCK_TOKENS = 1 << 24  # tokens per scan block (bounds the match buffers)
MAX_MEMBER = (1 << 32) - 1


def encode_bitmap(bm: BitMap) -> str:
    """Base64 of the portable Roaring serialization (after ``run_optimize``)."""
    bm.run_optimize()
    return base64.b64encode(bm.serialize()).decode("ascii")


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


def _blocks(doc_offsets: np.ndarray, block_tokens: int):
    """(d0, d1) document ranges of about ``block_tokens`` tokens (at least one document)."""
    n_docs = doc_offsets.shape[0] - 1
    d0 = 0
    while d0 < n_docs:
        limit = doc_offsets[d0] + block_tokens
        d1 = int(np.searchsorted(doc_offsets, limit, side="right")) - 1
        d1 = min(max(d1, d0 + 1), n_docs)
        yield d0, d1
        d0 = d1


def phrase_documents(tokens: np.ndarray, doc_offsets: np.ndarray, phrases: list[tuple[int, ...]],
                     block_tokens: int = BLOCK_TOKENS) -> tuple[list[np.ndarray], np.ndarray]:
    """Documents containing each phrase, and its number of occurrences.

    tokens: uint32 (W,); doc_offsets: int64 (D+1,); phrases: P tuples of token ids.
    Returns ``(docs, occurrences)``: ``docs[p]`` int64 ascending document numbers,
    ``occurrences`` int64 (P,) = number of start positions of phrase p (overlaps counted).
    """
    from bloomspan.ingest.matcher import build_automaton, scan_symbols

    n_phrases = len(phrases)
    occurrences = np.zeros(n_phrases, dtype=np.int64)
    parts: list[list[np.ndarray]] = [[] for _ in range(n_phrases)]
    if n_phrases == 0:
        return [np.zeros(0, dtype=np.int64) for _ in range(n_phrases)], occurrences
    automaton = build_automaton([tuple(int(t) + 1 for t in p) for p in phrases])
    doc_offsets = np.asarray(doc_offsets, dtype=np.int64)
    for d0, d1 in _blocks(doc_offsets, block_tokens):
        a, b = int(doc_offsets[d0]), int(doc_offsets[d1])
        sym = np.asarray(tokens[a:b], dtype=np.int64) + 1
        local = doc_offsets[d0:d1 + 1] - a
        start, _end, idx = scan_symbols(automaton, sym.astype(np.int32), local)
        if start.size == 0:
            continue
        occurrences += np.bincount(idx, minlength=n_phrases)
        doc = np.searchsorted(local, start, side="right") - 1 + d0
        pair = np.unique(idx.astype(np.int64) * (doc_offsets.shape[0]) + doc)
        p_of = pair // doc_offsets.shape[0]
        d_of = pair % doc_offsets.shape[0]
        bounds = np.searchsorted(p_of, np.arange(n_phrases + 1))
        for p in np.flatnonzero(np.diff(bounds)):
            parts[p].append(d_of[bounds[p]:bounds[p + 1]])
    docs = [np.concatenate(ps) if ps else np.zeros(0, dtype=np.int64) for ps in parts]
    return docs, occurrences


def phrase_documents_reference(tokens, doc_offsets, phrases) -> tuple[list[np.ndarray], np.ndarray]:
    """Plain twin of :func:`phrase_documents`: every start position of every phrase, naively."""
    toks = [int(t) for t in np.asarray(tokens)]
    off = [int(o) for o in np.asarray(doc_offsets)]
    docs, occ = [], []
    for p in phrases:
        p = list(p)
        found, count = [], 0
        for d in range(len(off) - 1):
            doc = toks[off[d]:off[d + 1]]
            hits = sum(1 for i in range(len(doc) - len(p) + 1) if doc[i:i + len(p)] == p)
            count += hits
            if hits:
                found.append(d)
        docs.append(np.asarray(found, dtype=np.int64))
        occ.append(count)
    return docs, np.asarray(occ, dtype=np.int64)


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
