"""Exact MCFP miner over a suffix array (Fischer-Heun-Kramer style), ``--engine fhk``.

Stages (each timed in ``MiningResult.stats``):

0. text: the corpus as one text of segments, each followed by a separator
   (:mod:`bloomspan.engine.mining.suffix_array`). By default (``prune=True``, exact) tokens
   found in fewer than sigma documents cut segments and runs shorter than
   ``min_length`` are left out, so only text that can hold an answer is indexed.
1. suffix array of that text, sorted by libdivsufsort.
2. lcp: Kasai's LCP array, never matching across a separator, plus the document of
   every suffix.
3. traversal: one bottom-up pass over the lcp-intervals whose lcp value is at least
   ``min_length`` (smaller values are clamped to 0, so shorter intervals are never
   built). An interval [lb, rb] with lcp value L is the set of suffixes starting with
   a phrase P of length L; ``occurrences(P) = rb - lb + 1``. Its document frequency
   comes from the classic duplicate count: for SA position k whose previous suffix
   of the same document sits at k' (``k' = prev[k]``), the pair (k', k) lies in every
   interval containing both, i.e. in the subtree of their lowest common interval, so
   ``df = size - #pairs inside``. The lowest common interval is the deepest interval
   on the traversal stack whose left bound is <= k' (binary search): O(N log depth).
   Right-maximality (no ``Px`` frequent) means no child interval is frequent; such
   "lowest frequent" intervals are disjoint, so their total size is at most N.
4. maximality: for each of those candidates, the left extension ``xP`` is frequent
   iff the suffixes of the interval preceded by token x come from >= sigma documents;
   counted per interval by sorting (left token, document) keys. O(N log N) in total.
5. occurrences: every candidate's suffixes mapped back to corpus positions (each phrase's
   ``starts``); coverage: a +1/-1 difference array over them.

Peak memory is 18-28 bytes per indexed token: during the sort, the text (4), its
byte form (w = 1..4 bytes per symbol), libdivsufsort's byte suffix array (4w) and the
suffix array (4); during Kasai, text, suffix array, rank, LCP and suffix documents
(4 each). The phrases' occurrences add 16 bytes per occurrence (flat, then per phrase),
coverage 5 bytes per corpus token. ``stats["peak_arrays_bytes"]``
reports the estimate for a run.

Shares nothing with the BloomSpan modules except the corpus check, phrases and config.
"""
from __future__ import annotations

import logging
import time

import numpy as np
from numba import njit

from .config import MiningConfig
from .corpus import validate_corpus
from .phrases import MiningResult, Phrase, sort_phrases
from .suffix_array import SEPARATOR, build_text, dense_ids, kasai_lcp, prune_rare_tokens, suffix_array

logger = logging.getLogger(__name__)


# ------------------------------------------------------------------ traversal
@njit(cache=True)
def lowest_frequent_intervals(lcp, docs, n_docs, sigma, min_length):
    """Bottom-up lcp-interval traversal; the frequent intervals with no frequent child.

    lcp: int32 (N,) from :func:`kasai_lcp`; docs: int32 (N,), document of each suffix
    (-1 for a separator suffix). Intervals with lcp value < min_length are not built.
    Returns (lb int64 (C,), rb int64 (C,), length int64 (C,), df int64 (C,),
    intervals_visited int): candidates in increasing ``rb``.
    """
    n = lcp.shape[0]
    # Stack depth <= number of distinct lcp values >= min_length, plus the root. Sized
    # up front: arrays reassigned inside the loop would cost refcounting every step.
    depth = 2
    for i in range(n):
        if lcp[i] >= min_length and lcp[i] - min_length + 2 > depth:
            depth = lcp[i] - min_length + 2
    st_lcp = np.zeros(depth, dtype=np.int64)
    st_lb = np.zeros(depth, dtype=np.int64)
    st_dup = np.zeros(depth, dtype=np.int64)  # pairs (prev[k], k) attributed to the subtree
    st_fchild = np.zeros(depth, dtype=np.bool_)  # some child interval is frequent
    top = 0  # entry 0 is the root (lcp 0), never popped
    last_seen = np.full(max(n_docs, 1), -1, dtype=np.int64)
    # an empty, typed list of (lb, rb, length, df); appends are rare (candidates only)
    found = [(np.int64(0), np.int64(0), np.int64(0), np.int64(0)) for _ in range(0)]
    visited = 0
    for i in range(n + 1):
        cur = 0
        if i < n and lcp[i] >= min_length:
            cur = lcp[i]
        lb = i - 1
        carry_dup = 0
        carry_freq = False
        while cur < st_lcp[top]:
            ilb = st_lb[top]
            df = (i - ilb) - st_dup[top]
            frequent = df >= sigma
            if frequent and not st_fchild[top]:
                found.append((ilb, np.int64(i - 1), st_lcp[top], df))
            visited += 1
            dup = st_dup[top]
            top -= 1
            lb = ilb
            if cur <= st_lcp[top]:  # the new top is the parent
                st_dup[top] += dup
                st_fchild[top] = st_fchild[top] or frequent
            else:  # the interval pushed below is the parent
                carry_dup = dup
                carry_freq = frequent
        if cur > st_lcp[top]:
            top += 1
            st_lcp[top] = cur
            st_lb[top] = lb
            st_dup[top] = carry_dup
            st_fchild[top] = carry_freq
        if i == n:
            break
        d = docs[i]
        if d < 0:
            continue
        prev = last_seen[d]
        last_seen[d] = i
        if prev < 0 or top == 0:
            continue
        # deepest stack entry whose left bound is <= prev: the lowest common interval
        if st_lb[top] <= prev:
            j = top
        else:
            lo = 0  # st_lb[lo] <= prev (root lb is 0)
            hi = top  # st_lb[hi] > prev
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if st_lb[mid] <= prev:
                    lo = mid
                else:
                    hi = mid
            j = lo
        if j > 0:
            st_dup[j] += 1
    count = len(found)
    c_lb = np.empty(count, dtype=np.int64)
    c_rb = np.empty(count, dtype=np.int64)
    c_len = np.empty(count, dtype=np.int64)
    c_df = np.empty(count, dtype=np.int64)
    for c in range(count):
        c_lb[c], c_rb[c], c_len[c], c_df[c] = found[c]
    return c_lb, c_rb, c_len, c_df, visited


