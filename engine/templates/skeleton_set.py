"""Many page skeletons walked over one batch of pages in one kernel call.

:meth:`.page_skeleton.PageSkeleton.cover_token_lines` walks the pages of one skeleton: at
ingest a batch of a thousand pages from a hundred sites called it once per skeleton, and its
fixed cost per call (hashing, sorting, a dozen array passes) outweighed the walks. A
:class:`SkeletonSet` holds every skeleton's sorted lookup tables back to back (one segment per
skeleton, :func:`segment_lookup`) and :meth:`SkeletonSet.cover_walks` walks any list of
(page, skeleton) pairs at once: the line hashes, echoes and repeats are computed once per
batch line (they depend on the page only), the class lookups once per walked line, and
:func:`skeleton_set_kernel` runs :func:`.page_skeleton.walk_page` for each walk with its own
skeleton's pairs and limits. The result equals the union of each skeleton's
``cover_token_lines`` on its pages (tests/unit/engine/templates/test_skeleton_set.py).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from .blocks import span_hashes
from .page_skeleton import (
    _ANCHOR,
    _BOX_SEED,
    _FREQUENT,
    _SHARED,
    _SITE_ECHO,
    PREFIX_LENGTHS,
    PageSkeleton,
    SkeletonLines,
    echo_flags,
    next_same_type,
    skeleton_limits,
    walk_page,
)


@njit(cache=True, nogil=True)
def segment_lookup(keys, values, offsets, segment, query, default, out):
    """``out[i]`` (int64) = ``values[j]`` where ``keys[j] == query[i]`` within segment
    ``segment[i]`` (``keys[offsets[s]:offsets[s+1]]``, sorted uint64), else ``default[i]``."""
    for i in range(query.shape[0]):
        lo, hi = offsets[segment[i]], offsets[segment[i] + 1]
        q = query[i]
        while lo < hi:
            mid = (lo + hi) >> 1
            if keys[mid] < q:
                lo = mid + 1
            else:
                hi = mid
        out[i] = values[lo] if lo < offsets[segment[i] + 1] and keys[lo] == q else default[i]


def segment_lookup_reference(tables: Sequence[dict], segment, query, default) -> np.ndarray:
    """Plain twin of :func:`segment_lookup`: ``tables[s]`` maps a key to its value."""
    return np.asarray([tables[s].get(int(q), int(d)) for s, q, d in zip(segment, query, default)], dtype=np.int64)


@njit(cache=True, nogil=True)
def skeleton_set_kernel(walk_skeleton, lines, pair_keys, pair_offsets, n_cls, limits, out):
    """:func:`.page_skeleton.skeleton_kernel` for walks of different skeletons: walk ``w`` is
    page ``w`` of ``lines.doc_blocks`` walked with skeleton ``walk_skeleton[w]``, whose sorted
    pair keys are ``pair_keys[pair_offsets[k]:pair_offsets[k+1]]``, class count ``n_cls[k]`` and
    limits row ``limits[k]`` (int64 (S, 5), :class:`.page_skeleton.SkeletonLimits` order)."""
    doc_blocks = lines.doc_blocks
    for w in range(walk_skeleton.shape[0]):
        b0, b1 = doc_blocks[w], doc_blocks[w + 1]
        if b1 <= b0:
            continue
        k = walk_skeleton[w]
        walk_page(b0, b1, lines, pair_keys[pair_offsets[k]:pair_offsets[k + 1]], n_cls[k], limits[k, 0],
                  limits[k, 1], limits[k, 2], limits[k, 3], limits[k, 4], out)


def _segments(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keys = np.concatenate([np.zeros(0, np.uint64), *(k for k, _ in parts)]).astype(np.uint64)
    values = np.concatenate([np.zeros(0, np.int64), *(v for _, v in parts)]).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum([k.shape[0] for k, _ in parts])]).astype(np.int64)
    return keys, values, offsets


def _lookup(table, segment: np.ndarray, query: np.ndarray, default: np.ndarray) -> np.ndarray:
    out = np.empty(query.shape[0], dtype=np.int64)
    segment_lookup(*table, segment.astype(np.int64), query.astype(np.uint64), default.astype(np.int64), out)
    return out


class SkeletonSet:
    """The lookup tables of skeletons ``skeletons`` (integer token ids,
    :meth:`.page_skeleton.PageSkeleton.map_tokens`), skeleton ``k`` being segment ``k``."""

    def __init__(self, skeletons: Sequence[PageSkeleton]):
        self.skeletons = tuple(skeletons)
        tables = [k.kernel_tables for k in self.skeletons]
        self._flags = _segments([(t[0], t[1]) for t in tables])
        self._line_cls = _segments([(t[2], t[3]) for t in tables])
        self._prefix_cls = _segments([(t[4], t[5]) for t in tables])
        self._pair_keys = np.concatenate([np.zeros(0, np.int64), *(t[6] for t in tables)]).astype(np.int64)
        self._pair_offsets = np.concatenate([[0], np.cumsum([t[6].shape[0] for t in tables])]).astype(np.int64)
        self._n_cls = np.asarray([t[7] for t in tables], dtype=np.int64)
        self._limits = np.asarray([tuple(skeleton_limits(k.params)) for k in self.skeletons],
                                  dtype=np.int64).reshape(len(self.skeletons), 5)

    def __len__(self) -> int:
        return len(self.skeletons)

    def cover_walks(self, tokens: np.ndarray, line_starts: np.ndarray, line_ends: np.ndarray,
                    page_lines: np.ndarray, detected: np.ndarray, single_use: np.ndarray,
                    walk_page_of: np.ndarray, walk_skeleton: np.ndarray) -> np.ndarray:
        """bool (L,): the batch lines some walk covers. Lines are ``tokens[line_starts[i]:
        line_ends[i]]`` (uint32 ids in the skeletons' token space), page p's lines
        ``page_lines[p]:page_lines[p+1]`` (int64 (P+1,)); ``detected`` / ``single_use`` bool (L,)
        as in :meth:`~.page_skeleton.PageSkeleton.cover_token_lines`; walk w walks page
        ``walk_page_of[w]`` with skeleton ``walk_skeleton[w]`` (int64 (W,) each)."""
        tokens = np.ascontiguousarray(tokens, dtype=np.uint32)
        starts = np.asarray(line_starts, dtype=np.int64)
        ends = np.asarray(line_ends, dtype=np.int64)
        page_lines = np.asarray(page_lines, dtype=np.int64)
        walk_page_of = np.asarray(walk_page_of, dtype=np.int64)
        walk_skeleton = np.asarray(walk_skeleton, dtype=np.int64)
        n = starts.shape[0]
        covered = np.zeros(n, dtype=bool)
        if walk_page_of.shape[0] == 0 or n == 0:
            return covered
        lengths = ends - starts
        # Per batch line, whatever skeleton walks it: its hash, prefix hashes, echoes in its page.
        h = np.empty(n, dtype=np.uint64)
        with np.errstate(over="ignore"):
            span_hashes(tokens, starts, ends, h)
        prefix = {}
        for p in PREFIX_LENGTHS:
            hp = np.zeros(n, dtype=np.uint64)
            longer = np.flatnonzero(lengths > p)
            part = np.empty(longer.shape[0], dtype=np.uint64)
            with np.errstate(over="ignore"):
                span_hashes(tokens, starts[longer], starts[longer] + p, part)
            hp[longer] = part
            prefix[p] = hp
        types = np.unique(h, return_inverse=True)[1].astype(np.int64).reshape(-1)
        line_page = np.repeat(np.arange(page_lines.shape[0] - 1, dtype=np.int64), np.diff(page_lines))
        next_same = next_same_type(types, line_page)
        before, after, repeats = echo_flags(types, line_page, next_same)
        # The walked lines: each walk's page, in walk order.
        counts = page_lines[walk_page_of + 1] - page_lines[walk_page_of]
        walk_lines = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        at = np.repeat(page_lines[walk_page_of] - walk_lines[:-1], counts) + np.arange(int(walk_lines[-1]))
        seg = np.repeat(walk_skeleton, counts)
        hw, single, det, lw = h[at], np.asarray(single_use, bool)[at], np.asarray(detected, bool)[at], lengths[at]
        other = self._n_cls[seg] - 1
        flags = _lookup(self._flags, seg, hw, np.zeros(seg.shape[0], np.int64))
        cls = np.full(seg.shape[0], -1, dtype=np.int64)
        anchor = np.flatnonzero((flags & _ANCHOR != 0) & ~single)
        cls[anchor] = _lookup(self._line_cls, seg[anchor], hw[anchor], other[anchor])
        echo_length = self._limits[seg, 1]
        for p in PREFIX_LENGTHS:
            cand = np.flatnonzero((cls < 0) & ~single & (lw > p) & (lw <= echo_length))
            cls[cand] = _lookup(self._prefix_cls, seg[cand], prefix[p][at[cand]], np.full(cand.shape[0], -1))
        late = np.flatnonzero((cls < 0) & det)
        cls[late] = _lookup(self._line_cls, seg[late], hw[late], other[late])
        ns = next_same[at]
        next_walked = np.where(ns >= 0, ns - at + np.arange(at.shape[0]), -1).astype(np.int64)
        lines = SkeletonLines(doc_blocks=walk_lines, cls=cls, block_len=lw, rare=(flags & _FREQUENT) == 0,
                              echo_before=before[at], echo_after=after[at], repeats_previous=repeats[at],
                              elsewhere=(flags & _SITE_ECHO) != 0, detected=det, next_same=next_walked,
                              shared=(flags & _SHARED) != 0, box_seed=(flags & _BOX_SEED) != 0)
        out = np.zeros(at.shape[0], dtype=bool)
        skeleton_set_kernel(walk_skeleton, lines, self._pair_keys, self._pair_offsets, self._n_cls, self._limits, out)
        covered[at[out]] = True
        return covered
