"""Frequent-window runs: the part of a corpus shard that can hold a frequent phrase.

Why this reduction is exact
---------------------------
Let L = min_length. Every L-token window inside an occurrence of a frequent phrase P
(|P| >= L, df(P) >= sigma) has df >= df(P) >= sigma (anti-monotonicity). So every
occurrence of P lies inside the union of the *frequent windows* (df >= sigma) of its
document, within one maximal interval of that union (its windows overlap or touch). Cut
each document down to those intervals, keep them separate (nothing may cross from one
interval to the next) but in their document (df counts documents): then for every phrase
of length >= L the occurrences in the reduced corpus are a subset of those in the corpus
(intervals are disjoint substrings), and all of them when the phrase is frequent. Frequent
phrases, their df, their occurrences and their frequent extensions are therefore the same,
and so are the maximal ones and their coverage.

Windows are compared by a 64-bit hash. A collision can only merge two windows' document
counts, so it can only make a window look frequent when it is not: the intervals grow,
which the argument above allows (any disjoint substrings containing every frequent window
will do). Exactness never depends on the hashes being collision-free; the reduced corpus
is mined on true tokens.

Arrays: a shard is ``ids`` uint32 (W,) local token ids and ``doc_offsets`` int64 (D+1,);
``token_hash`` uint64 (V,) is the 64-bit hash of each local id's string.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd: multiplication by it is a bijection mod 2**64
_M64 = (1 << 64) - 1


_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


def _utf8_spans(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(uint8 bytes of every string's UTF-8, int64 (n+1,) offsets): one encode of the strings
    joined by a newline when none holds one (tokens never do), else one per string."""
    joined = "\n".join(strings)
    if joined.count("\n") == max(len(strings) - 1, 0):
        buf = np.frombuffer(joined.encode("utf-8", "surrogatepass"), dtype=np.uint8)
        cuts = np.flatnonzero(buf == 10)
        offsets = np.empty(len(strings) + 1, dtype=np.int64)
        offsets[0] = 0
        offsets[1:-1] = cuts + 1
        offsets[-1] = buf.shape[0] + 1
        return buf, offsets  # string i is buf[offsets[i]:offsets[i+1] - 1]
    encoded = [x.encode("utf-8", "surrogatepass") for x in strings]
    lengths = np.fromiter((len(e) + 1 for e in encoded), dtype=np.int64, count=len(encoded))
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    buf = np.frombuffer(b"".join(e + b"\0" for e in encoded), dtype=np.uint8) if encoded else np.zeros(0, np.uint8)
    return buf, offsets


@njit(cache=True, nogil=True)
def _string_hashes(buf, offsets, out):
    """out[i] = splitmix64(FNV-1a 64 of the bytes buf[offsets[i]:offsets[i+1]-1])."""
    for i in range(offsets.shape[0] - 1):
        h = _FNV_OFFSET
        for j in range(offsets[i], offsets[i + 1] - 1):
            h ^= np.uint64(buf[j])
            h *= _FNV_PRIME
        out[i] = _finish(h)


def string_hashes(strings: Sequence[str]) -> np.ndarray:
    """uint64 (len(strings),): a 64-bit hash of each string's UTF-8 (FNV-1a, then the splitmix64
    finalizer so the top bits, which pick partitions, are mixed).

    The same string has the same hash on every worker, with no vocabulary shared between
    them. Collisions never change a result (strings are compared wherever identity matters);
    they only make a window look more frequent than it is.
    """
    out = np.empty(len(strings), dtype=np.uint64)
    if strings:
        buf, offsets = _utf8_spans(strings)
        _string_hashes(buf, offsets, out)
    return out


@njit(cache=True, nogil=True)
def _join_spans(buf, offsets, ids, out):
    """out = the strings ``ids`` of (buf, offsets) joined by newlines (``out`` sized for it)."""
    n = 0
    for k in range(ids.shape[0]):
        i = ids[k]
        if k:
            out[n] = 10
            n += 1
        for j in range(offsets[i], offsets[i + 1] - 1):
            out[n] = buf[j]
            n += 1


