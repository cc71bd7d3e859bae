"""Seeds: the frequent bigrams, with every occurrence, in the order BloomSpan grows them.

Input: the candidate occurrences that passed the word filter and the counting filter
(:func:`bloomspan.engine.mining.counting_filter.candidate_occurrences`), ascending positions.
With the filter's min_length-windows on, a bigram's candidates are only those occurrences
that can start a returned phrase, and "df" below is counted over them (it is still >= the
df of every returned phrase starting with the bigram, which is all growth needs); with
windows off they are all of the bigram's occurrences and df is the bigram's df.

1. Group occurrences by bigram, positions ascending inside a group. Conceptually this is a
   stable sort of packed keys ``id1 << 32 | id2`` (what :func:`gather_seeds_reference` does);
   the kernel does the same as two stable counting-sort passes over the dense frequent-word
   ranks (second token, then first token): O(C + F) instead of a comparison sort of C keys.
2. Exact df per bigram: positions ascending means documents non-decreasing, so df is the
   number of document changes inside the group.
3. Bigrams with df < sigma are the filter's false positives and are dropped.
4. Seeds are ordered by psi = 2 * df descending; ties (all seeds have length 2) by packed
   key ascending, i.e. lexicographically by token id.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit


@dataclass
class SeedSet:
    """Frequent bigrams and their occurrences.

    pos:   int64 (C,) occurrence start positions, grouped by bigram (groups in key order),
           ascending inside each group. Seeds index into it; false positives' ranges are
           simply not referenced.
    doc:   int32 (C,) the document of each position.
    keys:  uint64 (S,) packed original token ids ``id1 << 32 | id2`` of each seed, psi order.
    df:    int64 (S,) exact number of documents among each seed's candidate occurrences.
    lo/hi: int64 (S,) each seed's occurrences are ``pos[lo:hi]``.
    n_candidate_bigrams: distinct bigrams among the candidates.
    n_false_positives:   distinct candidate bigrams with df < sigma (dropped).
    """

    pos: np.ndarray
    doc: np.ndarray
    keys: np.ndarray
    df: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    n_candidate_bigrams: int
    n_false_positives: int

    @property
    def n_seeds(self) -> int:
        return int(self.keys.shape[0])

    @property
    def n_seed_occurrences(self) -> int:
        return int((self.hi - self.lo).sum())


@njit(cache=True)
def _stable_bucket(keys, pos, doc, other, n_buckets):
    """Stable counting sort of (pos, doc, other key) by ``keys`` in [0, n_buckets).

    Returns the four arrays permuted: pos, doc, other, keys. No random reads of the corpus.
    """
    n = keys.shape[0]
    start = np.zeros(n_buckets + 1, dtype=np.int64)
    for i in range(n):
        start[keys[i] + 1] += 1
    for b in range(n_buckets):
        start[b + 1] += start[b]
    out_pos = np.empty(n, dtype=np.int64)
    out_doc = np.empty(n, dtype=np.int32)
    out_other = np.empty(n, dtype=np.uint32)
    out_keys = np.empty(n, dtype=np.uint32)
    for i in range(n):
        k = keys[i]
        j = start[k]
        start[k] = j + 1
        out_pos[j] = pos[i]
        out_doc[j] = doc[i]
        out_other[j] = other[i]
        out_keys[j] = k
    return out_pos, out_doc, out_other, out_keys


@njit(cache=True)
def _group_kernel(tokens, rank_of, pos, doc, n_frequent):
    n = pos.shape[0]
    first = np.empty(n, dtype=np.uint32)
    second = np.empty(n, dtype=np.uint32)
    for i in range(n):  # positions ascending: a streaming read of the corpus
        first[i] = rank_of[tokens[pos[i]]]
        second[i] = rank_of[tokens[pos[i] + 1]]
    # LSD: by second token, then (stably) by first token.
    pos1, doc1, first1, second1 = _stable_bucket(second, pos, doc, first, n_frequent)
    pos2, doc2, second2, first2 = _stable_bucket(first1, pos1, doc1, second1, n_frequent)
    # Group scan: boundaries where (first, second) changes; df = document changes.
    n_groups = 0
    for i in range(n):
        if i == 0 or first2[i] != first2[i - 1] or second2[i] != second2[i - 1]:
            n_groups += 1
    g_lo = np.empty(n_groups, dtype=np.int64)
    g_hi = np.empty(n_groups, dtype=np.int64)
    g_df = np.zeros(n_groups, dtype=np.int64)
    g = -1
    for i in range(n):
        if i == 0 or first2[i] != first2[i - 1] or second2[i] != second2[i - 1]:
            g += 1
            g_lo[g] = i
            g_df[g] = 1
        elif doc2[i] != doc2[i - 1]:
            g_df[g] += 1
        g_hi[g] = i + 1
    return pos2, doc2, g_lo, g_hi, g_df


def _finish(tokens, pos, doc, g_lo, g_hi, g_df, sigma) -> SeedSet:
    keep = g_df >= sigma
    lo, hi, df = g_lo[keep], g_hi[keep], g_df[keep]
    first = tokens[pos[lo]].astype(np.uint64)
    second = tokens[pos[lo] + 1].astype(np.uint64)
    keys = (first << np.uint64(32)) | second
    order = np.lexsort((keys, -df))  # psi = 2*df descending, then key ascending
    return SeedSet(
        pos=pos,
        doc=doc,
        keys=keys[order],
        df=df[order].astype(np.int64),
        lo=lo[order].astype(np.int64),
        hi=hi[order].astype(np.int64),
        n_candidate_bigrams=int(g_lo.shape[0]),
        n_false_positives=int((~keep).sum()),
    )


def _check(tokens, rank_of, pos, doc):
    if rank_of.dtype != np.uint32 or (tokens.size and rank_of.shape[0] <= int(tokens.max())):
        raise ValueError(f"rank_of ({rank_of.dtype}{rank_of.shape}): need uint32 with an entry for every token id")
    if pos.dtype != np.int64 or doc.dtype != np.int32 or pos.shape != doc.shape:
        raise ValueError(f"pos ({pos.dtype}{pos.shape}) / doc ({doc.dtype}{doc.shape}): "
                         "need int64 and int32 of equal shape")


def gather_seeds(tokens: np.ndarray, rank_of: np.ndarray, pos: np.ndarray, doc: np.ndarray, sigma: int,
                 n_frequent: int) -> SeedSet:
    """Group candidate bigram occurrences, count exact df, keep seeds, order them by psi.

    tokens:  uint32 (W,) token ids (seed keys are reported in these);
    rank_of: uint32 (V,) word-filter ranks; every candidate's two tokens rank < n_frequent;
    pos/doc: int64 (C,) / int32 (C,) candidate occurrences, positions ascending.
    """
    _check(tokens, rank_of, pos, doc)
    pos2, doc2, g_lo, g_hi, g_df = _group_kernel(tokens, rank_of, pos, doc, np.int64(n_frequent))
    return _finish(tokens, pos2, doc2, g_lo, g_hi, g_df, sigma)


def gather_seeds_reference(tokens, rank_of, pos, doc, sigma: int, n_frequent: int) -> SeedSet:
    """Readable twin of :func:`gather_seeds`: a stable argsort of packed uint64 keys."""
    _check(tokens, rank_of, pos, doc)
    keys = (tokens[pos].astype(np.uint64) << np.uint64(32)) | tokens[pos + 1].astype(np.uint64)
    order = np.argsort(keys, kind="stable")
    keys, pos2, doc2 = keys[order], pos[order], doc[order]
    g_lo, g_hi, g_df = [], [], []
    for i in range(len(keys)):
        if i == 0 or keys[i] != keys[i - 1]:
            g_lo.append(i)
            g_hi.append(i + 1)
            g_df.append(1)
        else:
            g_hi[-1] = i + 1
            if doc2[i] != doc2[i - 1]:
                g_df[-1] += 1
    as64 = lambda xs: np.asarray(xs, dtype=np.int64)  # noqa: E731
    return _finish(tokens, pos2, doc2, as64(g_lo), as64(g_hi), as64(g_df), sigma)
