"""Fragments on the wire: identical interval tails sent once.

Boilerplate is the same text on many pages, so most of the interval tails a document shard
sends a growth shard (:class:`.sharded_growth.Fragments`) are copies of a few: on 26.5 M
tokens of the web crawl, 46 k distinct contents among 204 k fragments, 1.5 M of their 8.1 M
tokens. :func:`pack_fragments` keeps one copy of each distinct content (its tokens, left
slot included, and its routed starts relative to it) and, per fragment, its document, label
and content number; :func:`unpack_fragments` rebuilds the original :class:`Fragments`
exactly, array for array, so growth is unchanged. Contents are grouped by a 64-bit hash and
then compared element by element: two different contents with one hash stay two contents.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .sharded_growth import Fragments, concat_fragments

_PRIME = np.uint64(0x100000001B3)
_SEED = np.uint64(0xCBF29CE484222325)
_SEP = np.uint64(0x9E3779B97F4A7C15)


@dataclass
class PackedFragments:
    """One document shard's fragments for one growth shard, distinct contents once.

    doc, label: int64 (F,) as in Fragments; owner: the document shard of all of them
    content:    int64 (F,) the content of each fragment
    offsets:    int64 (C+1,) content c is ``tokens[offsets[c]:offsets[c+1]]`` (left slot first)
    tokens:     uint32 (T,)
    start_offsets: int64 (C+1,) content c's routed starts are ``starts[start_offsets[c]:start_offsets[c+1]]``
    starts:     int32 (S,) indices into the content's tokens, ascending
    """

    doc: np.ndarray
    label: np.ndarray
    owner: int
    content: np.ndarray
    offsets: np.ndarray
    tokens: np.ndarray
    start_offsets: np.ndarray
    starts: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in (self.doc, self.label, self.content, self.offsets, self.tokens,
                                           self.start_offsets, self.starts)))

    @property
    def n_fragments(self) -> int:
        return int(self.doc.shape[0])


@njit(cache=True, nogil=True)
def _content_hashes(offsets, tokens, start_offsets, rel, out):
    for f in range(offsets.shape[0] - 1):
        h = _SEED
        for i in range(offsets[f], offsets[f + 1]):
            h = (h ^ np.uint64(tokens[i])) * _PRIME
        h = (h ^ _SEP) * _PRIME
        for i in range(start_offsets[f], start_offsets[f + 1]):
            h = (h ^ np.uint64(rel[i])) * _PRIME
        out[f] = h ^ (h >> np.uint64(29))


@njit(cache=True, nogil=True)
def _same(offsets, tokens, start_offsets, rel, a, b):
    na, nb = offsets[a + 1] - offsets[a], offsets[b + 1] - offsets[b]
    sa, sb = start_offsets[a + 1] - start_offsets[a], start_offsets[b + 1] - start_offsets[b]
    if na != nb or sa != sb:
        return False
    for i in range(na):
        if tokens[offsets[a] + i] != tokens[offsets[b] + i]:
            return False
    for i in range(sa):
        if rel[start_offsets[a] + i] != rel[start_offsets[b] + i]:
            return False
    return True


@njit(cache=True, nogil=True)
def _assign(order, hashes, offsets, tokens, start_offsets, rel, content, reps):
    """content[f] = the representative (first fragment in ``order``) of f's content; returns
    how many representatives were written to ``reps``. Fragments of one hash are compared
    with each representative of that hash."""
    n_reps = 0
    run_start = 0  # first representative of the current hash in reps
    for k in range(order.shape[0]):
        f = order[k]
        if k == 0 or hashes[f] != hashes[order[k - 1]]:
            run_start = n_reps
        found = -1
        for r in range(run_start, n_reps):
            if _same(offsets, tokens, start_offsets, rel, reps[r], f):
                found = r
                break
        if found < 0:
            reps[n_reps] = f
            found = n_reps
            n_reps += 1
        content[f] = found
    return n_reps


def _gather(offsets: np.ndarray, values: np.ndarray, pick: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(new offsets, values) of the slices ``pick`` of a CSR pair, in that order."""
    lengths = np.diff(offsets)[pick]
    new_offsets = np.zeros(pick.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    within = np.arange(new_offsets[-1], dtype=np.int64) - np.repeat(new_offsets[:-1], lengths)
    return new_offsets, values[np.repeat(offsets[:-1][pick], lengths) + within]


def pack_fragments(f: Fragments) -> PackedFragments:
    """``f`` with each distinct (tokens, relative starts) content kept once (``f.owner`` must be
    one document shard, as :func:`.sharded_growth.fragments_for` makes it)."""
    n = int(f.doc.shape[0])
    owner = int(f.owner[0]) if n else 0
    if n and np.any(f.owner != owner):
        raise ValueError("pack_fragments takes the fragments of one document shard")
    frag_of_start = np.searchsorted(f.offsets, f.starts, side="right") - 1
    rel = (f.starts - f.offsets[frag_of_start]).astype(np.int64)
    start_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(frag_of_start, minlength=n) if n else np.zeros(0, np.int64), out=start_offsets[1:])
    hashes = np.empty(n, dtype=np.uint64)
    with np.errstate(over="ignore"):  # uint64 wrap-around is the hash; JIT-less runs warn
        _content_hashes(f.offsets, f.tokens, start_offsets, rel, hashes)
    order = np.argsort(hashes, kind="stable")
    content = np.empty(n, dtype=np.int64)
    reps = np.empty(n, dtype=np.int64)
    n_reps = _assign(order, hashes, f.offsets, f.tokens, start_offsets, rel, content, reps)
    reps = reps[:n_reps]
    offsets, tokens = _gather(f.offsets, f.tokens, reps)
    s_offsets, starts = _gather(start_offsets, rel, reps)
    return PackedFragments(f.doc.astype(np.int64), f.label.astype(np.int64), owner, content, offsets,
                           tokens.astype(np.uint32), s_offsets, starts.astype(np.int32))