class PackedStrings(Sequence):
    """A list of strings held as one UTF-8 buffer and its offsets (as :func:`_utf8_spans` lays
    them out), read back one string or a batch at a time: a shard's vocabulary costs its
    bytes plus 8 per string instead of a Python object per string (~3x its text)."""

    def __init__(self, buf: np.ndarray, offsets: np.ndarray):
        self.buf = buf
        self.offsets = offsets

    @staticmethod
    def of(strings: Sequence[str]) -> PackedStrings:
        buf, offsets = _utf8_spans(strings) if len(strings) else (np.zeros(0, np.uint8), np.zeros(1, np.int64))
        return PackedStrings(buf, offsets)

    def __len__(self) -> int:
        return int(self.offsets.shape[0] - 1)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.take(range(len(self))[i])
        i = range(len(self))[i]  # negative indices; IndexError past the end
        return self.buf[self.offsets[i]:self.offsets[i + 1] - 1].tobytes().decode("utf-8", "surrogatepass")

    def take(self, ids) -> list[str]:
        """The strings of ``ids`` (in that order)."""
        data = self.buf.tobytes() if self.buf.size < (1 << 16) else memoryview(self.buf)
        off = self.offsets
        return [bytes(data[off[i]:off[i + 1] - 1]).decode("utf-8", "surrogatepass") for i in np.asarray(ids).tolist()]

    def joined(self, ids) -> bytes | None:
        """The UTF-8 of the strings of ``ids`` joined by newlines, sliced from the buffer (no
        decode, no encode); None when the buffer's separators are not newlines (a string
        holds one)."""
        ids = np.asarray(ids, dtype=np.int64)
        if len(self) and int(self.offsets[-1]) != self.buf.shape[0] + 1:  # "\0"-separated (_utf8_spans)
            return None
        if ids.size == 0:
            return b""
        # each with its separator, less the last one; copied by a kernel (the numpy form built
        # two int64 index arrays per byte: a vocabulary part's largest transient)
        size = int((self.offsets[ids + 1] - self.offsets[ids]).sum()) - 1
        out = np.empty(size, dtype=np.uint8)
        _join_spans(self.buf, self.offsets, ids, out)
        return out.tobytes()

    def hashes(self) -> np.ndarray:
        """:func:`string_hashes` of the strings, from the buffer (nothing encoded again)."""
        out = np.empty(len(self), dtype=np.uint64)
        if len(self):
            _string_hashes(self.buf, self.offsets, out)
        return out

    def __eq__(self, other) -> bool:
        return list(self) == list(other) if isinstance(other, (PackedStrings, list, tuple)) else NotImplemented

    __hash__ = None


def string_hashes_reference(strings: Sequence[str]) -> np.ndarray:
    """Plain twin of :func:`string_hashes`, one string at a time with Python ints."""
    out = []
    for x in strings:
        h = int(_FNV_OFFSET)
        for b in x.encode("utf-8", "surrogatepass"):
            h = ((h ^ b) * int(_FNV_PRIME)) & _M64
        out.append(_finish_py(h))
    return np.asarray(out, dtype=np.uint64)


def window_counts(doc_offsets: np.ndarray, length: int) -> np.ndarray:
    """int64 (D,): number of ``length``-token windows of each document (0 if shorter)."""
    return np.maximum(np.diff(np.asarray(doc_offsets, dtype=np.int64)) - length + 1, 0)


@njit(cache=True, nogil=True, inline="always")
def _top_power(length):
    """BASE ** (length - 1) mod 2**64: what the token leaving a rolled window weighs."""
    top = np.uint64(1)
    for _ in range(length - 1):
        top *= _BASE
    return top


