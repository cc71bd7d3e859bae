"""Seeds: the frequent bigrams, with every occurrence, in the order BloomSpan grows them.

Input: the candidate occurrences that passed the word filter and the counting filter
(:func:`bloomspan.engine.mining.counting_filter.candidate_occurrences`), ascending positions.
With the filter's min_length-windows on, a bigram's candidates are only those occurrences
that can start a returned phrase, and "df" below is counted over them (it is still >= the
df of every returned phrase starting with the bigram, which is all growth needs); with
windows off they are all of the bigram's occurrences and df is the bigram's df.

1. Group occurrences by bigram, positions ascending inside a group. Conceptually this is a
   stable sort of packed keys ``id1 << 32 | id2`` (what :func:`gather_seeds_reference` does);
   the kernel numbers the distinct bigrams with a small hash table (the filter leaves few:
   thousands of bigrams for millions of occurrences), sorts just those, and moves every
   occurrence once with a stable counting sort by bigram: O(C + G log G), and one copy of
   the occurrences instead of the four arrays each of two counting-sort passes by rank
   needed (memory at a billion tokens). The table is keyed by the packed token ids, not
   by the words' ranks: ranks of frequent words follow their ids, so the order is the
   same, and no occurrence reads ``rank_of`` (two random reads of a vocabulary-sized array).
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


_EMPTY = np.uint64(2**64 - 1)  # a free slot: packed ids are smaller (ids < 2**32 - 1)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def _slot(key, shift):
    return np.int64((key * _GOLDEN) >> shift)  # Fibonacci hashing: the top bits of the product


@njit(cache=True)
def _group_ids(tokens, pos):
    """Dense id of each occurrence's bigram (first-seen order) and the packed token ids
    ``id1 << 32 | id2`` of every id. An open-addressing table, doubled at half load:
    its size follows the distinct bigrams, not the occurrences."""
    n = pos.shape[0]
    bits = 10
    keys = np.full(1 << bits, _EMPTY, dtype=np.uint64)
    ids = np.empty(1 << bits, dtype=np.int64)
    group_keys = np.empty(1 << (bits - 1), dtype=np.uint64)
    gid = np.empty(n, dtype=np.int32)
    n_groups = 0
    for i in range(n):  # positions ascending: a streaming read of the corpus
        p = pos[i]
        key = (np.uint64(tokens[p]) << np.uint64(32)) | np.uint64(tokens[p + 1])
        mask = (np.int64(1) << bits) - 1
        slot = _slot(key, np.uint64(64 - bits))
        while keys[slot] != key and keys[slot] != _EMPTY:
            slot = (slot + 1) & mask
        if keys[slot] == key:
            gid[i] = ids[slot]
            continue
        keys[slot] = key
        ids[slot] = n_groups
        group_keys[n_groups] = key
        gid[i] = n_groups
        n_groups += 1
        if 2 * n_groups >= keys.shape[0]:  # double and re-insert
            bits += 1
            mask = (np.int64(1) << bits) - 1
            keys = np.full(1 << bits, _EMPTY, dtype=np.uint64)
            ids = np.empty(1 << bits, dtype=np.int64)
            for g in range(n_groups):
                slot = _slot(group_keys[g], np.uint64(64 - bits))
                while keys[slot] != _EMPTY:
                    slot = (slot + 1) & mask
                keys[slot] = group_keys[g]
                ids[slot] = g
            grown = np.empty(1 << (bits - 1), dtype=np.uint64)
            grown[:n_groups] = group_keys[:n_groups]
            group_keys = grown
    return gid, group_keys[:n_groups].copy()


@njit(cache=True)
def _group_kernel(tokens, pos, doc):
    """Occurrences grouped by bigram (groups in packed-id order, positions ascending
    inside each: one stable counting sort by group), each group's slice and exact df."""
    n = pos.shape[0]
    gid, group_keys = _group_ids(tokens, pos)
    n_groups = group_keys.shape[0]
    rank = np.empty(n_groups, dtype=np.int64)  # id -> position of its key in sorted order
    rank[np.argsort(group_keys)] = np.arange(n_groups)
    start = np.zeros(n_groups + 1, dtype=np.int64)
    for i in range(n):
        start[rank[gid[i]] + 1] += 1
    for g in range(n_groups):
        start[g + 1] += start[g]
    g_lo = start[:n_groups].copy()
    g_hi = start[1:].copy()
    out_pos = np.empty(n, dtype=np.int64)
    out_doc = np.empty(n, dtype=np.int32)
    for i in range(n):
        g = rank[gid[i]]
        j = start[g]
        start[g] = j + 1
        out_pos[j] = pos[i]
        out_doc[j] = doc[i]
    g_df = np.zeros(n_groups, dtype=np.int64)
    for g in range(n_groups):  # documents are non-decreasing inside a group
        for j in range(g_lo[g], g_hi[g]):
            g_df[g] += j == g_lo[g] or out_doc[j] != out_doc[j - 1]
    return out_pos, out_doc, g_lo, g_hi, g_df


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


def _check(tokens, rank_of, pos, doc, max_id=None):
    largest = int(max_id) if max_id is not None else int(tokens.max()) if tokens.size else 0
    if largest >= 2**32 - 1:
        raise ValueError(f"tokens: the largest id is {largest}; seeds pack two ids in 64 bits below 2**64 - 1, "
                         "so ids must be < 2**32 - 1 (renumber the vocabulary densely)")
    if rank_of.dtype != np.uint32 or (tokens.size and rank_of.shape[0] <= largest):
        raise ValueError(f"rank_of ({rank_of.dtype}{rank_of.shape}): need uint32 with an entry for every token id")
    if pos.dtype != np.int64 or doc.dtype != np.int32 or pos.shape != doc.shape:
        raise ValueError(f"pos ({pos.dtype}{pos.shape}) / doc ({doc.dtype}{doc.shape}): "
                         "need int64 and int32 of equal shape")


def gather_seeds(tokens: np.ndarray, rank_of: np.ndarray, pos: np.ndarray, doc: np.ndarray, sigma: int,
                 n_frequent: int, max_id: int | None = None) -> SeedSet:
    """Group candidate bigram occurrences, count exact df, keep seeds, order them by psi.

    tokens:  uint32 (W,) token ids (seed keys are reported in these);
    rank_of: uint32 (V,) word-filter ranks; every candidate's two tokens rank < n_frequent;
    pos/doc: int64 (C,) / int32 (C,) candidate occurrences, positions ascending;
    max_id:  the largest token id if known (else one pass over tokens finds it).
    """
    _check(tokens, rank_of, pos, doc, max_id)
    if n_frequent >= 2**32 - 1:
        raise ValueError(f"n_frequent={n_frequent}: ranks must fit in 32 bits")
    pos2, doc2, g_lo, g_hi, g_df = _group_kernel(tokens, pos, doc)
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
