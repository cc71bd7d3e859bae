"""The coverage mask, and the exact part of the article's mask-based seed skipping (Part 4, "The coverage mask").

Coverage mask
-------------
``coverage[i]`` is True iff token ``i`` lies inside an occurrence of a returned phrase. It is
built once, from the final phrases (:func:`coverage_mask`), not accumulated while mining:
a phrase that is later absorbed by a longer one may have occurrences the longer one does
not have ("b c" in "d b c" when "a b c" is the maximal phrase), and those positions must not
stay marked.

Why the article's seed skipping is not exact
--------------------------------------------
The article skips a seed when all of its occurrences are already marked. That loses
maximal phrases. sigma = 2, min_length = 3, ids a < c < x < ...:

    a x y z b | c x y z d | a x y e | c x y f | a x g | c x h | a x i | c x j

Seeds "a x" and "c x" (df 4) tie with "x y" (df 4) and come first by token order; they grow
into the maximal "a x y" and "c x y", whose occurrences mark every occurrence of "x y". The
article skips "x y" and loses "x y z" (df 2; left neighbours a/c and right neighbours b/d
each in one document, so it is maximal). Coverage says where phrases are, not that a new
phrase lies inside one of them; it cannot prove non-maximality. The same holds when a
maximal phrase is covered piecewise by two others ("a x y" and "y z b" over "a x y z b").
Regression: ``tests/data/mask_skip_seed_covered.json``.

What is exact: frequent document suffixes
-----------------------------------------
Let ``Q`` be a frequent phrase with an occurrence ``[q, e)`` that ends at the end of its
document. Any phrase ``M`` occurring at a position ``p`` with ``q < p < e`` lies inside that
occurrence (it cannot run past the document end), so ``M`` is a proper substring of ``Q``,
hence not maximal. So once growth meets a frequent phrase occurrence reaching its
document's end, every later position of that document is *dead*: no maximal phrase
occurs there. Per document the dead positions form a suffix, so the "mask" is one integer
per document, ``dead_from[d]`` = ``q + 1`` for the smallest such ``q`` seen so far.

Growth (engine/mining/grow.py) drops dead occurrences from seeds and branches. A maximal phrase has
no dead occurrence, so its occurrence list, df and right extensions are unaffected; any
other phrase whose df drops below sigma can only lead to non-maximal phrases. A seed whose
live occurrences span fewer than sigma documents is skipped ("seeds skipped by mask"). This
is the article's mask skip restricted to occurrences inside a frequent suffix: exactly the
boilerplate case it targets (footers), without the piecewise-coverage failure.
"""
from __future__ import annotations

import numpy as np
from numba import njit


def new_suffix_mask(doc_offsets: np.ndarray) -> np.ndarray:
    """int64 (D,): ``dead_from[d]`` = end of document d (nothing dead yet)."""
    return np.ascontiguousarray(doc_offsets[1:], dtype=np.int64).copy()


def is_dead(dead_from: np.ndarray, d: int, p: int) -> bool:
    """True if position ``p`` of document ``d`` lies strictly inside a frequent suffix.

    The growth kernel inlines this test (numba's cache does not notice when a function it
    calls from another module changes, so kernels only call njit functions of their own
    module); :func:`bloomspan.engine.mining.grow.grow_seeds_reference` calls it.
    """
    return p >= dead_from[d]


def mark_frequent_suffix(dead_from: np.ndarray, d: int, q: int) -> None:
    """A frequent phrase occurs at ``q`` and runs to the end of document ``d``."""
    if q + 1 < dead_from[d]:
        dead_from[d] = q + 1


@njit(cache=True)
def _coverage_kernel(n_tokens, starts, lengths):
    # Sort the occurrences, merge overlapping ones, mark each merged run once:
    # O(K log K + covered tokens); the zeroed mask itself costs no pass over W.
    covered = np.zeros(n_tokens, dtype=np.bool_)
    order = np.argsort(starts)
    run_lo = np.int64(0)
    run_hi = np.int64(0)  # empty run
    for k in range(order.shape[0]):
        s = starts[order[k]]
        e = s + lengths[order[k]]
        if s > run_hi:
            covered[run_lo:run_hi] = True
            run_lo = s
            run_hi = e
        elif e > run_hi:
            run_hi = e
    covered[run_lo:run_hi] = True
    return covered


def _check(n_tokens, starts, lengths):
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    lengths = np.ascontiguousarray(lengths, dtype=np.int64)
    if starts.shape != lengths.shape:
        raise ValueError(f"starts{starts.shape} and lengths{lengths.shape}: must have the same shape")
    if starts.size and (starts.min() < 0 or (starts + lengths).max() > n_tokens or lengths.min() < 1):
        raise ValueError(f"occurrences must lie inside [0, {n_tokens}) and have length >= 1")
    return starts, lengths


def coverage_mask(n_tokens: int, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """bool (W,): True inside any occurrence ``[starts[i], starts[i] + lengths[i])``.

    starts, lengths: int64 (K,), one entry per occurrence.
    """
    starts, lengths = _check(n_tokens, starts, lengths)
    return _coverage_kernel(np.int64(n_tokens), starts, lengths)


def coverage_mask_reference(n_tokens: int, starts, lengths) -> np.ndarray:
    """Readable twin of :func:`coverage_mask`: mark every token of every occurrence."""
    starts, lengths = _check(n_tokens, starts, lengths)
    covered = np.zeros(n_tokens, dtype=bool)
    for s, n in zip(starts.tolist(), lengths.tolist()):
        covered[s:s + n] = True
    return covered