@njit(cache=True, nogil=True, inline="always")
def _window_at(ids, token_hash, a, length):
    """The polynomial of the window ``ids[a:a + length]`` (before :func:`_finish`)."""
    h = np.uint64(0)
    for i in range(a, a + length):
        h = h * _BASE + token_hash[ids[i]]
    return h


@njit(cache=True, nogil=True, inline="always")
def _rolled(h, ids, token_hash, s, length, top):
    """The polynomial of the window starting at ``s`` from that of the one starting at ``s - 1``."""
    return (h - token_hash[ids[s - 1]] * top) * _BASE + token_hash[ids[s + length - 1]]


@njit(cache=True, nogil=True, inline="always")
def _finish(h):
    """splitmix64 finalizer: spreads the polynomial's bits over all 64 (partitions use the top)."""
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h


@njit(cache=True, nogil=True)
def _window_hashes(ids, token_hash, doc_offsets, length, out_hash, out_start):
    top = _top_power(length)
    n = 0
    for d in range(doc_offsets.shape[0] - 1):
        a, b = doc_offsets[d], doc_offsets[d + 1]
        if b - a < length:
            continue
        h = _window_at(ids, token_hash, a, length)
        for s in range(a, b - length + 1):
            if s > a:
                h = _rolled(h, ids, token_hash, s, length, top)
            out_hash[n] = _finish(h)
            out_start[n] = s
            n += 1
    return n