def unpack_fragments(p: PackedFragments) -> Fragments:
    """The :class:`Fragments` that :func:`pack_fragments` was given, exactly."""
    if p.n_fragments == 0:
        return Fragments.empty()
    offsets, tokens = _gather(p.offsets, p.tokens, p.content)
    s_offsets, rel = _gather(p.start_offsets, p.starts.astype(np.int64), p.content)
    starts = rel + np.repeat(offsets[:-1], np.diff(s_offsets))
    return Fragments(p.doc.copy(), np.full(p.n_fragments, p.owner, dtype=np.int64), p.label.copy(), offsets,
                     tokens.astype(np.uint32), starts.astype(np.int64))


def unpack_fragments_reference(p: PackedFragments) -> Fragments:
    """Plain twin of :func:`unpack_fragments`: one fragment at a time."""
    doc, owner, label, offsets, tokens, starts = [], [], [], [0], [], []
    for f in range(p.n_fragments):
        c = int(p.content[f])
        body = p.tokens[p.offsets[c]:p.offsets[c + 1]].tolist()
        starts += [offsets[-1] + int(s) for s in p.starts[p.start_offsets[c]:p.start_offsets[c + 1]].tolist()]
        tokens += body
        offsets.append(offsets[-1] + len(body))
        doc.append(int(p.doc[f]))
        label.append(int(p.label[f]))
        owner.append(p.owner)
    if not doc:
        return Fragments.empty()
    as64 = lambda xs: np.asarray(xs, dtype=np.int64)  # noqa: E731
    return Fragments(as64(doc), as64(owner), as64(label), as64(offsets), np.asarray(tokens, dtype=np.uint32), as64(starts))


@njit(cache=True, nogil=True)
def _unpack_into(content, offsets, tokens, start_offsets, starts, token_base, start_base, frag_base,
                 out_offsets, out_tokens, out_starts):
    """Write one part's fragments (contents expanded) at the given bases of the outputs."""
    t = token_base
    s = start_base
    for f in range(content.shape[0]):
        c = content[f]
        for i in range(start_offsets[c], start_offsets[c + 1]):
            out_starts[s] = t + starts[i]
            s += 1
        for i in range(offsets[c], offsets[c + 1]):
            out_tokens[t] = tokens[i]
            t += 1
        out_offsets[frag_base + f + 1] = t


def unpack_concatenated(parts: list[PackedFragments]) -> Fragments:
    """``concat_fragments([unpack_fragments(p) for p in parts])`` written straight into one set
    of arrays: no per-part copy and no index array per token (a growth shard's largest
    transient was these gathers and the concatenation)."""
    parts = [p for p in parts if p.n_fragments]
    if not parts:
        return Fragments.empty()
    n_frag = sum(p.n_fragments for p in parts)
    n_tok = sum(int(np.diff(p.offsets)[p.content].sum()) for p in parts)
    n_start = sum(int(np.diff(p.start_offsets)[p.content].sum()) for p in parts)
    offsets = np.zeros(n_frag + 1, dtype=np.int64)
    tokens = np.empty(n_tok, dtype=np.uint32)
    starts = np.empty(n_start, dtype=np.int64)
    t = s = f = 0
    for p in parts:
        _unpack_into(p.content, p.offsets, p.tokens, p.start_offsets, p.starts, np.int64(t), np.int64(s), np.int64(f),
                     offsets, tokens, starts)
        t = int(offsets[f + p.n_fragments])
        s += int(np.diff(p.start_offsets)[p.content].sum())
        f += p.n_fragments
    return Fragments(np.concatenate([p.doc for p in parts]).astype(np.int64, copy=False),
                     np.concatenate([np.full(p.n_fragments, p.owner, dtype=np.int64) for p in parts]),
                     np.concatenate([p.label for p in parts]).astype(np.int64, copy=False), offsets, tokens, starts)


def unpack_concatenated_reference(parts: list[PackedFragments]) -> Fragments:
    """Plain twin of :func:`unpack_concatenated`: each part unpacked, then concatenated."""
    return concat_fragments([unpack_fragments_reference(p) for p in parts])