def lowest_frequent_intervals_reference(lcp, docs, sigma, min_length):
    """Plain twin: build every lcp-interval around each position, df by a set.

    Returns (list of (lb, rb, length, df) in increasing lb, number of intervals).
    """
    n = len(lcp)
    clamped = [int(v) if v >= min_length else 0 for v in lcp]
    intervals = {}  # (lb, rb) -> lcp value
    for k in range(1, n):
        value = clamped[k]
        if value == 0:
            continue
        lb = k - 1
        while lb > 0 and clamped[lb] >= value:
            lb -= 1
        rb = k
        while rb + 1 < n and clamped[rb + 1] >= value:
            rb += 1
        intervals[(lb, rb)] = value
    df = {key: len({int(docs[k]) for k in range(key[0], key[1] + 1)}) for key in intervals}
    result = []
    for (lb, rb), value in sorted(intervals.items()):
        if df[(lb, rb)] < sigma:
            continue
        # frequency is inherited upwards, so "a frequent child" = "a frequent interval inside"
        inner_frequent = any(
            df[other] >= sigma and other != (lb, rb) and lb <= other[0] and other[1] <= rb
            for other in intervals
        )
        if not inner_frequent:
            result.append((lb, rb, value, df[(lb, rb)]))
    return result, len(intervals)


# ------------------------------------------------------------------ left maximality
@njit(cache=True)
def left_maximal(text, sa, docs, c_lb, c_rb, n_docs, sigma):
    """Which candidates have no frequent left extension ``xP``.

    text: int32 (N,); sa: int32/int64 (N,); docs: int32 (N,); c_lb, c_rb: int64 (C,)
    disjoint SA intervals. Returns bool (C,). The suffixes of an interval preceded by
    token x (not a separator, not the text start) are the occurrences of xP; xP is
    frequent iff they come from >= sigma documents.
    """
    m = c_lb.shape[0]
    keep = np.ones(m, dtype=np.bool_)
    widest = 0
    for c in range(m):
        widest = max(widest, c_rb[c] - c_lb[c] + 1)
    keys = np.empty(widest, dtype=np.int64)
    stride = np.int64(max(n_docs, 1))
    for c in range(m):
        cnt = 0
        for k in range(c_lb[c], c_rb[c] + 1):
            p = sa[k]
            if p > 0 and text[p - 1] != SEPARATOR:
                keys[cnt] = np.int64(text[p - 1]) * stride + docs[k]
                cnt += 1
        if cnt < sigma:
            continue
        ordered = keys[:cnt]
        ordered.sort()
        run_left = np.int64(-1)
        run_docs = 0
        for j in range(cnt):
            if j > 0 and ordered[j] == ordered[j - 1]:
                continue  # same left token, same document
            left = ordered[j] // stride
            if left != run_left:
                run_left = left
                run_docs = 0
            run_docs += 1
            if run_docs >= sigma:
                keep[c] = False
                break
    return keep


