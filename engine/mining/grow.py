"""Depth-first right growth of seeds directly on the token array.

A branch is a phrase ``P`` of length ``L`` with a list of its start positions (and their
documents), ascending. Growth looks at ``tokens[p + L]`` for each occurrence, groups the
occurrences by that token and pushes every group covering >= sigma documents as the
branch ``P + t``. A branch with no such group is right-maximal and, if ``L >= min_length``,
a *candidate*. :mod:`bloomspan.engine.mining.maximal` keeps the candidates not contained in another.

Everything happens in one occurrence buffer: a branch owns a slice of it, its children are
written to the front of that slice (stable, so positions stay ascending), and a candidate's
slice is never touched again. Grouping is a counting pass over the frequent-word ranks
(scratch arrays with one entry per frequent word), not a sort.

Invariant that makes the prunings exact: *a branch's occurrence list contains every
occurrence of every maximal phrase that starts with the branch.* Then (1) every maximal
phrase is reached (each prefix keeps >= df(M) documents) and emitted (its right extensions
are counted on its full occurrence list, so it is right-maximal here too); (2) its df and
occurrence count are exact; (3) every candidate is a frequent phrase (the df we count
never exceeds the true df). A non-maximal phrase may look right-maximal after drops; it
lies inside a maximal phrase, which is a candidate too, and :mod:`.maximal` removes it.
Occurrences are dropped by:

* the counting filter's windows (see :mod:`.counting_filter`): no frequent
  min_length-window starts there, so no returned phrase does;
* reach: ``p + min_length > end of document``: no phrase of length >= min_length starts
  there (shorter branches are never output);
* dead (``mask_skip``): ``p`` lies strictly inside a frequent phrase occurrence that ends at
  its document's end (see :mod:`.coverage`); no maximal phrase occurs there.

A branch whose remaining occurrences span < sigma documents is pruned (for a seed this is
"skipped by mask" when the dead rule made the difference).

Left-neighbour pruning (``left_prune``). If every remaining occurrence of ``P`` has the same
left neighbour ``x``, every maximal phrase ``M`` starting with ``P`` would have all its
occurrences preceded by ``x``, so ``xM`` has the same df and ``M`` is not maximal: the
whole branch goes. The article's rule (Part 4, "Early pruning": "all occurrences have the same token on the left")
needs care to stay exact:

* an occurrence at the start of its document has no left neighbour and counts as a
  *distinct* one (pruning "b c" in ``b c | a b c | a b c`` at sigma 3 loses "b c" itself;
  ``tests/data/left_prune_document_start.json``);
* a rare word counts as distinct (it cannot precede >= sigma documents anyway). When the
  test compared word-filter ranks, all rare words shared the sentinel rank and three
  different rare words before "b c" looked like one neighbour
  (``tests/data/left_prune_rare_neighbours.json``); it now compares token ids and treats
  a rare one as a break;
* every occurrence counts, not one per document: in ``x b c q z1 b c y``,
  ``x b c q z2 b c y``, ``x b c q z3 b c y`` each document's first "b c" follows x, yet
  "b c y" is maximal (``tests/data/left_prune_every_occurrence.json``). Repeats inside a
  document and self-overlapping runs ("a a a a") need nothing else: an occurrence whose
  left neighbour belongs to the previous occurrence still has that neighbour
  (``tests/data/self_overlapping_runs.json``);
* the test runs on the occurrence list after the drops above, which is stricter than the
  article's and still exact by the invariant.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .coverage import is_dead, mark_frequent_suffix, new_suffix_mask

# Indices into the stats vector the kernel returns.
STAT_NAMES = (
    "seeds_grown",
    "seeds_skipped_by_mask",
    "seeds_too_short",
    "seeds_pruned_by_left_neighbour",
    "branches_visited",
    "branches_pruned_by_left_neighbour",
    "branches_pruned_by_mask",
    "branches_too_short",
    "occurrences_scanned",
    "occurrences_dropped_dead",
    "candidates",
)
(_SEEDS_GROWN, _SEEDS_MASK, _SEEDS_SHORT, _SEEDS_LEFT, _VISITED, _BR_LEFT, _BR_MASK, _BR_SHORT,
 _SCANNED, _DEAD, _CANDS) = range(len(STAT_NAMES))
_N_STATS = len(STAT_NAMES)

_END = -2   # no next token: the occurrence ends at its document's end
_RARE = -1  # next token is a rare word: cannot extend to a frequent phrase


@dataclass
class Candidates:
    """Right-maximal branches of length >= min_length, in discovery order.

    pos:     int64 (C,) the occurrence buffer after growth; candidate i owns
             ``pos[lo[i]:hi[i]]`` (positions ascending).
    lo, hi:  int64 (K,); length, df: int64 (K,); seed: int64 (K,) index of the seed (in
             processing order) it grew from.
    stats:   ``{name: int}`` for :data:`STAT_NAMES`.
    """

    pos: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    length: np.ndarray
    df: np.ndarray
    seed: np.ndarray
    stats: dict

    def __len__(self) -> int:
        return int(self.lo.shape[0])

    def occurrences(self, i: int) -> np.ndarray:
        return self.pos[self.lo[i]:self.hi[i]]


@njit(cache=True)
def _grown(a, n):
    out = np.empty(max(2 * a.shape[0], n), dtype=a.dtype)
    out[:a.shape[0]] = a
    return out


@njit(cache=True)
def _pure_levels(tokens, rank_of, doc_offsets, pos, doc, lo, hi, depth, n_frequent):
    """How many branches in a row, from length ``depth`` on, every occurrence in
    ``pos[lo:hi]`` extends by one and the same frequent token inside its document.

    Such a branch keeps the occurrence list of its parent whole: nothing reaches past a
    document end (the token is inside it), nothing new is dead (only occurrences ending at
    a document end mark a suffix, and there are none), the documents and left neighbours
    are those of the parent (which was neither pruned nor left-uniform), and its only child
    holds all the occurrences again. So growth goes straight to the first branch that is
    not such a link, with the same list. Comparing each occurrence with the first along the
    tokens (one sequential read per occurrence) replaces one random read per occurrence and
    branch."""
    ref = pos[lo]
    ref_end = doc_offsets[np.int64(doc[lo]) + 1]
    m = ref_end - ref - depth  # tokens the first occurrence has left after the phrase
    j = 0
    while j < m and rank_of[tokens[ref + depth + j]] < n_frequent:
        j += 1
    m = j
    for i in range(lo + 1, hi):
        if m == 0:
            break
        p = pos[i]
        left = doc_offsets[np.int64(doc[i]) + 1] - p - depth
        if left < m:
            m = left
        j = 0
        while j < m and tokens[p + depth + j] == tokens[ref + depth + j]:
            j += 1
        m = j
    return max(m, 0)


@njit(cache=True)
def _grow_kernel(tokens, rank_of, doc_offsets, pos, doc, seed_lo, seed_hi, sigma, min_length,
                 n_frequent, mask_skip, left_prune, dead_from):
    n_seeds = seed_lo.shape[0]
    stats = np.zeros(_N_STATS, dtype=np.int64)
    cnt = np.zeros(n_frequent, dtype=np.int64)      # occurrences per next token
    dcnt = np.zeros(n_frequent, dtype=np.int64)     # documents per next token
    last = np.full(n_frequent, -1, dtype=np.int64)  # last document counted per next token
    child_at = np.full(n_frequent, -1, dtype=np.int64)
    distinct = np.empty(n_frequent, dtype=np.int64)
    max_n = 1
    for s in range(n_seeds):
        max_n = max(max_n, seed_hi[s] - seed_lo[s])
    nxt = np.empty(max_n, dtype=np.int64)
    g_next = np.empty(max_n, dtype=np.int64)
    g_left = np.empty(max_n, dtype=np.int64)
    tmp_pos = np.empty(max_n, dtype=np.int64)
    tmp_doc = np.empty(max_n, dtype=np.int32)
    st_lo = np.empty(64, dtype=np.int64)
    st_hi = np.empty(64, dtype=np.int64)
    st_len = np.empty(64, dtype=np.int64)
    c_lo = np.empty(64, dtype=np.int64)
    c_hi = np.empty(64, dtype=np.int64)
    c_len = np.empty(64, dtype=np.int64)
    c_df = np.empty(64, dtype=np.int64)
    c_seed = np.empty(64, dtype=np.int64)
    n_cand = 0
    children = np.empty(n_frequent, dtype=np.int64)
    for s in range(n_seeds):
        sp = 0
        st_lo[0] = seed_lo[s]
        st_hi[0] = seed_hi[s]
        st_len[0] = 2
        sp = 1
        while sp > 0:
            sp -= 1
            lo = st_lo[sp]
            hi = st_hi[sp]
            L = st_len[sp]
            is_seed = L == 2
            stats[_VISITED] += 1
            stats[_SCANNED] += hi - lo
            need = max(min_length, L)
            # One pass: drop short/dead occurrences (stable, in place), count documents,
            # test the left neighbours, group by next token.
            w = lo
            docs_reach = 0
            docs_live = 0
            prev_reach = -1
            prev_live = -1
            uniform = left_prune
            left_tok = -1
            nd = 0
            n_end = 0
            # Gather the neighbours first: independent loads the CPU overlaps (the main loop
            # below would otherwise wait on one cache miss at a time).
            last_pos = tokens.shape[0] - 1
            for i in range(lo, hi):
                p = pos[i]
                g_next[i - lo] = rank_of[tokens[min(p + L, last_pos)]]
                g_left[i - lo] = tokens[max(p - 1, 0)]
            for i in range(lo, hi):
                p = pos[i]
                d = np.int64(doc[i])
                e = doc_offsets[d + 1]
                if p + need > e:
                    continue
                if d != prev_reach:
                    docs_reach += 1
                    prev_reach = d
                if mask_skip and p >= dead_from[d]:  # coverage.is_dead
                    stats[_DEAD] += 1
                    continue
                if d != prev_live:
                    docs_live += 1
                    prev_live = d
                pos[w] = p
                doc[w] = d
                if uniform:
                    if p == doc_offsets[d]:
                        uniform = False
                    else:
                        x = g_left[i - lo]
                        if rank_of[x] >= n_frequent:  # rare: distinct from every other word
                            uniform = False
                        elif left_tok < 0:
                            left_tok = x
                        elif x != left_tok:
                            uniform = False
                q = p + L
                if q < e:
                    t = g_next[i - lo]
                    if t < n_frequent:
                        if cnt[t] == 0:
                            distinct[nd] = t
                            nd += 1
                        cnt[t] += 1
                        if last[t] != d:
                            last[t] = d
                            dcnt[t] += 1
                        nxt[w - lo] = t
                    else:
                        nxt[w - lo] = _RARE
                else:
                    nxt[w - lo] = _END
                    n_end += 1
                w += 1
            hi = w
            n_children = 0
            pruned = False
            if docs_live < sigma:
                pruned = True
                if docs_reach < sigma:
                    stats[_SEEDS_SHORT if is_seed else _BR_SHORT] += 1
                else:
                    stats[_SEEDS_MASK if is_seed else _BR_MASK] += 1
            else:
                # P is frequent: its occurrences that run to the document end kill the rest
                # of their documents.
                if mask_skip and n_end > 0:
                    for i in range(lo, hi):
                        if nxt[i - lo] == _END:  # coverage.mark_frequent_suffix
                            d = np.int64(doc[i])
                            if pos[i] + 1 < dead_from[d]:
                                dead_from[d] = pos[i] + 1
                if uniform and hi > lo:
                    pruned = True
                    stats[_SEEDS_LEFT if is_seed else _BR_LEFT] += 1
                else:
                    if is_seed:
                        stats[_SEEDS_GROWN] += 1
                    for k in range(nd):
                        t = distinct[k]
                        if dcnt[t] >= sigma:
                            children[n_children] = t
                            n_children += 1
            if not pruned and n_children == 0 and L >= min_length:
                if n_cand == c_lo.shape[0]:
                    c_lo = _grown(c_lo, n_cand + 1)
                    c_hi = _grown(c_hi, n_cand + 1)
                    c_len = _grown(c_len, n_cand + 1)
                    c_df = _grown(c_df, n_cand + 1)
                    c_seed = _grown(c_seed, n_cand + 1)
                c_lo[n_cand] = lo
                c_hi[n_cand] = hi
                c_len[n_cand] = L
                c_df[n_cand] = docs_live
                c_seed[n_cand] = s
                n_cand += 1
            if n_children > 0:
                kids = np.sort(children[:n_children])
                if sp + n_children > st_lo.shape[0]:
                    st_lo = _grown(st_lo, sp + n_children)
                    st_hi = _grown(st_hi, sp + n_children)
                    st_len = _grown(st_len, sp + n_children)
                if n_children == 1:
                    t = kids[0]
                    k = lo
                    depth = L + 1
                    if cnt[t] != hi - lo:
                        for i in range(lo, hi):
                            if nxt[i - lo] == t:
                                pos[k] = pos[i]
                                doc[k] = doc[i]
                                k += 1
                    else:
                        k = hi
                        # Every live occurrence goes on with t: skip the chain of branches that
                        # would each keep all of them (see _pure_levels), counting them as visited.
                        jump = _pure_levels(tokens, rank_of, doc_offsets, pos, doc, lo, hi, depth, n_frequent)
                        stats[_VISITED] += jump
                        stats[_SCANNED] += jump * (hi - lo)
                        depth += jump
                    st_lo[sp] = lo
                    st_hi[sp] = k
                    st_len[sp] = depth
                    sp += 1
                else:
                    total = 0
                    for j in range(n_children):
                        child_at[kids[j]] = total
                        total += cnt[kids[j]]
                    for i in range(lo, hi):
                        t = nxt[i - lo]
                        if t >= 0 and child_at[t] >= 0:
                            j = child_at[t]
                            tmp_pos[j] = pos[i]
                            tmp_doc[j] = doc[i]
                            child_at[t] = j + 1
                    pos[lo:lo + total] = tmp_pos[:total]
                    doc[lo:lo + total] = tmp_doc[:total]
                    # Push in descending token order so the smallest is grown first.
                    for j in range(n_children - 1, -1, -1):
                        t = kids[j]
                        end = lo + child_at[t]
                        st_lo[sp] = end - cnt[t]
                        st_hi[sp] = end
                        st_len[sp] = L + 1
                        sp += 1
            for k in range(nd):
                t = distinct[k]
                cnt[t] = 0
                dcnt[t] = 0
                last[t] = -1
                child_at[t] = -1
    stats[_CANDS] = n_cand
    return (c_lo[:n_cand].copy(), c_hi[:n_cand].copy(), c_len[:n_cand].copy(),
            c_df[:n_cand].copy(), c_seed[:n_cand].copy(), stats)


def _check(tokens, rank_of, doc_offsets, pos, doc, seed_lo, seed_hi, dead_from, max_id=None):
    if tokens.dtype != np.uint32 or rank_of.dtype != np.uint32:
        raise ValueError(f"tokens/rank_of dtypes {tokens.dtype}/{rank_of.dtype}: must be uint32")
    largest = int(max_id) if max_id is not None else int(tokens.max()) if tokens.size else 0
    if tokens.size and rank_of.shape[0] <= largest:
        raise ValueError(f"rank_of{rank_of.shape}: needs an entry for every token id")
    if doc_offsets.dtype != np.int64:
        raise ValueError(f"doc_offsets dtype {doc_offsets.dtype}: must be int64")
    if pos.dtype != np.int64 or doc.dtype != np.int32 or pos.shape != doc.shape:
        raise ValueError("pos/doc: must be int64/int32 arrays of equal shape")
    if seed_lo.shape != seed_hi.shape:
        raise ValueError("seed_lo/seed_hi: must have equal shape")
    if dead_from.shape[0] != doc_offsets.shape[0] - 1:
        raise ValueError(f"dead_from{dead_from.shape}: must have one entry per document")


def grow_seeds(tokens, rank_of, doc_offsets, pos, doc, seed_lo, seed_hi, sigma: int, min_length: int,
               n_frequent: int, mask_skip: bool = True, left_prune: bool = True,
               dead_from: np.ndarray | None = None, inplace: bool = False, max_id: int | None = None) -> Candidates:
    """Grow every seed, in the given order, into its right-maximal candidates.

    tokens: uint32 (W,); rank_of: uint32 (V,) word-filter ranks (rare words: ``n_frequent``);
    doc_offsets: int64 (D+1,); pos/doc: int64/int32 (C,) occurrence buffer (rearranged in
    place if ``inplace``, else copied); seed_lo/seed_hi: int64 (S,) seed slices of it,
    processing order;
    dead_from: int64 (D,) frequent-suffix mask, updated in place (default: a fresh one);
    max_id: the largest token id if known (else one pass over tokens finds it).
    """
    if dead_from is None:
        dead_from = new_suffix_mask(doc_offsets)
    _check(tokens, rank_of, doc_offsets, pos, doc, seed_lo, seed_hi, dead_from, max_id)
    buf_pos = pos if inplace else pos.copy()
    buf_doc = doc if inplace else doc.copy()
    lo, hi, length, df, seed, stats = _grow_kernel(
        tokens, rank_of, doc_offsets, buf_pos, buf_doc,
        np.ascontiguousarray(seed_lo, dtype=np.int64), np.ascontiguousarray(seed_hi, dtype=np.int64),
        np.int64(sigma), np.int64(min_length), np.int64(n_frequent),
        bool(mask_skip), bool(left_prune), dead_from)
    return Candidates(buf_pos, lo, hi, length, df, seed, dict(zip(STAT_NAMES, (int(v) for v in stats))))


def grow_seeds_reference(tokens, rank_of, doc_offsets, pos, doc, seed_lo, seed_hi, sigma: int, min_length: int,
                         n_frequent: int, mask_skip: bool = True, left_prune: bool = True,
                         dead_from: np.ndarray | None = None) -> Candidates:
    """Readable twin of :func:`grow_seeds`: same rules and order, Python lists and dicts.

    Candidate slices point into a buffer built from the candidates' occurrence lists, so
    ``occurrences(i)`` agrees with the kernel's even though the layout differs.
    """
    if dead_from is None:
        dead_from = new_suffix_mask(doc_offsets)
    _check(tokens, rank_of, doc_offsets, pos, doc, seed_lo, seed_hi, dead_from)
    tok = tokens.tolist()
    rank = rank_of.tolist()
    offs = doc_offsets.tolist()
    stats = dict.fromkeys(STAT_NAMES, 0)
    found: list[tuple[list[int], int, int, int]] = []  # (occurrences, length, df, seed)

    def n_docs(occ):
        return len({d for _, d in occ})

    for s, (a, b) in enumerate(zip(seed_lo.tolist(), seed_hi.tolist())):
        stack = [(list(zip(pos[a:b].tolist(), doc[a:b].tolist())), 2)]
        while stack:
            occ, length = stack.pop()
            is_seed = length == 2
            stats["branches_visited"] += 1
            stats["occurrences_scanned"] += len(occ)
            reach = [(p, d) for p, d in occ if p + max(min_length, length) <= offs[d + 1]]
            live = reach
            if mask_skip:
                live = [(p, d) for p, d in reach if not is_dead(dead_from, d, p)]
                stats["occurrences_dropped_dead"] += len(reach) - len(live)
            if n_docs(live) < sigma:
                if n_docs(reach) < sigma:
                    key = "seeds_too_short" if is_seed else "branches_too_short"
                else:
                    key = "seeds_skipped_by_mask" if is_seed else "branches_pruned_by_mask"
                stats[key] += 1
                continue
            if mask_skip:
                for p, d in live:
                    if p + length == offs[d + 1]:
                        mark_frequent_suffix(dead_from, d, p)
            # Document start and rare words count as distinct left neighbours.
            one_left = (all(p > offs[d] and rank[tok[p - 1]] < n_frequent for p, d in live)
                        and len({tok[p - 1] for p, _ in live}) == 1)
            if left_prune and one_left:
                stats["seeds_pruned_by_left_neighbour" if is_seed else "branches_pruned_by_left_neighbour"] += 1
                continue
            if is_seed:
                stats["seeds_grown"] += 1
            groups: dict[int, list] = {}
            for p, d in live:
                if p + length < offs[d + 1] and rank[tok[p + length]] < n_frequent:
                    groups.setdefault(rank[tok[p + length]], []).append((p, d))
            kids = sorted(t for t, g in groups.items() if n_docs(g) >= sigma)
            if not kids and length >= min_length:
                found.append(([p for p, _ in live], length, n_docs(live), s))
            for t in reversed(kids):
                stack.append((groups[t], length + 1))
    stats["candidates"] = len(found)
    flat = [p for occ, *_ in found for p in occ]
    bounds = np.cumsum([0] + [len(occ) for occ, *_ in found]).astype(np.int64)
    col = lambda k: np.asarray([f[k] for f in found], dtype=np.int64)  # noqa: E731
    return Candidates(np.asarray(flat, dtype=np.int64), bounds[:-1], bounds[1:], col(1), col(2), col(3), stats)
