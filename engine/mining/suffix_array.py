"""Suffix array and LCP array of a document corpus, for the exact FHK miner.

The corpus (``tokens`` uint32 (W,), ``doc_offsets`` int64 (D+1,)) becomes one text
``T`` int32 (N,): a sequence of *segments*, each followed by one separator.

* Token ids are renumbered densely, order-preserving, to ``1..V`` (``vocab`` maps
  back: original id = ``vocab[t - 1]``); the separator is ``0``.
* A segment is a maximal run of one document's tokens without a *breaker* (rank 0).
  Without pruning every document is one segment. With pruning (exact, see
  :func:`prune_rare_tokens`) tokens in fewer than sigma documents become breakers, and
  runs shorter than ``min_length`` are left out: no phrase of ``min_length`` tokens
  with df >= sigma can contain a breaker or fit in a shorter run.
* All separators share the value 0 so the alphabet stays ``V + 1`` symbols (a
  unique separator per segment would add one symbol per segment and widen every
  symbol's bytes). They still *never match* each other or any token:
  :func:`kasai_lcp` stops every comparison at a separator, so an LCP never crosses a
  segment boundary. The suffix array itself is a valid sorting of the text's
  suffixes either way; only the LCP values carry the boundary rule, and those are
  what the interval traversal uses.
* The suffix array comes from libdivsufsort (pydivsufsort). It sorts bytes, so each
  symbol is written big-endian in ``width`` bytes (1..4, the fewest that hold V);
  byte suffixes at multiples of ``width`` sort exactly like the symbol suffixes, and
  the others are dropped.

Every numba kernel has a plain Python twin (``*_reference``) that the unit tests
compare it with.
"""
from __future__ import annotations

import logging
from typing import NamedTuple

import numpy as np
from numba import njit

from .word_filter import document_frequency

logger = logging.getLogger(__name__)

SEPARATOR = 0

# Dense renumbering through a lookup table when the largest id is at most this (or
# W / 2): O(W + max id) time, 5 bytes per possible id; above it np.unique (a sort).
_LUT_MAX_ID = 1 << 24