def left_maximal_reference(text, sa, docs, c_lb, c_rb, sigma):
    keep = []
    for lb, rb in zip(c_lb, c_rb):
        docs_by_left: dict[int, set[int]] = {}
        for k in range(int(lb), int(rb) + 1):
            p = int(sa[k])
            if p > 0 and int(text[p - 1]) != SEPARATOR:
                docs_by_left.setdefault(int(text[p - 1]), set()).add(int(docs[k]))
        keep.append(all(len(s) < sigma for s in docs_by_left.values()))
    return np.array(keep, dtype=bool)


@njit(cache=True)
def phrase_symbols(text, sa, lbs, lengths):
    """The symbols of each interval's phrase, concatenated.

    text: int32 (N,); sa: (N,); lbs, lengths: int64 (C,).
    Returns (symbols int32 (sum(lengths),), starts int64 (C+1,)): phrase c is
    ``symbols[starts[c]:starts[c+1]]`` = ``text[sa[lbs[c]] : sa[lbs[c]] + lengths[c]]``.
    """
    m = lbs.shape[0]
    starts = np.zeros(m + 1, dtype=np.int64)
    for c in range(m):
        starts[c + 1] = starts[c] + lengths[c]
    symbols = np.empty(starts[m], dtype=np.int32)
    for c in range(m):
        p = sa[lbs[c]]
        for j in range(lengths[c]):
            symbols[starts[c] + j] = text[p + j]
    return symbols, starts


def phrase_symbols_reference(text, sa, lbs, lengths) -> list[list[int]]:
    return [[int(x) for x in text[int(sa[lb]):int(sa[lb]) + int(n)]] for lb, n in zip(lbs, lengths)]


# ------------------------------------------------------------------ occurrences and coverage
@njit(cache=True)
def interval_starts(sa, lbs, rbs, seg_text_start, seg_corpus_start):
    """Corpus start positions of every occurrence of the given intervals' phrases.

    sa: int32/int64 (N,); lbs, rbs: int64 (C,); seg_text_start, seg_corpus_start: int64
    (S,). The suffix sa[k] lies in the last segment starting at or before it (binary
    search), which maps it back to a corpus position. Returns (starts int64 (K,), bounds
    int64 (C+1,)): interval c's occurrences are ``starts[bounds[c]:bounds[c+1]]``, ascending.
    """
    m = lbs.shape[0]
    bounds = np.zeros(m + 1, dtype=np.int64)
    for c in range(m):
        bounds[c + 1] = bounds[c] + rbs[c] - lbs[c] + 1
    starts = np.empty(bounds[m], dtype=np.int64)
    n_seg = seg_text_start.shape[0]
    for c in range(m):
        w = bounds[c]
        for k in range(lbs[c], rbs[c] + 1):
            p = sa[k]
            lo = 0
            hi = n_seg
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if seg_text_start[mid] <= p:
                    lo = mid
                else:
                    hi = mid
            starts[w] = seg_corpus_start[lo] + (p - seg_text_start[lo])
            w += 1
        starts[bounds[c]:bounds[c + 1]].sort()
    return starts, bounds


def interval_starts_reference(sa, lbs, rbs, seg_text_start, seg_corpus_start) -> list[list[int]]:
    """Plain twin of :func:`interval_starts`: one sorted list of corpus positions per interval."""
    seg_text = [int(v) for v in seg_text_start]
    out = []
    for lb, rb in zip(lbs, rbs):
        found = []
        for k in range(int(lb), int(rb) + 1):
            p = int(sa[k])
            seg = max(i for i, t in enumerate(seg_text) if t <= p)
            found.append(int(seg_corpus_start[seg]) + p - seg_text[seg])
        out.append(sorted(found))
    return out


@njit(cache=True)
def coverage_from_starts(starts, bounds, lengths, n_tokens):
    """bool (W,): True inside any occurrence; interval c's are ``starts[bounds[c]:bounds[c+1]]``
    (int64), each ``lengths[c]`` long. A +1/-1 difference array over corpus positions."""
    delta = np.zeros(n_tokens + 1, dtype=np.int32)
    for c in range(lengths.shape[0]):
        for j in range(bounds[c], bounds[c + 1]):
            delta[starts[j]] += 1
            delta[starts[j] + lengths[c]] -= 1
    covered = np.empty(n_tokens, dtype=np.bool_)
    running = 0
    for i in range(n_tokens):
        running += delta[i]
        covered[i] = running > 0
    return covered