def window_hashes(ids: np.ndarray, token_hash: np.ndarray, doc_offsets: np.ndarray, length: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Hash of every ``length``-token window inside a document, documents in order.

    Returns ``(hashes, starts)``: uint64 (N,) and int64 (N,) window start positions, N =
    ``window_counts(doc_offsets, length).sum()``; a window is tokens ``starts[i]:+length``.
    The hash is a polynomial in the token hashes (base odd, mod 2**64), finalized by
    splitmix64, so it depends only on the window's token strings.
    """
    ids = np.ascontiguousarray(ids, dtype=np.uint32)
    token_hash = np.ascontiguousarray(token_hash, dtype=np.uint64)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    if length < 1:
        raise ValueError(f"length={length}: windows need at least one token")
    if ids.size and int(ids.max()) >= token_hash.shape[0]:
        raise ValueError(f"token_hash has {token_hash.shape[0]} entries; ids reach {int(ids.max())}")
    n = int(window_counts(doc_offsets, length).sum())
    out_hash = np.empty(n, dtype=np.uint64)
    out_start = np.empty(n, dtype=np.int64)
    got = _window_hashes(ids, token_hash, doc_offsets, np.int64(length), out_hash, out_start)
    assert got == n
    return out_hash, out_start


def _finish_py(h: int) -> int:
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & _M64
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & _M64
    return h ^ (h >> 31)


def window_hashes_reference(ids, token_hash, doc_offsets, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Plain twin of :func:`window_hashes`: each window hashed from scratch with Python ints."""
    base = int(_BASE)
    hashes, starts = [], []
    th = [int(x) for x in np.asarray(token_hash)]
    ids = [int(x) for x in np.asarray(ids)]
    off = [int(x) for x in np.asarray(doc_offsets)]
    for d in range(len(off) - 1):
        for s in range(off[d], off[d + 1] - length + 1):
            h = 0
            for i in range(s, s + length):
                h = (h * base + th[ids[i]]) & _M64
            hashes.append(_finish_py(h))
            starts.append(s)
    return np.asarray(hashes, dtype=np.uint64), np.asarray(starts, dtype=np.int64)


# ---------------------------------------------------------------------- counting by key
# Sorting, not hashing: an open addressing table of 2N slots costs a cache miss per window
# (600 ns per window measured on 7.5 M windows of the web crawl); a radix sort streams.
_DIGIT_BITS = 11


@njit(cache=True, nogil=True)
def _radix_sort_pairs(keys, values):
    """``(keys, values)`` sorted by key, stably (LSD radix sort, 11-bit digits)."""
    n = keys.shape[0]
    k = keys.copy()
    v = values.copy()
    k2 = np.empty_like(k)
    v2 = np.empty_like(v)
    n_buckets = 1 << _DIGIT_BITS
    mask = np.uint64(n_buckets - 1)
    start = np.empty(n_buckets, dtype=np.int64)
    for shift in range(0, 64, _DIGIT_BITS):
        sh = np.uint64(shift)
        start[:] = 0
        for i in range(n):
            start[np.int64((k[i] >> sh) & mask)] += 1
        if np.max(start) == n:  # every key has the same digit here: nothing moves
            continue
        total = 0
        for b in range(n_buckets):
            c = start[b]
            start[b] = total
            total += c
        for i in range(n):
            b = np.int64((k[i] >> sh) & mask)
            j = start[b]
            k2[j] = k[i]
            v2[j] = v[i]
            start[b] = j + 1
        k, k2 = k2, k
        v, v2 = v2, v
    return k, v


def sort_pairs(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """uint64 ``keys`` ascending with their int64 ``values``; equal keys keep their order."""
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    values = np.ascontiguousarray(values, dtype=np.int64)
    if keys.shape != values.shape:
        raise ValueError(f"keys{keys.shape} and values{values.shape} must have one shape")
    return _radix_sort_pairs(keys, values)


def sort_pairs_reference(keys, values) -> tuple[np.ndarray, np.ndarray]:
    """Plain twin of :func:`sort_pairs`: numpy's stable argsort."""
    order = np.argsort(np.asarray(keys, dtype=np.uint64), kind="stable")
    return np.asarray(keys, dtype=np.uint64)[order], np.asarray(values, dtype=np.int64)[order]


@njit(cache=True, nogil=True)
def _distinct_runs(sorted_keys, docs):
    """Per run of equal keys, the number of distinct ``docs`` (non-decreasing inside a run)."""
    n = sorted_keys.shape[0]
    out_keys = np.empty(n, dtype=np.uint64)
    out_count = np.empty(n, dtype=np.int64)
    k = -1
    for i in range(n):
        if k < 0 or sorted_keys[i] != out_keys[k]:
            k += 1
            out_keys[k] = sorted_keys[i]
            out_count[k] = 1
        elif docs[i] != docs[i - 1]:
            out_count[k] += 1
    return out_keys[:k + 1].copy(), out_count[:k + 1].copy()


@njit(cache=True, nogil=True)
def _sum_runs(sorted_keys, weights):
    """Per run of equal keys, the sum of its ``weights``."""
    n = sorted_keys.shape[0]
    out_keys = np.empty(n, dtype=np.uint64)
    out_sum = np.empty(n, dtype=np.int64)
    k = -1
    for i in range(n):
        if k < 0 or sorted_keys[i] != out_keys[k]:
            k += 1
            out_keys[k] = sorted_keys[i]
            out_sum[k] = 0
        out_sum[k] += weights[i]
    return out_keys[:k + 1].copy(), out_sum[:k + 1].copy()


def distinct_document_counts(hashes: np.ndarray, window_doc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per distinct window hash, the number of distinct documents holding it.

    hashes: uint64 (N,); window_doc: int64 (N,) non-decreasing (windows in document order).
    Returns ``(keys, counts)``: uint64 (K,) ascending, int64 (K,).
    """
    hashes = np.ascontiguousarray(hashes, dtype=np.uint64)
    window_doc = np.ascontiguousarray(window_doc, dtype=np.int64)
    if window_doc.size > 1 and np.any(np.diff(window_doc) < 0):
        raise ValueError("window_doc must be non-decreasing (windows in document order)")
    keys, docs = _radix_sort_pairs(hashes, window_doc)  # stable: docs stay non-decreasing per key
    return _distinct_runs(keys, docs)


def sum_by_key(keys: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct keys ascending, summed weights)`` of uint64 ``keys`` and int64 ``weights``.

    """
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    weights = np.ascontiguousarray(weights, dtype=np.int64)
    return _sum_runs(*_radix_sort_pairs(keys, weights))


def distinct_document_counts_reference(hashes, window_doc) -> tuple[np.ndarray, np.ndarray]:
    """Plain twin of :func:`distinct_document_counts`: a set of (hash, doc) pairs."""
    docs: dict[int, set] = {}
    for h, d in zip(np.asarray(hashes).tolist(), np.asarray(window_doc).tolist()):
        docs.setdefault(h, set()).add(d)
    keys = sorted(docs)
    return np.asarray(keys, dtype=np.uint64), np.asarray([len(docs[k]) for k in keys], dtype=np.int64)


def partition_of(keys: np.ndarray, n_partitions: int) -> np.ndarray:
    """int64 (N,): the reducer owning each 64-bit key (its top 32 bits, modulo)."""
    return ((np.asarray(keys, dtype=np.uint64) >> np.uint64(32)) % np.uint64(n_partitions)).astype(np.int64)


def is_member(keys: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """bool (N,): ``keys[i]`` is in ``sorted_set`` (uint64, ascending, distinct)."""
    keys = np.asarray(keys, dtype=np.uint64)
    if sorted_set.size == 0:
        return np.zeros(keys.shape[0], dtype=bool)
    at = np.minimum(np.searchsorted(sorted_set, keys), sorted_set.size - 1)
    return sorted_set[at] == keys


# ---------------------------------------------------------------------- runs
@dataclass
class Segments:
    """Maximal intervals of a shard's frequent windows, in document order.

    doc:   int64 (S,) local document of each interval (non-decreasing)
    start: int64 (S,) first token (shard position); end: int64 (S,) exclusive end
    Intervals of one document are disjoint, ascending and never touch (touching ones merge).
    """

    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray

    @property
    def n_tokens(self) -> int:
        return int((self.end - self.start).sum())


def frequent_segments(starts: np.ndarray, frequent: np.ndarray, doc_offsets: np.ndarray, length: int) -> Segments:
    """The union of the frequent windows of each document as maximal intervals.

    starts: int64 (N,) window starts in document order (from :func:`window_hashes`);
    frequent: bool (N,); doc_offsets: int64 (D+1,); length: window length.
    """
    s = np.asarray(starts, dtype=np.int64)[np.asarray(frequent, dtype=bool)]
    doc = np.searchsorted(np.asarray(doc_offsets, dtype=np.int64), s, side="right") - 1
    if s.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return Segments(z, z.copy(), z.copy())
    new = np.ones(s.size, dtype=bool)
    # A window starting after the previous one's end leaves a gap; starting at its end
    # touches it (still one contiguous substring, so it merges).
    new[1:] = (doc[1:] != doc[:-1]) | (s[1:] > s[:-1] + length)
    first = np.flatnonzero(new)
    last = np.append(first[1:], s.size) - 1
    return Segments(doc[first], s[first], s[last] + length)


def frequent_segments_reference(starts, frequent, doc_offsets, length: int) -> Segments:
    """Plain twin of :func:`frequent_segments`: a covered-token mask per document."""
    off = [int(x) for x in np.asarray(doc_offsets)]
    mask = np.zeros(off[-1], dtype=bool)
    for st, f in zip(np.asarray(starts).tolist(), np.asarray(frequent).tolist()):
        if f:
            mask[st:st + length] = True
    docs, a_s, b_s = [], [], []
    for d in range(len(off) - 1):
        t = off[d]
        while t < off[d + 1]:
            if mask[t]:
                u = t
                while u < off[d + 1] and mask[u]:
                    u += 1
                docs.append(d)
                a_s.append(t)
                b_s.append(u)
                t = u
            else:
                t += 1
    as64 = lambda xs: np.asarray(xs, dtype=np.int64)  # noqa: E731
    return Segments(as64(docs), as64(a_s), as64(b_s))


# ---------------------------------------------------------------------- the cut, in one walk
@njit(cache=True, nogil=True)
def _count_intervals(win, doc_offsets, length):
    """The number of intervals :func:`_cut_walk` makes of the ascending starts ``win`` (the
    same walk without writes: the interval arrays are then allocated at their size, not one
    entry per start)."""
    n_seg = 0
    d = 0
    doc = -1
    end = np.int64(0)
    for i in range(win.shape[0]):
        s = win[i]
        while doc_offsets[d + 1] <= s:
            d += 1
        if n_seg == 0 or doc != d or s > end:
            n_seg += 1
            doc = d
        end = s + length
    return n_seg


@njit(cache=True, nogil=True)
def _cut_walk(win, doc_offsets, length, seg_doc, seg_start, seg_end, win_seg):
    """Intervals of the ascending flagged starts ``win`` (as :func:`frequent_segments`) and the
    interval of every start; returns the number of intervals. One walk over the starts and
    the documents together (no search per start)."""
    n_seg = -1
    d = 0
    for i in range(win.shape[0]):
        s = win[i]
        while doc_offsets[d + 1] <= s:
            d += 1
        if n_seg < 0 or seg_doc[n_seg] != d or s > seg_end[n_seg]:
            n_seg += 1
            seg_doc[n_seg] = d
            seg_start[n_seg] = s
        seg_end[n_seg] = s + length
        win_seg[i] = n_seg
    return n_seg + 1


@njit(cache=True, nogil=True)
def _gather_spans(ids, seg_start, seg_end, n_seg, out):
    n = 0
    for j in range(n_seg):
        for t in range(seg_start[j], seg_end[j]):
            out[n] = ids[t]
            n += 1
    return n


def cut_intervals(win: np.ndarray, doc_offsets: np.ndarray, ids: np.ndarray, length: int,
                  win_seg_dtype=np.int64) -> tuple[Segments, np.ndarray, np.ndarray]:
    """The cut of a shard at its flagged window starts ``win`` (int64, ascending):
    ``(segments, win_seg, tokens)`` — the maximal intervals (:func:`frequent_segments` of the
    starts), the interval of each start (``win_seg_dtype``: int32 where the caller keeps it
    as such), and the intervals' tokens concatenated (``ids``' dtype)."""
    win = np.ascontiguousarray(win, dtype=np.int64)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    if win.size and (int(win[0]) < 0 or int(win[-1]) + length > int(doc_offsets[-1])):
        raise ValueError("a flagged window reaches past the shard's tokens")
    # Counted first, so the intervals take 24 B each instead of 24 B per flagged start (a
    # boilerplate interval holds dozens of starts): the largest part of the cut's transient.
    n_seg = _count_intervals(win, doc_offsets, np.int64(length))
    seg = Segments(*(np.empty(n_seg, dtype=np.int64) for _ in range(3)))
    win_seg = np.empty(win.shape[0], dtype=win_seg_dtype)
    _cut_walk(win, doc_offsets, np.int64(length), seg.doc, seg.start, seg.end, win_seg)
    tokens = np.empty(seg.n_tokens, dtype=ids.dtype)
    _gather_spans(ids, seg.start, seg.end, np.int64(n_seg), tokens)
    return seg, win_seg, tokens


def cut_intervals_reference(win, doc_offsets, ids, length: int) -> tuple[Segments, np.ndarray, np.ndarray]:
    """Plain twin of :func:`cut_intervals`: :func:`frequent_segments`, a search per start, and
    the intervals' slices concatenated."""
    win = np.asarray(win, dtype=np.int64)
    seg = frequent_segments(win, np.ones(win.shape[0], dtype=bool), doc_offsets, length)
    win_seg = np.searchsorted(seg.start, win, side="right") - 1
    tokens = np.concatenate([np.asarray(ids)[a:b] for a, b in zip(seg.start.tolist(), seg.end.tolist())]
                            + [np.zeros(0, dtype=np.asarray(ids).dtype)])
    return seg, win_seg.astype(np.int64), tokens