# --------------------------------------------------------------------------- ids
def dense_ids(tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Renumber token ids densely and order-preserving.

    tokens: uint32 (W,).
    Returns (ranks int32 (W,) with values 1..V, vocab uint32 (V,) sorted, where
    ``vocab[rank - 1]`` is the original id).
    """
    if tokens.size == 0:
        return np.zeros(0, np.int32), np.zeros(0, np.uint32)
    max_id = int(tokens.max())
    if max_id <= max(_LUT_MAX_ID, tokens.size // 2):
        present = np.zeros(max_id + 1, dtype=np.bool_)
        present[tokens] = True
        lut = np.cumsum(present, dtype=np.int32)  # rank of an id, 1-based
        vocab = np.flatnonzero(present).astype(np.uint32)
        del present
        ranks = lut[tokens]
        del lut
        return ranks, vocab
    vocab, inverse = np.unique(tokens, return_inverse=True)
    ranks = (inverse.reshape(-1) + 1).astype(np.int32)
    return ranks, vocab.astype(np.uint32)


def token_document_frequency(ranks, doc_offsets, n_symbols):
    """int64 (n_symbols + 1,): number of documents containing each rank (index 0 unused).

    The word filter's kernel (one per-token df kernel for both engines)."""
    return document_frequency(ranks, doc_offsets, n_symbols + 1)


def token_document_frequency_reference(ranks, doc_offsets, n_symbols):
    df = np.zeros(n_symbols + 1, dtype=np.int64)
    for d in range(len(doc_offsets) - 1):
        for r in set(ranks[doc_offsets[d]:doc_offsets[d + 1]].tolist()):
            df[r] += 1
    return df


def prune_rare_tokens(ranks: np.ndarray, vocab: np.ndarray, doc_offsets: np.ndarray, sigma: int):
    """Turn tokens found in fewer than ``sigma`` documents into breakers (rank 0).

    Exact: df(P) <= df(t) for every token t of P. The kept tokens are renumbered
    densely, so the alphabet (and the bytes per symbol in the sort) shrinks too.
    Returns (ranks int32 (W,) in 0..V', vocab uint32 (V',)).
    """
    df = token_document_frequency(ranks, doc_offsets, vocab.size)
    keep = df >= sigma
    keep[0] = False
    remap = np.cumsum(keep, dtype=np.int32)
    remap[~keep] = 0
    return remap[ranks], vocab[keep[1:]]


# --------------------------------------------------------------------------- text
class Text(NamedTuple):
    """The text to index and where its segments come from.

    text: int32 (N,) ranks, each segment followed by SEPARATOR;
    seg_doc: int32 (S,) document of each segment;
    seg_text_start: int64 (S,) text position of each segment's first token;
    seg_corpus_start: int64 (S,) corpus position of the same token.
    """

    text: np.ndarray
    seg_doc: np.ndarray
    seg_text_start: np.ndarray
    seg_corpus_start: np.ndarray


@njit(cache=True)
def _count_segments(ranks, doc_offsets, min_run):
    n_segments = 0
    n_text = 0
    for d in range(doc_offsets.shape[0] - 1):
        run = 0
        for i in range(doc_offsets[d], doc_offsets[d + 1] + 1):
            if i < doc_offsets[d + 1] and ranks[i] != SEPARATOR:
                run += 1
                continue
            if run >= min_run:
                n_segments += 1
                n_text += run + 1
            run = 0
    return n_segments, n_text


@njit(cache=True)
def _fill_segments(ranks, doc_offsets, min_run, text, seg_doc, seg_text_start, seg_corpus_start):
    s = 0
    out = 0
    for d in range(doc_offsets.shape[0] - 1):
        run = 0
        for i in range(doc_offsets[d], doc_offsets[d + 1] + 1):
            if i < doc_offsets[d + 1] and ranks[i] != SEPARATOR:
                run += 1
                continue
            if run >= min_run:
                seg_doc[s] = d
                seg_text_start[s] = out
                seg_corpus_start[s] = i - run
                for j in range(i - run, i):
                    text[out] = ranks[j]
                    out += 1
                text[out] = SEPARATOR
                out += 1
                s += 1
            run = 0


def build_text(ranks: np.ndarray, doc_offsets: np.ndarray, min_run: int) -> Text:
    """Segments = maximal runs of non-breaker ranks inside one document, >= min_run long.

    ranks: int32 (W,) with 0 for breakers; doc_offsets: int64 (D+1,).
    """
    if min_run < 1:
        raise ValueError(f"min_run={min_run}: must be >= 1")
    n_segments, n_text = _count_segments(ranks, doc_offsets, min_run)
    text = np.empty(n_text, dtype=np.int32)
    seg_doc = np.empty(n_segments, dtype=np.int32)
    seg_text_start = np.empty(n_segments, dtype=np.int64)
    seg_corpus_start = np.empty(n_segments, dtype=np.int64)
    _fill_segments(ranks, doc_offsets, min_run, text, seg_doc, seg_text_start, seg_corpus_start)
    return Text(text, seg_doc, seg_text_start, seg_corpus_start)


def build_text_reference(ranks: np.ndarray, doc_offsets: np.ndarray, min_run: int) -> Text:
    text, seg_doc, seg_text_start, seg_corpus_start = [], [], [], []
    for d in range(len(doc_offsets) - 1):
        lo, hi = int(doc_offsets[d]), int(doc_offsets[d + 1])
        start = lo
        for i in range(lo, hi + 1):
            if i == hi or ranks[i] == SEPARATOR:
                if i - start >= min_run:
                    seg_doc.append(d)
                    seg_text_start.append(len(text))
                    seg_corpus_start.append(start)
                    text.extend(int(r) for r in ranks[start:i])
                    text.append(SEPARATOR)
                start = i + 1
    return Text(
        np.array(text, dtype=np.int32),
        np.array(seg_doc, dtype=np.int32),
        np.array(seg_text_start, dtype=np.int64),
        np.array(seg_corpus_start, dtype=np.int64),
    )


def symbol_width(max_symbol: int) -> int:
    """Bytes per symbol for the byte-level sort (1, 2, 3 or 4)."""
    return max(1, (int(max_symbol).bit_length() + 7) // 8)


@njit(cache=True)
def encode_big_endian(text, width):
    """uint8 (N * width,): each symbol of ``text`` big-endian in ``width`` bytes."""
    n = text.shape[0]
    out = np.empty(n * width, dtype=np.uint8)
    for i in range(n):
        v = text[i]
        for b in range(width - 1, -1, -1):
            out[i * width + b] = v & 0xFF
            v >>= 8
    return out


def encode_big_endian_reference(text: np.ndarray, width: int) -> np.ndarray:
    shifts = np.arange(width - 1, -1, -1, dtype=np.int64) * 8
    return ((text.astype(np.int64)[:, None] >> shifts[None, :]) & 0xFF).astype(np.uint8).reshape(-1)


@njit(cache=True)
def compact_byte_sa(byte_sa, width, out):
    """Symbol suffix array from the byte suffix array.

    byte_sa: int32/int64 (N * width,); out: int32/int64 (N,), filled with the
    entries of ``byte_sa`` divisible by ``width``, divided by it, in order.
    Returns the number written (N for a well-formed input).
    """
    j = 0
    for i in range(byte_sa.shape[0]):
        p = byte_sa[i]
        if p % width == 0:
            out[j] = p // width
            j += 1
    return j


def compact_byte_sa_reference(byte_sa: np.ndarray, width: int) -> np.ndarray:
    return byte_sa[byte_sa % width == 0] // width


def suffix_array(text: np.ndarray) -> tuple[np.ndarray, int, int]:
    """Suffix array of ``text`` int32 (N,) with symbols >= 0.

    Returns (sa (N,) int32, or int64 when N >= 2**31; width in bytes per symbol;
    peak bytes of the arrays alive during construction).
    """
    import pydivsufsort  # C library; imported here so `--help` paths stay light

    n = int(text.shape[0])
    if n == 0:
        return np.zeros(0, np.int32), 1, 0
    width = symbol_width(int(text.max()))
    if width == 1:
        encoded = text.astype(np.uint8)
    else:
        encoded = encode_big_endian(text, width)
    byte_sa = pydivsufsort.divsufsort(encoded)
    peak = encoded.nbytes + byte_sa.nbytes
    del encoded
    if width == 1:
        sa = np.asarray(byte_sa)
    else:
        sa = np.empty(n, dtype=np.int32 if n < 2**31 else np.int64)
        written = compact_byte_sa(np.asarray(byte_sa), width, sa)
        if written != n:
            raise RuntimeError(f"byte suffix array kept {written} of {n} symbol suffixes")
        peak += sa.nbytes
    del byte_sa
    if sa.dtype != np.int32 and n < 2**31:
        sa = sa.astype(np.int32)
    return sa, width, peak


def suffix_array_reference(text: np.ndarray) -> np.ndarray:
    """Plain sort of all suffixes (tiny inputs only)."""
    seq = [int(x) for x in text]
    return np.array(sorted(range(len(seq)), key=lambda i: seq[i:]), dtype=np.int64)


# --------------------------------------------------------------------------- LCP
@njit(cache=True)
def kasai_lcp(text, sa, seg_doc):
    """LCP array (Kasai et al.) that never matches across a separator.

    text: int32 (N,), separators are 0; sa: int32/int64 (N,); seg_doc: int32 (S,)
    document of each segment (segment s ends with the s-th separator).
    Returns (lcp int32 (N,), docs int32 (N,)):
      lcp[0] = 0, lcp[i] = number of leading symbols shared by suffixes sa[i-1] and
      sa[i], counting only symbols before the first separator;
      docs[i] = document of suffix sa[i], or -1 when it starts on a separator.
    The "stop at a separator" rule keeps Kasai's invariant (lcp of suffix p+1 >= lcp
    of suffix p minus one), so the run is still O(N).
    """
    n = text.shape[0]
    rank = np.empty(n, dtype=sa.dtype)
    for i in range(n):
        rank[sa[i]] = i
    lcp = np.zeros(n, dtype=np.int32)
    docs = np.empty(n, dtype=np.int32)
    h = 0
    seg = 0
    for p in range(n):
        r = rank[p]
        if text[p] == SEPARATOR:
            docs[r] = -1
            seg += 1
            h = 0
            if r > 0:
                lcp[r] = 0
            continue
        docs[r] = seg_doc[seg]
        if r == 0:
            h = 0
            continue
        q = sa[r - 1]
        while p + h < n and q + h < n and text[p + h] == text[q + h] and text[p + h] != SEPARATOR:
            h += 1
        lcp[r] = h
        if h > 0:
            h -= 1
    return lcp, docs


def kasai_lcp_reference(text: np.ndarray, sa: np.ndarray, seg_doc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Direct comparison of every adjacent pair of suffixes (O(N * L))."""
    n = len(text)
    seq = [int(x) for x in text]
    doc_of = []
    seg = 0
    for x in seq:
        doc_of.append(-1 if x == SEPARATOR else int(seg_doc[seg]))
        if x == SEPARATOR:
            seg += 1
    lcp = np.zeros(n, dtype=np.int32)
    for i in range(1, n):
        a, b = int(sa[i - 1]), int(sa[i])
        h = 0
        while a + h < n and b + h < n and seq[a + h] == seq[b + h] != SEPARATOR:
            h += 1
        lcp[i] = h
    docs = np.array([doc_of[int(p)] for p in sa], dtype=np.int32)
    return lcp, docs