# ------------------------------------------------------------------ entry point
def mine_fhk(
    tokens: np.ndarray, doc_offsets: np.ndarray, config: MiningConfig, *, prune: bool = True
) -> MiningResult:
    """All maximal contiguous frequent phrases, exactly, via suffix + LCP arrays.

    tokens: uint32 (W,); doc_offsets: int64 (D+1,); uses ``config.sigma`` and
    ``config.min_length``. ``prune`` (exact, default on) indexes only runs of tokens
    that each occur in >= sigma documents and are >= min_length long; ``prune=False``
    indexes the whole corpus, as the textbook FHK does. Peak memory: 18-28 bytes per
    indexed token, plus 5 bytes per corpus token for the coverage.
    """
    tokens, doc_offsets = validate_corpus(tokens, doc_offsets)
    sigma, min_length = config.sigma, config.min_length
    n_tokens, n_docs = int(tokens.size), int(doc_offsets.size - 1)
    stats: dict = {"engine": "fhk", "tokens_mined": n_tokens, "docs_mined": n_docs, "pruned": bool(prune)}
    t_start = time.perf_counter()

    t0 = time.perf_counter()
    ranks, vocab = dense_ids(tokens)
    stats["vocab_size"] = int(vocab.size)
    if prune:
        ranks, vocab = prune_rare_tokens(ranks, vocab, doc_offsets, sigma)
    text, seg_doc, seg_text_start, seg_corpus_start = build_text(ranks, doc_offsets, min_length if prune else 1)
    peak = ranks.nbytes + text.nbytes + vocab.nbytes + 20 * seg_doc.size
    del ranks
    stats["seconds_text"] = time.perf_counter() - t0
    stats["indexed_vocab_size"] = int(vocab.size)
    stats["text_length"] = int(text.size)
    stats["segments"] = int(seg_doc.size)

    t0 = time.perf_counter()
    sa, width, sa_peak = suffix_array(text)
    seg_bytes = seg_doc.nbytes + seg_text_start.nbytes + seg_corpus_start.nbytes
    base = vocab.nbytes + seg_bytes
    peak = max(peak, base + text.nbytes + sa_peak)
    stats["seconds_suffix_array"] = time.perf_counter() - t0
    stats["symbol_bytes"] = width

    t0 = time.perf_counter()
    lcp, docs = kasai_lcp(text, sa, seg_doc)
    # inside kasai_lcp a rank array of sa's size is alive too
    peak = max(peak, base + text.nbytes + 2 * sa.nbytes + lcp.nbytes + docs.nbytes)
    stats["seconds_lcp"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    c_lb, c_rb, c_len, c_df, visited = lowest_frequent_intervals(lcp, docs, n_docs, sigma, min_length)
    peak = max(peak, base + text.nbytes + sa.nbytes + lcp.nbytes + docs.nbytes + 8 * max(n_docs, 1))
    del lcp
    stats["seconds_traversal"] = time.perf_counter() - t0
    stats["intervals_visited"] = int(visited)
    stats["candidates"] = int(c_lb.size)

    t0 = time.perf_counter()
    keep = left_maximal(text, sa, docs, c_lb, c_rb, n_docs, sigma)
    del docs
    c_lb, c_rb, c_len, c_df = c_lb[keep], c_rb[keep], c_len[keep], c_df[keep]
    symbols, starts = phrase_symbols(text, sa, c_lb, c_len)
    ids = vocab[symbols - 1].tolist()
    starts = starts.tolist()
    del text
    occ_starts, occ_bounds = interval_starts(sa, c_lb, c_rb, seg_text_start, seg_corpus_start)
    peak = max(peak, sa.nbytes + seg_bytes + occ_starts.nbytes)
    del sa
    phrases = sort_phrases(
        Phrase(tokens=tuple(ids[starts[c]:starts[c + 1]]), df=df, occurrences=rb - lb + 1,
               starts=occ_starts[occ_bounds[c]:occ_bounds[c + 1]].copy())
        for c, (lb, rb, df) in enumerate(zip(c_lb.tolist(), c_rb.tolist(), c_df.tolist()))
    )
    stats["seconds_maximality"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    coverage = coverage_from_starts(occ_starts, occ_bounds, c_len, n_tokens)
    peak = max(peak, 2 * occ_starts.nbytes + seg_bytes + 5 * (n_tokens + 1))
    stats["seconds_coverage"] = time.perf_counter() - t0

    stats["phrases"] = len(phrases)
    stats["covered_tokens"] = int(coverage.sum())
    stats["peak_arrays_bytes"] = int(peak)
    stats["seconds_total"] = time.perf_counter() - t_start
    logger.info(
        "fhk: %d tokens (%d indexed), %d docs -> %d phrases (%d candidates, %d intervals) in %.2fs",
        n_tokens, stats["text_length"], n_docs, len(phrases), stats["candidates"], visited, stats["seconds_total"],
    )
    return MiningResult(phrases=phrases, coverage=coverage, stats=stats)
