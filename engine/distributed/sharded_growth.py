"""Growth of the reduced corpus in shards: each maximal phrase is found by exactly one shard.

Why it is exact
---------------
Every output phrase P has length >= L (min_length), so it starts with an L-token window W
= P[:L], and df(W) >= df(P) >= sigma: W is a frequent window, flagged wherever it occurs
(:mod:`.windows`). Route every flagged window start to the growth shard
``growth_shard_of(hash(W))``: all occurrences of W, hence all occurrences of every phrase
starting with W, land in one shard. A shard receives, per interval of the reduced corpus
holding one of its starts, the interval from its first such start to the interval's end
(growth never crosses an interval) plus the one token before that start (the left
neighbour; ``NO_LEFT`` at an interval start, where the token before lies outside every
frequent window, so no frequent phrase can extend over it).

In the shard, growth (:func:`bloomspan.engine.mining.grow.grow_seeds`, seeds = the routed
starts grouped by their first bigram) sees, for a branch P with |P| >= L, every occurrence
of P in the corpus: its df and occurrence count are exact and so is right-maximality (no
token y with df(Py) >= sigma), because ``mask_skip`` is off, the only rule that drops
occurrences of long branches. Left-maximality (no token x with df(xP) >= sigma) is then
checked on the same complete occurrence list, by the left neighbours the fragments carry
(:func:`left_maximal`). A phrase that is right- and left-maximal is maximal: any frequent
super-phrase would contain a frequent one-token extension. So every shard returns exactly
the maximal phrases that start with its windows, and the shards' results are disjoint and
together the whole answer: no merge step, no cross-shard maximality check.

Routing hashes never decide a result: a collision only sends two windows to one shard.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from bloomspan.engine.mining.grow import grow_seeds

from .windows import window_counts, window_hashes, window_hashes_reference

NO_LEFT = np.uint32(0xFFFFFFFF)  # the left slot of a fragment that starts at its interval's start


def growth_shard_of(hashes: np.ndarray, n_shards: int, dtype=np.int64, overwrite: bool = False) -> np.ndarray:
    """``dtype`` (N,): the growth shard of each window hash (its low 32 bits, scaled to the range;
    the reducers use the top bits, so the two splits are independent). ``overwrite``: compute
    in ``hashes`` itself (uint64; its values are lost) instead of in temporaries of its size."""
    hashes = np.asarray(hashes, dtype=np.uint64)
    low = hashes if overwrite else hashes.copy()
    low &= np.uint64(0xFFFFFFFF)
    low *= np.uint64(n_shards)
    low >>= np.uint64(32)
    return low.astype(dtype)


@dataclass
class Fragments:
    """Interval tails one document shard sends one growth shard.

    doc:     int64 (F,) document of each fragment (global numbers: df counts distinct values)
    owner:   int64 (F,) the document shard holding it (coverage goes back there)
    label:   int64 (F,) the owner's position of the fragment's first token after the left slot
    offsets: int64 (F+1,) fragment f is ``tokens[offsets[f]:offsets[f+1]]``; its first token
             is the left slot (a token id or ``NO_LEFT``)
    tokens:  uint32 (T,) token ids (the same ids in every shard), all below ``NO_LEFT``
    starts:  int64 (O,) routed window starts, as indices into ``tokens`` (never a left slot)
    """

    doc: np.ndarray
    owner: np.ndarray
    label: np.ndarray
    offsets: np.ndarray
    tokens: np.ndarray
    starts: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in (self.doc, self.owner, self.label, self.offsets, self.tokens, self.starts)))

    @staticmethod
    def empty() -> Fragments:
        z = np.zeros(0, dtype=np.int64)
        return Fragments(z, z.copy(), z.copy(), np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.uint32), z.copy())


@njit(cache=True, nogil=True)
def _fragment_sizes(w_seg, w_shard, shard):
    """(fragments, starts) of ``shard``: one walk over the starts."""
    n_frag = n_start = 0
    last = -1
    for i in range(w_seg.shape[0]):
        if w_shard[i] != shard:
            continue
        n_start += 1
        if w_seg[i] != last:
            last = w_seg[i]
            n_frag += 1
    return n_frag, n_start


@njit(cache=True, nogil=True)
def _fragment_walk(seg_offsets, seg_tokens, w_seg, w_at, w_shard, shard, no_left, segs, first_at, offsets, starts):
    """Fill the fragments of ``shard`` (sized by :func:`_fragment_sizes`): per fragment its
    interval and first routed offset, then its tokens (left slot first) and starts."""
    f = -1
    j = 0
    last = -1
    for i in range(w_seg.shape[0]):
        if w_shard[i] != shard:
            continue
        if w_seg[i] != last:
            last = w_seg[i]
            f += 1
            segs[f] = last
            first_at[f] = w_at[i]
            offsets[f + 1] = offsets[f] + (seg_offsets[last + 1] - seg_offsets[last]) - w_at[i] + 1
        starts[j] = offsets[f] + 1 + (w_at[i] - first_at[f])
        j += 1
    tokens = np.empty(offsets[f + 1] if f >= 0 else 0, dtype=np.uint32)
    for g in range(f + 1):
        src = seg_offsets[segs[g]] + first_at[g]
        at = offsets[g]
        tokens[at] = seg_tokens[src - 1] if first_at[g] > 0 else no_left
        for t in range(offsets[g + 1] - at - 1):
            tokens[at + 1 + t] = seg_tokens[src + t]
    return tokens


def _start_ints(a) -> np.ndarray:
    """A per-start array as the kernels take it: int32 (what a shard's cut keeps) or int64 as
    given, else int64. Not widened: three int64 copies of a shard's starts for each growth
    shard were the largest part of a route task's transient."""
    a = np.asarray(a)
    return np.ascontiguousarray(a if a.dtype in (np.int32, np.int64) else a.astype(np.int64))


def fragments_for(seg_offsets: np.ndarray, seg_tokens: np.ndarray, seg_doc: np.ndarray, seg_label: np.ndarray,
                  win_seg: np.ndarray, win_at: np.ndarray, win_shard: np.ndarray, shard: int, owner: int) -> Fragments:
    """The fragments of ``shard`` from one document shard's intervals.

    seg_offsets: int64 (S+1,) interval s is ``seg_tokens[seg_offsets[s]:seg_offsets[s+1]]``;
    seg_doc: int64 (S,) its document; seg_label: int64 (S,) the owner's position of its first
    token; win_seg / win_at / win_shard: int64 (N,) the interval, offset in it and growth
    shard of every flagged window start (``win_at + L <= interval length``), ascending by
    (win_seg, win_at).

    Two walks of a numba kernel over the starts (count, then fill), the tokens copied once:
    the numpy form (:func:`fragments_for_reference`) built five int64 arrays per fragment
    token (~27 ns per fragment token, ~8 ns per corpus token of a route task at G = 2).
    """
    seg_offsets = np.ascontiguousarray(seg_offsets, dtype=np.int64)
    seg_tokens = np.ascontiguousarray(seg_tokens, dtype=np.uint32)
    w_seg, w_at, w_shard = (_start_ints(a) for a in (win_seg, win_at, win_shard))
    n_frag, n_start = _fragment_sizes(w_seg, w_shard, np.int64(shard))
    if n_frag == 0:
        return Fragments.empty()
    segs = np.empty(n_frag, dtype=np.int64)
    first_at = np.empty(n_frag, dtype=np.int64)
    offsets = np.zeros(n_frag + 1, dtype=np.int64)
    starts = np.empty(n_start, dtype=np.int64)
    tokens = _fragment_walk(seg_offsets, seg_tokens, w_seg, w_at, w_shard, np.int64(shard), NO_LEFT, segs, first_at,
                            offsets, starts)
    return Fragments(np.asarray(seg_doc, dtype=np.int64)[segs], np.full(n_frag, owner, dtype=np.int64),
                     np.asarray(seg_label, dtype=np.int64)[segs] + first_at, offsets, tokens, starts)


def fragments_for_reference(seg_offsets: np.ndarray, seg_tokens: np.ndarray, seg_doc: np.ndarray,
                            seg_label: np.ndarray, win_seg: np.ndarray, win_at: np.ndarray, win_shard: np.ndarray,
                            shard: int, owner: int) -> Fragments:
    """Plain twin of :func:`fragments_for` (numpy: a gather index per fragment token)."""
    seg_offsets = np.asarray(seg_offsets, dtype=np.int64)
    seg_tokens = np.asarray(seg_tokens, dtype=np.uint32)
    mine = np.asarray(win_shard) == shard
    w_seg = np.asarray(win_seg, dtype=np.int64)[mine]
    w_at = np.asarray(win_at, dtype=np.int64)[mine]
    if w_seg.size == 0:
        return Fragments.empty()
    new = np.ones(w_seg.size, dtype=bool)
    new[1:] = w_seg[1:] != w_seg[:-1]
    segs = w_seg[new]
    first_at = w_at[new]  # the fragment's first routed start, in its interval
    has_left = first_at > 0
    seg_len = np.diff(seg_offsets)[segs]
    lengths = seg_len - first_at + 1  # + the left slot
    offsets = np.zeros(segs.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    # Source index of every fragment token; the left slot reads the token before the start.
    within = np.arange(offsets[-1], dtype=np.int64) - np.repeat(offsets[:-1], lengths)
    src = np.repeat(seg_offsets[:-1][segs] + first_at - 1, lengths) + within
    tokens = seg_tokens[np.maximum(src, 0)] if src.size else np.zeros(0, dtype=np.uint32)
    tokens[offsets[:-1][~has_left]] = NO_LEFT
    frag_of_start = np.cumsum(new) - 1
    starts = offsets[:-1][frag_of_start] + 1 + (w_at - first_at[frag_of_start])
    return Fragments(np.asarray(seg_doc, dtype=np.int64)[segs], np.full(segs.size, owner, dtype=np.int64),
                     np.asarray(seg_label, dtype=np.int64)[segs] + first_at, offsets, tokens, starts)


def concat_fragments(parts: list[Fragments]) -> Fragments:
    """One Fragments of many (documents keep their numbers)."""
    parts = [p for p in parts if p.doc.size]
    if not parts:
        return Fragments.empty()
    token_base = np.concatenate([[0], np.cumsum([p.tokens.size for p in parts])[:-1]]).astype(np.int64)
    offsets = np.concatenate([parts[0].offsets[:1]] + [p.offsets[1:] + b for p, b in zip(parts, token_base)])
    return Fragments(np.concatenate([p.doc for p in parts]), np.concatenate([p.owner for p in parts]),
                     np.concatenate([p.label for p in parts]), offsets, np.concatenate([p.tokens for p in parts]),
                     np.concatenate([p.starts + b for p, b in zip(parts, token_base)]))


@dataclass
class GrownPhrases:
    """The maximal phrases one growth shard found.

    tokens:      list of K tuples of token ids; df, occurrences: int64 (K,)
    docs:        K int64 arrays, each phrase's documents ascending
    occ_phrase:  int32 (O,) phrase of every occurrence; occ_owner: int32 (O,) its document
                 shard; occ_label: int64 (O,) its position there (coverage is built from these;
                 held until the document shards have them, so 16 bytes per occurrence, not 24)
    stats:       counts of the shard's growth
    """

    tokens: list[tuple[int, ...]]
    df: np.ndarray
    occurrences: np.ndarray
    docs: list[np.ndarray]
    occ_phrase: np.ndarray
    occ_owner: np.ndarray
    occ_label: np.ndarray
    stats: dict

    def lengths(self) -> np.ndarray:
        return np.asarray([len(t) for t in self.tokens], dtype=np.int64)


def left_maximal(cand_of_occ: np.ndarray, left: np.ndarray, doc: np.ndarray, n_candidates: int, sigma: int,
                 no_left: int) -> np.ndarray:
    """bool (K,): no token x precedes the candidate's occurrences in >= sigma documents.

    cand_of_occ, left, doc: int64 (O,) candidate, left neighbour and document of every
    occurrence; ``no_left``: the id of "no left neighbour", never a token.
    """
    keep = np.ones(n_candidates, dtype=bool)
    has = np.asarray(left) != no_left
    c, x, d = (np.asarray(a, dtype=np.int64)[has] for a in (cand_of_occ, left, doc))
    if c.size == 0:
        return keep
    order = np.lexsort((d, x, c))
    c, x, d = c[order], x[order], d[order]
    distinct = np.ones(c.size, dtype=bool)
    distinct[1:] = (c[1:] != c[:-1]) | (x[1:] != x[:-1]) | (d[1:] != d[:-1])
    c, x = c[distinct], x[distinct]
    group = np.ones(c.size, dtype=bool)
    group[1:] = (c[1:] != c[:-1]) | (x[1:] != x[:-1])
    first = np.flatnonzero(group)
    docs_per_group = np.diff(np.append(first, c.size))
    keep[c[first][docs_per_group >= sigma]] = False
    return keep


def left_maximal_reference(cand_of_occ, left, doc, n_candidates: int, sigma: int, no_left: int) -> np.ndarray:
    """Plain twin of :func:`left_maximal`: a set of documents per (candidate, left token)."""
    docs: dict[tuple[int, int], set] = {}
    for c, x, d in zip(np.asarray(cand_of_occ).tolist(), np.asarray(left).tolist(), np.asarray(doc).tolist()):
        if x != no_left:
            docs.setdefault((c, x), set()).add(d)
    keep = np.ones(n_candidates, dtype=bool)
    for (c, _), ds in docs.items():
        if len(ds) >= sigma:
            keep[c] = False
    return keep


def grow_fragments(fragments: Fragments, sigma: int, min_length: int, left_prune: bool = True,
                   release_tokens: bool = False) -> GrownPhrases:
    """Every maximal phrase (df >= sigma, length >= min_length) that starts at a routed start.

    The fragments are laid out one document after another (a ``NO_LEFT`` after each
    fragment, so nothing grows from one into the next), grown with the engine's kernel and
    checked for left-maximality (module docstring). ``release_tokens``: ``fragments.tokens``
    is emptied once they are laid out (a growth task's own unpacked copy: 4 bytes per
    fragment token less while it grows).
    """
    f = fragments
    n_frag = f.doc.size
    n_frag_tokens = int(f.tokens.size)
    if n_frag == 0 or f.starts.size == 0:
        z = np.zeros(0, dtype=np.int64)
        z32 = np.zeros(0, dtype=np.int32)
        return GrownPhrases([], z, z.copy(), [], z32, z32.copy(), z.copy(), {"fragments": 0, "candidates": 0})
    order = np.lexsort((f.label, f.owner, f.doc))
    frag_len = np.diff(f.offsets)
    new_len = frag_len[order] + 1  # + a NO_LEFT after the fragment
    new_off = np.zeros(n_frag + 1, dtype=np.int64)
    np.cumsum(new_len, out=new_off[1:])
    dst_start = np.empty(n_frag, dtype=np.int64)
    dst_start[order] = new_off[:-1]
    layout = np.full(new_off[-1], NO_LEFT, dtype=np.uint32)
    place_fragments(layout, dst_start, f.offsets, f.tokens)
    sdoc = f.doc[order]
    doc_first = np.ones(n_frag, dtype=bool)
    doc_first[1:] = sdoc[1:] != sdoc[:-1]
    doc_offsets = np.append(new_off[:-1][doc_first], new_off[-1]).astype(np.int64)
    global_doc = sdoc[doc_first]

    if release_tokens:  # placed: the caller's copy of the fragments' tokens is not read again
        f.tokens = np.zeros(0, dtype=np.uint32)
    uniq, ids = dense_token_ids(layout, overwrite=True)  # growth reads the dense ids only
    del layout
    n_real = int(uniq.size - (uniq[-1] == NO_LEFT))
    rank_of = np.arange(uniq.size, dtype=np.uint32)  # NO_LEFT (last) gets rank n_real: rare

    pos, doc, seed_lo, seed_hi = seed_buffer(ids, int(uniq.size), f.starts, f.offsets, order, dst_start, doc_offsets)
    cands = grow_seeds(ids, rank_of, doc_offsets, pos, doc, seed_lo, seed_hi, sigma, min_length, n_real,
                       mask_skip=False, left_prune=left_prune, inplace=True)

    n_occ = cands.hi - cands.lo
    cand_of_occ = np.repeat(np.arange(len(cands), dtype=np.int64), n_occ)
    occ_pos = np.concatenate([cands.occurrences(i) for i in range(len(cands))]) if len(cands) else \
        np.zeros(0, dtype=np.int64)
    occ_doc = np.searchsorted(doc_offsets, occ_pos, side="right") - 1
    left = ids[occ_pos - 1].astype(np.int64)
    keep = left_maximal(cand_of_occ, left, occ_doc, len(cands), sigma, n_real)

    kept = np.flatnonzero(keep)
    first_pos = cands.pos[cands.lo[kept]]
    tokens = [tuple(uniq[ids[p:p + n]].tolist()) for p, n in zip(first_pos.tolist(), cands.length[kept].tolist())]
    keep_occ = keep[cand_of_occ]
    renumber = np.cumsum(keep) - 1
    k_pos, k_doc = occ_pos[keep_occ], occ_doc[keep_occ]
    k_phrase = renumber[cand_of_occ[keep_occ]]
    sorted_frag = np.searchsorted(new_off, k_pos, side="right") - 1
    frag = order[sorted_frag]
    label = f.label[frag] + (k_pos - new_off[sorted_frag] - 1)
    docs = []
    bounds = np.concatenate([[0], np.cumsum(n_occ[kept])]).astype(np.int64)
    for j in range(kept.size):
        docs.append(np.unique(global_doc[k_doc[bounds[j]:bounds[j + 1]]]))
    stats = {"fragments": int(n_frag), "fragment_tokens": n_frag_tokens, "routed_starts": int(f.starts.size),
             "seeds": int(seed_lo.size), "candidates": len(cands),
             "not_left_maximal": int(len(cands) - kept.size), **{f"grow_{k}": v for k, v in cands.stats.items()}}
    return GrownPhrases(tokens, cands.df[kept].astype(np.int64), n_occ[kept].astype(np.int64), docs,
                        k_phrase.astype(np.int32), f.owner[frag].astype(np.int32), label.astype(np.int64), stats)


@njit(cache=True, nogil=True)
def _place(layout, dst_start, offsets, tokens):
    for f in range(dst_start.shape[0]):
        d = dst_start[f] - offsets[f]
        for i in range(offsets[f], offsets[f + 1]):
            layout[d + i] = tokens[i]


def place_fragments(layout: np.ndarray, dst_start: np.ndarray, offsets: np.ndarray, tokens: np.ndarray) -> None:
    """``layout[dst_start[f]:+len(f)] = fragment f's tokens`` for every fragment (no index array
    per token)."""
    _place(layout, np.ascontiguousarray(dst_start, dtype=np.int64), np.ascontiguousarray(offsets, dtype=np.int64),
           tokens)


def place_fragments_reference(layout, dst_start, offsets, tokens) -> None:
    """Plain twin of :func:`place_fragments`: one index per token."""
    frag_len = np.diff(offsets)
    within = np.arange(tokens.size, dtype=np.int64) - np.repeat(offsets[:-1], frag_len)
    layout[np.repeat(dst_start, frag_len) + within] = tokens


@njit(cache=True, nogil=True)
def _dense_ids(layout, no_left, rank, out):
    """rank[v] = 1 for every value present (NO_LEFT at the table's last slot), then the ranks,
    then every element's rank; returns the number of distinct values."""
    top = rank.shape[0] - 1
    for i in range(layout.shape[0]):
        v = layout[i]
        rank[top if v == no_left else v] = 1
    n = 0
    for v in range(top + 1):
        if rank[v]:
            rank[v] = n
            n += 1
        else:
            rank[v] = 0xFFFFFFFF
    for i in range(layout.shape[0]):
        v = layout[i]
        out[i] = rank[top if v == no_left else v]
    return n


@njit(cache=True, nogil=True)
def _counting_pass(key, carry, carry2, dst_carry, dst_carry2, count):
    """Stable counting sort by ``key``: ``dst_carry`` / ``dst_carry2`` get ``carry`` /
    ``carry2`` in key order (a key that a later pass needs travels as a carry, so no pass
    reads an array at sorted, i.e. random, positions)."""
    count[:] = 0
    for i in range(key.shape[0]):
        count[key[i] + 1] += 1
    for t in range(count.shape[0] - 1):
        count[t + 1] += count[t]
    for i in range(key.shape[0]):
        t = key[i]
        k = count[t]
        count[t] = k + 1
        dst_carry[k] = carry[i]
        dst_carry2[k] = carry2[i]


@njit(cache=True, nogil=True)
def _index_pass(key, carry, dst_index, dst_carry, count):
    """:func:`_counting_pass` of the indices 0..n-1 (no array of them) and ``carry``."""
    count[:] = 0
    for i in range(key.shape[0]):
        count[key[i] + 1] += 1
    for t in range(count.shape[0] - 1):
        count[t + 1] += count[t]
    for i in range(key.shape[0]):
        t = key[i]
        k = count[t]
        count[t] = k + 1
        dst_index[k] = i
        dst_carry[k] = carry[i]


@njit(cache=True, nogil=True)
def _bucket_keys(count, n_keys, out):
    """out[i] = the key of element i after a counting pass over ``n_keys`` keys that left
    count[t] = the end of bucket t: the sorted keys written in order, not carried through the
    pass (a sequential fill instead of a scattered copy)."""
    lo = 0
    for t in range(n_keys):
        hi = count[t]
        for i in range(lo, hi):
            out[i] = t
        lo = hi


@njit(cache=True, nogil=True)
def _seed_buffer(ids, n_ids, starts, offsets, order, dst_start, doc_offsets, index_dtype):
    n = starts.shape[0]
    n_frag = offsets.shape[0] - 1
    bound = np.empty(n_frag + 1, dtype=np.int64)  # fragment f's starts: bound[f]:bound[f + 1] (one merge)
    j = 0
    for f in range(n_frag + 1):
        while j < n and starts[j] < offsets[f]:
            j += 1
        bound[f] = j
    placed = np.empty(n, dtype=np.int64)
    placed_doc = np.empty(n, dtype=np.int32)
    first = np.empty(n, dtype=np.uint32)
    second = np.empty(n, dtype=np.uint32)
    m = 0
    d = 0
    for i in range(order.shape[0]):  # fragments in placement order: positions come out ascending
        f = order[i]
        base = dst_start[f] - offsets[f]
        for j in range(bound[f], bound[f + 1]):
            p = base + starts[j]
            while doc_offsets[d + 1] <= p:
                d += 1
            placed[m] = p
            placed_doc[m] = d
            first[m] = ids[p]  # read here, in position order
            second[m] = ids[p + 1]
            m += 1
    # Two stable counting passes (second token, then first) over the starts' indices in
    # placement order: ordered by bigram, then position. Indices (4 bytes) and keys travel,
    # not positions and documents, and the key arrays are reused once read: the seeds take at
    # most 32 bytes per start at once. Each pass's own key comes out of its buckets
    # (_bucket_keys), and the second token travels through the second pass, so the seed
    # boundaries are found in one sequential read (reading second[by_bigram[i]] there, a
    # random load per start twice over, was half the seeds' time).
    count = np.empty(n_ids + 1, dtype=np.int64)
    by_second = np.empty(n, dtype=index_dtype)
    first_1 = np.empty(n, dtype=np.uint32)
    _index_pass(second, first, by_second, first_1, count)
    second_1 = second  # reused: now the second tokens in the pass's order
    _bucket_keys(count, n_ids, second_1)
    by_bigram = np.empty(n, dtype=index_dtype)
    second_2 = first  # reused: its last read was the pass above
    _counting_pass(first_1, by_second, second_1, by_bigram, second_2, count)
    first_2 = first_1
    _bucket_keys(count, n_ids, first_2)
    n_seeds = 0
    for i in range(n):
        if i == 0 or first_2[i] != first_2[i - 1] or second_2[i] != second_2[i - 1]:
            n_seeds += 1
    seed_lo = np.empty(n_seeds, dtype=np.int64)
    n_seeds = 0
    for i in range(n):
        if i == 0 or first_2[i] != first_2[i - 1] or second_2[i] != second_2[i - 1]:
            seed_lo[n_seeds] = i
            n_seeds += 1
    pos = np.empty(n, dtype=np.int64)
    doc = np.empty(n, dtype=np.int32)
    for i in range(n):
        k = by_bigram[i]
        pos[i] = placed[k]
        doc[i] = placed_doc[k]
    return pos, doc, seed_lo


def seed_buffer(ids: np.ndarray, n_ids: int, starts: np.ndarray, offsets: np.ndarray, order: np.ndarray,
                dst_start: np.ndarray, doc_offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The growth kernel's seeds: every routed start where it lies once the fragments are placed,
    grouped by its first bigram (ascending), positions ascending in each group.

    ids: uint32 dense token ids (< ``n_ids``) of the placed layout; starts: int64 routed starts
    (indices into the fragments' tokens, never a left slot); fragment f was placed at
    ``dst_start[f]``, ``order`` lists the fragments by that position (ascending);
    doc_offsets: int64 the layout's documents. Returns (pos int64, doc int32 (its document
    in ``doc_offsets``), seed_lo, seed_hi int64). One walk over the fragments in placement
    order and two counting passes over the bigrams' ids (linear; a lexsort of the starts, a
    gather and a binary search per start were two thirds of a growth shard's CPU)."""
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    if starts.size and np.any(starts[1:] < starts[:-1]):
        starts = np.sort(starts)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    if starts.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, np.zeros(0, dtype=np.int32), z.copy(), z.copy()
    pos, doc, seed_lo = _seed_buffer(np.ascontiguousarray(ids, dtype=np.uint32), np.int64(n_ids), starts, offsets,
                                     np.ascontiguousarray(order, dtype=np.int64),
                                     np.ascontiguousarray(dst_start, dtype=np.int64),
                                     np.ascontiguousarray(doc_offsets, dtype=np.int64),
                                     np.int32 if starts.size < 2**31 else np.int64)
    seed_hi = np.append(seed_lo[1:], pos.size).astype(np.int64)
    return pos, doc, seed_lo, seed_hi


def seed_buffer_reference(ids, n_ids: int, starts, offsets, order, dst_start, doc_offsets):
    """Plain twin of :func:`seed_buffer`: positions by a search per start, a lexsort by
    (bigram, position), documents by a binary search."""
    starts = np.asarray(starts, dtype=np.int64)
    frag = np.searchsorted(offsets, starts, side="right") - 1
    pos = (np.asarray(dst_start)[frag] + (starts - np.asarray(offsets)[frag])).astype(np.int64)
    key = (ids[pos].astype(np.uint64) << np.uint64(32)) | ids[pos + 1].astype(np.uint64)
    by = np.lexsort((pos, key))
    pos, key = pos[by], key[by]
    doc = (np.searchsorted(doc_offsets, pos, side="right") - 1).astype(np.int32)
    cut = np.flatnonzero(np.diff(key)) + 1
    if pos.size == 0:  # no seed at all, not one empty seed
        return pos, doc, cut.astype(np.int64), cut.astype(np.int64)
    return pos, doc, np.concatenate([[0], cut]).astype(np.int64), np.append(cut, pos.size).astype(np.int64)


def dense_token_ids(layout: np.ndarray, overwrite: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(layout, return_inverse=True)`` for run ids (uint32, ``NO_LEFT`` allowed) in
    linear time and without a temporary per element: a presence table over the ids (a
    numba kernel) instead of a sort (the sort was 60 % of a growth shard's CPU). Returns
    (uint32 distinct values ascending, ``NO_LEFT`` last if present; uint32 (n,) index of
    each element among them). ``overwrite``: the indices are written into ``layout`` itself
    (a uint32 array; returned as the second value), so a growth shard holds one array per
    placed token instead of two."""
    given = layout
    layout = np.ascontiguousarray(layout, dtype=np.uint32)
    if layout.size == 0:
        return np.zeros(0, dtype=np.uint32), np.zeros(0, dtype=np.uint32)
    real_max = int(np.max(layout, where=layout != NO_LEFT, initial=0))
    rank = np.zeros(real_max + 2, dtype=np.uint32)  # the last slot stands for NO_LEFT
    # in place only into the caller's own array (a converted copy would be lost)
    out = layout if overwrite and layout is given else np.empty(layout.shape[0], dtype=np.uint32)
    _dense_ids(layout, NO_LEFT, rank, out)
    present = rank != np.uint32(0xFFFFFFFF)
    values = np.flatnonzero(present[:-1]).astype(np.uint32)
    if present[-1]:
        values = np.append(values, NO_LEFT)
    return values, out


# ---------------------------------------------------------------------- routing keys
@njit(cache=True, nogil=True)
def _sliding_min(kgram_hash, doc_offsets, length, k, out):
    """out[window] = min of the (length - k + 1) k-gram hashes inside it, documents in order."""
    span = length - k + 1
    n_out = 0
    n_in = 0
    for d in range(doc_offsets.shape[0] - 1):
        n = doc_offsets[d + 1] - doc_offsets[d]
        n_k = max(n - k + 1, 0)
        for j in range(max(n - length + 1, 0)):
            m = kgram_hash[n_in + j]
            for t in range(1, span):
                if kgram_hash[n_in + j + t] < m:
                    m = kgram_hash[n_in + j + t]
            out[n_out] = m
            n_out += 1
        n_in += n_k
    return n_out


def routing_k(length: int) -> int:
    """The k-gram length of the routing minimizer for ``length``-windows: about half the window
    (longer k-grams spread common phrases over more shards, shorter ones keep more
    neighbouring windows on one shard)."""
    return max(1, (length + 1) // 2)


def routing_keys(ids: np.ndarray, token_hash: np.ndarray, doc_offsets: np.ndarray, length: int, k: int) -> np.ndarray:
    """uint64 (N,): the routing key of every ``length``-window (order of :func:`.windows.window_hashes`):
    the smallest hash of the k-grams inside it (a minimizer). It depends only on the window's
    strings, so every occurrence of a window goes to one growth shard; neighbouring windows
    mostly share it, so an interval's tail goes to few shards (module docstring)."""
    if not 1 <= k <= length:
        raise ValueError(f"k={k}: must lie in [1, length={length}]")
    kgram_hash, _ = window_hashes(ids, token_hash, doc_offsets, k)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    out = np.empty(int(window_counts(doc_offsets, length).sum()), dtype=np.uint64)
    got = _sliding_min(kgram_hash, doc_offsets, np.int64(length), np.int64(k), out)
    assert got == out.shape[0]
    return out


def routing_keys_reference(ids, token_hash, doc_offsets, length: int, k: int) -> np.ndarray:
    """Plain twin of :func:`routing_keys`: every window's k-gram hashes, their minimum."""
    kh, ks = window_hashes_reference(ids, token_hash, doc_offsets, k)
    at = {int(s): int(h) for h, s in zip(kh.tolist(), ks.tolist())}
    out = []
    off = np.asarray(doc_offsets).tolist()
    for d in range(len(off) - 1):
        for s in range(off[d], off[d + 1] - length + 1):
            out.append(min(at[s + t] for t in range(length - k + 1)))
    return np.asarray(out, dtype=np.uint64)
