"""Word filter: exact document frequency of every token id, and what the miner keeps of it.

A bigram (or any phrase) containing a token that occurs in fewer than ``sigma`` documents
cannot occur in ``sigma`` documents either (anti-monotonicity), so only *frequent words*
(df >= sigma) can appear inside a frequent phrase. The miner keeps two views of that set:

* ``frequent_bitmap``: bit ``t`` set iff ``df[t] >= sigma``, V/8 bytes, small enough to stay
  in cache while the counting filter tests every position of the corpus;
* ``frequent_word_ranks``: dense ranks of the frequent words (ranks keep the id order, so
  the lexicographic order of phrases is unchanged), every rare word mapped to the
  sentinel ``n_frequent``. Seeds and growth index their scratch arrays by rank
  (``n_frequent`` entries instead of one per vocabulary entry). Different rare words share
  the sentinel, so a sentinel is never "the same word" as another: it ends a branch as
  next token and counts as a distinct left neighbour.

The corpus itself is never rewritten (a remapped copy would cost a pass and 4 bytes per
token).
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _document_frequency_kernel(tokens, doc_offsets, state):
    # Row t of state (V, 2) int32 holds (df, last document counted + 1) of token t: one
    # cache line per access; int32 halves the footprint (documents < 2**31 - 1).
    n_docs = doc_offsets.shape[0] - 1
    for d in range(n_docs):
        d32 = np.int32(d + 1)
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            # Branch-free: a mispredicted branch per rare token would serialise the cache
            # misses that rare tokens cause; unconditional stores let them overlap.
            t = tokens[p]
            state[t, 0] += state[t, 1] != d32
            state[t, 1] = d32


def document_frequency(tokens: np.ndarray, doc_offsets: np.ndarray, vocab_size: int | None = None) -> np.ndarray:
    """Exact number of distinct documents containing each token id.

    tokens:      uint32 (W,) token ids.
    doc_offsets: int64 (D+1,) document boundaries.
    vocab_size:  length of the result; default ``tokens.max() + 1`` (0 for an empty corpus).
    Returns int64 (vocab_size,).
    """
    if vocab_size is None:
        vocab_size = int(tokens.max()) + 1 if tokens.size else 0
    state = np.zeros((vocab_size, 2), dtype=np.int32)  # numpy: huge pages when large
    _document_frequency_kernel(tokens, doc_offsets, state)
    return state[:, 0].astype(np.int64)


def document_frequency_reference(tokens: np.ndarray, doc_offsets: np.ndarray,
                                 vocab_size: int | None = None) -> np.ndarray:
    """Readable twin of :func:`document_frequency`: one ``np.unique`` per document."""
    if vocab_size is None:
        vocab_size = int(tokens.max()) + 1 if tokens.size else 0
    df = np.zeros(vocab_size, dtype=np.int64)
    for d in range(len(doc_offsets) - 1):
        df[np.unique(tokens[doc_offsets[d]:doc_offsets[d + 1]])] += 1
    return df


def frequent_word_ranks(df: np.ndarray, sigma: int) -> tuple[np.ndarray, int]:
    """Rank of every frequent word, the sentinel for every rare one.

    df: int64 (V,). Returns ``(rank_of, n_frequent)``: ``rank_of`` uint32 (V,) with
    ``rank_of[t]`` = number of frequent ids below ``t`` if ``df[t] >= sigma``, else
    ``n_frequent``.
    """
    frequent = df >= sigma
    n_frequent = int(frequent.sum())
    rank_of = np.full(df.shape[0], n_frequent, dtype=np.uint32)
    rank_of[frequent] = np.arange(n_frequent, dtype=np.uint32)
    return rank_of, n_frequent


def frequent_bitmap(df: np.ndarray, sigma: int) -> np.ndarray:
    """uint8 (V // 8 + 1,): bit ``t % 8`` of byte ``t // 8`` set iff ``df[t] >= sigma``."""
    bits = np.packbits(df >= sigma, bitorder="little")
    return np.concatenate([bits, np.zeros(1, dtype=np.uint8)])


def all_frequent_bitmap(vocab_size: int) -> np.ndarray:
    """The bitmap of a vocabulary where every word counts as frequent (no word filter)."""
    return np.full(vocab_size // 8 + 1, 0xFF, dtype=np.uint8)


def is_frequent(bits: np.ndarray, t: int) -> bool:
    """Bit ``t`` of a :func:`frequent_bitmap` (the kernels inline the same test)."""
    return bool((int(bits[t >> 3]) >> (t & 7)) & 1)
