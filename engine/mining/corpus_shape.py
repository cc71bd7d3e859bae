"""Corpus shape: the figures ``--engine auto`` chooses an engine by.

The article (Part 5) characterises a corpus by c/n, the phrases of an LZ78 parse per token:
about 1 when nothing repeats (Synthetic 1), about 0.27-0.31 for natural text and our web
crawl, far lower for densely nested repeats (Synthetic 2), the regime where
BloomSpan's growth revisits the same occurrences branch after branch and a suffix array
wins. c/n falls slowly as the stream grows, so it is measured on a sample of fixed size
(2**16 tokens: the web crawl 0.45, Synthetic 2 0.10, Synthetic 1 1.0; 2**20 tokens give
0.34 / 0.05 / 1.0 at 40 times the cost):
``SAMPLE_WINDOWS`` evenly spaced runs of tokens adding up to ``SAMPLE_TOKENS`` (all of a
smaller corpus), so the figure of a corpus does not depend on its size or on which site
its first documents come from.

The LZ78 parse is the one of :mod:`bloomspan.corpora.lz78` (its test checks the
two agree): read tokens into the current phrase while the extension is a known phrase;
an unknown extension becomes a new phrase and the next phrase starts empty; a last,
incomplete phrase counts as one. The trie is an open-addressing table keyed by
``node << 32 | token``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

SAMPLE_TOKENS = 1 << 16
SAMPLE_WINDOWS = 16

_EMPTY = np.uint64(2**64 - 1)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@dataclass(frozen=True)
class CorpusShape:
    """tokens, docs: corpus size; sample_tokens: tokens the c/n was measured on; cn: LZ78
    phrases per token of that sample (0.0 for an empty corpus)."""

    tokens: int
    docs: int
    sample_tokens: int
    cn: float


@njit(cache=True)
def _lz78_phrases_kernel(tokens):
    n = tokens.shape[0]
    bits = 4
    while (1 << bits) < 2 * n + 2:
        bits += 1
    mask = (np.int64(1) << bits) - 1
    shift = np.uint64(64 - bits)
    keys = np.full(1 << bits, _EMPTY, dtype=np.uint64)
    child = np.empty(1 << bits, dtype=np.int64)
    node = np.int64(0)
    next_node = np.int64(1)
    phrases = 0
    for i in range(n):  # at most one trie node per token: the table never fills past half
        key = (np.uint64(node) << np.uint64(32)) | np.uint64(tokens[i])
        slot = np.int64((key * _GOLDEN) >> shift)
        while keys[slot] != key and keys[slot] != _EMPTY:
            slot = (slot + 1) & mask
        if keys[slot] == key:
            node = child[slot]
        else:
            keys[slot] = key
            child[slot] = next_node
            next_node += 1
            phrases += 1
            node = 0
    if node:
        phrases += 1
    return phrases


def lz78_phrases(tokens: np.ndarray) -> int:
    """Phrases of an LZ78 parse of ``tokens`` (uint32 (n,); n < 2**32 nodes)."""
    tokens = np.ascontiguousarray(tokens, dtype=np.uint32)
    with np.errstate(over="ignore"):  # the wrapping multiply is the hash; JIT-less runs warn
        return int(_lz78_phrases_kernel(tokens))


def shape_sample(tokens: np.ndarray) -> np.ndarray:
    """``SAMPLE_WINDOWS`` evenly spaced runs of ``SAMPLE_TOKENS // SAMPLE_WINDOWS`` tokens,
    concatenated (a view of the whole corpus when it is no larger than ``SAMPLE_TOKENS``)."""
    n = int(tokens.shape[0])
    if n <= SAMPLE_TOKENS:
        return tokens
    width = SAMPLE_TOKENS // SAMPLE_WINDOWS
    starts = np.linspace(0, n - width, SAMPLE_WINDOWS).astype(np.int64)
    return np.concatenate([tokens[s:s + width] for s in starts.tolist()])


def corpus_shape(tokens: np.ndarray, doc_offsets: np.ndarray) -> CorpusShape:
    """Size and sampled c/n of a corpus (``tokens`` uint32 (W,), ``doc_offsets`` int64 (D+1,))."""
    sample = shape_sample(tokens)
    m = int(sample.shape[0])
    cn = lz78_phrases(sample) / m if m else 0.0
    return CorpusShape(tokens=int(tokens.shape[0]), docs=int(doc_offsets.shape[0]) - 1, sample_tokens=m, cn=cn)
