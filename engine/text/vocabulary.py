"""Vocabulary: token string <-> uint32 id, with exact per-token document frequencies.

Ids are dense, 0..size-1, given in order of first insertion; they never change. All
state lives in numpy arrays so numba kernels look up and insert tokens without Python
objects (the tokenizer fast path calls :meth:`Vocabulary.encode_documents`):

  pool   uint32 (pool_capacity,)  all tokens in id order, each as its length followed by
                                  its code points
  rec    int64 (capacity, 4)      per id: [start of its code points in pool, length,
                                  last document counted, df]
  table  uint64 (2**bits, 2)      open addressing, linear probing from the Fibonacci hash
                                  of the key; a slot holds [the token's key
                                  (:mod:`.token_keys`), id + 1]; id + 1 = 0 and key 0: empty (no key is 0); load <= 1/2
  state  int64 (2,)               [size, pool_len]

A token with a packed key (ASCII or Cyrillic, at most 9 code points: nearly all of them)
is found by its key alone: one table slot, no load that depends on it. A hashed key's
token is compared with the pool. :meth:`encode_documents` runs in two kernels: the scan
(:func:`.token_keys.scan_documents`) finds and keys the tokens of a chunk without touching
the vocabulary, then :func:`_resolve` maps the keys to ids, prefetching the slot of the
token 32 ahead so that the misses of rare tokens overlap; document frequencies are counted
after (:func:`_count_df`, prefetching records the same way).

File format (:meth:`save` / :meth:`load`), UTF-8 text: a JSON header line
``{"format": "bloomspan-vocabulary", "version": 1, "size": V, "n_docs": N}``, then line
j+2 is ``<token j>\\t<df j>`` with the escaping of :mod:`.vocabulary_text`. Writing and
parsing are numba kernels over code points: 10 M tokens load in a few seconds.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from numba import njit

from .prefetch import prefetch_row
from .scan_buffers import scan_buffers
from .token_keys import (
    HASHED,
    fold_into,
    folded_length,
    folds_to,
    key_of,
    packed_length,
    scan_documents,
    scan_tables,
    simple_scratch_words,
    unpack_into,
)
from .tokenizer import line_flags_of, token_spans  # tokenizer needs Vocabulary only for type hints
from .vocabulary_text import PARSE_ERRORS, parse_lines, write_lines

UNKNOWN = 0xFFFFFFFF  # id of a token missing from a frozen vocabulary (add_new=False)
FORMAT = "bloomspan-vocabulary"
VERSION = 1

_FIB64 = 0x9E3779B97F4A7C15  # odd multiplier for Fibonacci hashing of the 64-bit keys
_MIN_TABLE_BITS = 4
_START, _LENGTH, _LAST_DOC, _DF = 0, 1, 2, 3
_STATUS_DONE, _STATUS_GROW = 0, 1
_LONGEST_FOLD = 18  # longest NFKC + casefold of one code point (U+FDFA)
_AHEAD = 32  # tokens between a prefetch of a table slot or record and its use


@njit(cache=True, nogil=True, inline="always")
def _slot(key, shift):
    return np.int64((key * np.uint64(_FIB64)) >> np.uint64(shift))


@njit(cache=True, nogil=True, inline="always")
def _same_text(pool, rec, j, buf, a, m):
    """Whether token id j is buf[a:a+m]."""
    if rec[j, _LENGTH] != m:
        return False
    b = rec[j, _START]
    for k in range(m):
        if pool[b + k] != buf[a + k]:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _find(pool, rec, table, shift, buf, a, m, key):
    """(id, slot): id of the token buf[a:a+m] with key ``key``, or -1 and the empty slot for it."""
    mask = table.shape[0] - 1
    slot = _slot(key, shift)
    while True:
        v = table[slot, 1]
        if v == np.uint64(0):
            return -1, slot
        if table[slot, 0] == key:
            j = np.int64(v) - 1
            if key < np.uint64(HASHED) or _same_text(pool, rec, j, buf, a, m):
                return j, slot
        slot = (slot + 1) & mask


@njit(cache=True, nogil=True, inline="always")
def _has_room(pool, rec, table, state, m):
    return (state[0] + 1 <= rec.shape[0] and state[1] + 1 + m <= pool.size
            and 2 * (state[0] + 1) <= table.shape[0])


@njit(cache=True, nogil=True, inline="always")
def _claim(pool, rec, table, state, slot, m, key):
    """Make the next id a token of m code points (key ``key``) at the empty ``slot``; returns
    (id, position of its code points in pool), which the caller fills.

    The caller has checked :func:`_has_room`.
    """
    size = state[0]
    p = state[1]
    pool[p] = m
    rec[size, 0] = p + 1
    rec[size, 1] = m
    rec[size, 2] = -1
    rec[size, 3] = 0
    table[slot, 0] = key
    table[slot, 1] = np.uint64(size + 1)
    state[0] = size + 1
    state[1] = p + 1 + m
    return size, p + 1


@njit(cache=True, nogil=True)
def _resolve(cps, starts, ends, keys, t, t_end, fold, expansions, add_new, pool, rec, table, shift, state,
             out_ids):
    """Ids of the tokens t..t_end-1 of :func:`~.token_keys.scan_documents` (key keys[t],
    normalised text the folds of cps[starts[t]:ends[t]]), inserting new ones in order.

    A packed key is looked up by itself; a hashed one is compared with the token it finds.
    Returns (t, status): status 0 = done, 1 = token t needs capacity (resume at t).
    """
    mask = table.shape[0] - 1
    while t < t_end:
        if t + _AHEAD < t_end:
            prefetch_row(table, _slot(keys[t + _AHEAD], shift))
        key = keys[t]
        slot = _slot(key, shift)
        j = np.int64(-1)
        while True:
            # One load for the common case, a hit: no key is 0, so a slot whose key matches is taken.
            k = table[slot, 0]
            if k == key:
                i = np.int64(table[slot, 1]) - 1
                if key < np.uint64(HASHED) or folds_to(cps, starts[t], ends[t], fold, expansions, pool,
                                                      rec[i, _START], rec[i, _LENGTH]):
                    j = i
                    break
            elif k == np.uint64(0):  # an empty slot
                break
            slot = (slot + 1) & mask
        if j < 0 and add_new:
            packed = key < np.uint64(HASHED)
            m = packed_length(key) if packed else folded_length(cps, starts[t], ends[t], fold, expansions)
            if not _has_room(pool, rec, table, state, m):
                return t, _STATUS_GROW
            j, p = _claim(pool, rec, table, state, slot, m, key)
            if packed:  # its text from the key: no read of the code points scanned long before
                unpack_into(key, m, pool, p)
            else:
                fold_into(cps, starts[t], ends[t], fold, expansions, pool, p)
        out_ids[t] = UNKNOWN if j < 0 else j
        t += 1
    return t, _STATUS_DONE


@njit(cache=True, nogil=True)
def _encode_spans(cps, starts, ends, t, add_new, pool, rec, table, shift, state, out):
    """Ids of the tokens cps[starts[t]:ends[t]] taken as they are, inserting new ones.

    cps uint32 (C,); starts/ends int64 (W,); out uint32 (W,). Returns (t, status):
    status 0 = done, 1 = token t needs capacity (resume at t).
    """
    while t < starts.size:
        a = starts[t]
        m = ends[t] - a
        key = key_of(cps, a, m)
        j, slot = _find(pool, rec, table, shift, cps, a, m, key)
        if j < 0 and add_new:
            if not _has_room(pool, rec, table, state, m):
                return t, _STATUS_GROW
            j, p = _claim(pool, rec, table, state, slot, m, key)
            for k in range(m):
                pool[p + k] = cps[a + k]
        out[t] = UNKNOWN if j < 0 else j
        t += 1
    return t, _STATUS_DONE


@njit(cache=True, nogil=True)
def _rehash(old, new, shift):
    """Move every entry of table ``old`` into the empty, larger table ``new``."""
    mask = new.shape[0] - 1
    for s in range(old.shape[0]):
        if old[s, 1] != np.uint64(0):
            slot = _slot(old[s, 0], shift)
            while new[slot, 1] != np.uint64(0):
                slot = (slot + 1) & mask
            new[slot, 0] = old[s, 0]
            new[slot, 1] = old[s, 1]


@njit(cache=True, nogil=True)
def _build_table(pool, rec, size, table, shift):
    """Key ids 0..size-1 into the empty ``table``; returns -1 or the first duplicate id."""
    for j in range(size):
        a = rec[j, 0]
        m = rec[j, 1]
        key = key_of(pool, a, m)
        i, slot = _find(pool, rec, table, shift, pool, a, m, key)
        if i >= 0:
            return j
        table[slot, 0] = key
        table[slot, 1] = np.uint64(j + 1)
    return -1


@njit(cache=True, nogil=True)
def _document_spans(starts, ends, doc_begin, doc_token_end, out_starts, out_ends):
    """out_starts/out_ends int64 (W,) = the spans starts/ends (int64, >= W) of the tokens of
    document d (those before doc_token_end[d]) less doc_begin[d]: offsets in its own text."""
    t = 0
    for d in range(doc_begin.size):
        b = doc_begin[d]
        for u in range(t, doc_token_end[d]):
            out_starts[u] = starts[u] - b
            out_ends[u] = ends[u] - b
        t = doc_token_end[d]


@njit(cache=True, nogil=True)
def _count_df(ids, doc_offsets, doc_base, size, rec):
    """Add one to df of every distinct id of every document; UNKNOWN is skipped.

    ids uint32 (W,); doc_offsets int64 (D+1,); documents are numbered doc_base + d.
    Returns -1, or the first position whose id is >= size (then nothing is counted).
    """
    for t in range(ids.size):
        if ids[t] >= size and ids[t] != UNKNOWN:
            return t
    for d in range(doc_offsets.size - 1):
        g = doc_base + d
        for t in range(doc_offsets[d], doc_offsets[d + 1]):
            if t + _AHEAD < ids.size and ids[t + _AHEAD] < size:
                prefetch_row(rec, ids[t + _AHEAD])
            i = ids[t]
            if i != UNKNOWN:
                # No branch on whether the document counted it already: which way that goes
                # depends on the text (a first or a repeated token), a store does not.
                rec[i, 3] += rec[i, 2] != g
                rec[i, 2] = g
    return -1


def count_df_reference(ids: np.ndarray, doc_offsets: np.ndarray, size: int) -> np.ndarray:
    """Numpy twin of the df kernel: int64 (size,) documents per id, UNKNOWN skipped."""
    df = np.zeros(size, dtype=np.int64)
    for d in range(len(doc_offsets) - 1):
        u = np.unique(ids[doc_offsets[d]:doc_offsets[d + 1]])
        df[u[u != UNKNOWN]] += 1
    return df


def _to_cps(s: str) -> np.ndarray:
    return np.frombuffer(s.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


class Vocabulary:
    """Token string <-> dense uint32 id, plus exact document frequencies (see module doc)."""

    UNKNOWN = UNKNOWN

    def __init__(self, capacity: int = 1024, pool_capacity: int = 8192):
        capacity = max(int(capacity), 1)
        self._pool = np.empty(max(int(pool_capacity), 1), dtype=np.uint32)
        self._rec = np.zeros((capacity, 4), dtype=np.int64)
        self._state = np.zeros(2, dtype=np.int64)  # [size, pool_len]
        self._n_docs = 0
        self._strings: dict[int, str] = {}  # tokens decoded by token(): writing phrases asks for the same ones often
        bits = self._table_bits(capacity)  # room for ``capacity`` tokens without a rehash
        self._table = np.zeros((1 << bits, 2), dtype=np.uint64)
        self._shift = 64 - bits

    # ----------------------------------------------------------------- capacity
    @staticmethod
    def _table_bits(n_ids: int) -> int:
        """Smallest table with load <= 1/2 for n_ids."""
        bits = max(int(2 * n_ids - 1).bit_length(), _MIN_TABLE_BITS)
        if bits > 32:
            raise OverflowError(f"a vocabulary of {n_ids} tokens needs more than 2**32 table slots")
        return bits

    def _reserve(self, more_ids: int, more_chars: int) -> None:
        """Make room for ``more_ids`` new tokens with ``more_chars`` code points in all."""
        size, pool_len = int(self._state[0]), int(self._state[1])
        need = size + more_ids
        if need >= UNKNOWN:
            raise OverflowError(f"vocabulary size {need} would reach the UNKNOWN id {UNKNOWN}")
        cap = self._rec.shape[0]
        if need > cap:
            self._rec = _grown(self._rec, max(2 * cap, need), 0)
        if pool_len + more_ids + more_chars > self._pool.size:
            self._pool = _grown(self._pool, max(2 * self._pool.size, pool_len + more_ids + more_chars), 0)
        if 2 * need > self._table.shape[0]:
            bits = self._table_bits(max(need, self._table.shape[0]))  # at least double
            table = np.zeros((1 << bits, 2), dtype=np.uint64)
            _rehash(self._table, table, 64 - bits)
            self._table, self._shift = table, 64 - bits

    # ----------------------------------------------------------------- lookups
    def __len__(self) -> int:
        return int(self._state[0])

    @property
    def size(self) -> int:
        return len(self)

    @property
    def n_docs(self) -> int:
        """Number of documents counted into :attr:`df`."""
        return self._n_docs

    @property
    def df(self) -> np.ndarray:
        """int64 (size,) read-only view: documents containing each token id."""
        v = self._rec[:len(self), _DF]
        v.flags.writeable = False
        return v

    def token(self, i: int) -> str:
        """The token with id ``i``."""
        text = self._strings.get(i)  # first: writing phrases asks for the same few ids again and again
        if text is not None:
            return text
        i = int(i)
        if not 0 <= i < len(self):
            raise IndexError(f"token id {i} out of range for a vocabulary of {len(self)}")
        text = self._strings.get(i)
        if text is None:  # ids never change their token, so a decoded one stays valid
            a, n = self._rec[i, _START], self._rec[i, _LENGTH]
            text = self._strings[i] = self._pool[a:a + n].tobytes().decode("utf-32-le", "surrogatepass")
        return text

    def tokens(self, ids: Iterable[int] | None = None) -> list[str]:
        """Tokens of ``ids`` (all tokens in id order when None)."""
        if ids is not None:
            return [self.token(i) for i in ids]
        size = len(self)
        starts = self._rec[:size, _START]
        pool = self._pool[:self._state[1]].copy()
        pool[starts - 1] = 0  # the length words, which need not be code points
        text = pool.tobytes().decode("utf-32-le", "surrogatepass")
        bounds = np.append(starts, self._state[1] + 1).tolist()  # token j ends 1 before j + 1
        return [text[bounds[j]:bounds[j + 1] - 1] for j in range(size)]

    def utf8_spans(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Every token's UTF-8, in id order, as ``(buf uint8, offsets int64 (size+1,))`` with
        token i = ``buf[offsets[i]:offsets[i + 1] - 1]`` and a newline between neighbours (the
        layout of :class:`bloomspan.engine.distributed.windows.PackedStrings`), or None when a
        token holds a newline. One decode and one encode of the pool: no Python string per
        token (a shard's list of its vocabulary cost ~5 bytes per corpus token at its peak)."""
        size = len(self)
        if size == 0:
            return np.zeros(0, dtype=np.uint8), np.zeros(1, dtype=np.int64)
        pool = self._pool[:self._state[1]].copy()
        pool[self._rec[:size, _START] - 1] = 10  # the length words become the separators
        text = pool.tobytes().decode("utf-32-le", "surrogatepass")
        del pool
        buf = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)[1:]  # the first one goes
        del text
        cuts = np.flatnonzero(buf == 10)
        if cuts.shape[0] != size - 1:
            return None
        offsets = np.empty(size + 1, dtype=np.int64)
        offsets[0] = 0
        offsets[1:-1] = cuts + 1
        offsets[-1] = buf.shape[0] + 1
        return buf, offsets

    def __iter__(self):
        return iter(self.tokens())

    def _lookup(self, token: str, add_new: bool) -> int:
        if not isinstance(token, str):
            raise TypeError(f"token must be str, got {type(token).__name__}")
        cps = _to_cps(token)
        starts = np.zeros(1, dtype=np.int64)
        ends = np.full(1, cps.size, dtype=np.int64)
        return int(self._run_spans(cps, starts, ends, add_new)[0])

    def get(self, token: str, default=None):
        """Id of ``token`` or ``default``."""
        i = self._lookup(token, add_new=False)
        return default if i == UNKNOWN else i

    def id_of(self, token: str) -> int:
        """Id of ``token``; KeyError when absent."""
        i = self._lookup(token, add_new=False)
        if i == UNKNOWN:
            raise KeyError(token)
        return i

    def __contains__(self, token) -> bool:
        return isinstance(token, str) and self._lookup(token, add_new=False) != UNKNOWN

    def add(self, token: str) -> int:
        """Id of ``token``, inserting it (df 0) if new. Taken as is: not lowercased."""
        return self._lookup(token, add_new=True)

    def ids_of(self, tokens: Sequence[str], add_new: bool = False) -> np.ndarray:
        """uint32 (len(tokens),) ids; UNKNOWN for absent tokens unless ``add_new``."""
        tokens = list(tokens)
        for i, t in enumerate(tokens):
            if not isinstance(t, str):
                raise TypeError(f"tokens[{i}] is {type(t).__name__}, expected str")
        lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        ends = np.cumsum(lengths)
        return self._run_spans(_to_cps("".join(tokens)), ends - lengths, ends, add_new)

    def ids_in(self, other: Vocabulary) -> np.ndarray:
        """uint32 (len(self),): the id in ``other`` of each of this vocabulary's tokens, in id
        order (UNKNOWN where ``other`` lacks it): ``other.ids_of(self.tokens())`` probed from
        this vocabulary's code points, with no string decoded or encoded."""
        size = len(self)
        starts = self._rec[:size, _START]
        return other._run_spans(self._pool, starts, starts + self._rec[:size, _LENGTH], False)

    def all_code_points_in(self, lo: int, hi: int) -> np.ndarray:
        """bool (len(self),): True for a token whose every code point lies in [lo, hi] (ASCII
        digits: 48, 57), read from the pool, no string decoded."""
        size = len(self)
        if size == 0:
            return np.zeros(0, dtype=bool)
        starts, lengths = self._rec[:size, _START], self._rec[:size, _LENGTH]
        pool = self._pool[:self._state[1]]
        outside = ((pool < lo) | (pool > hi)).astype(np.int64)
        outside[starts - 1] = 0  # the length words
        cum = np.concatenate([[0], np.cumsum(outside)])
        return (cum[starts + lengths] - cum[starts] == 0) & (lengths > 0)

    # ----------------------------------------------------------------- bulk encoding
    def encode_documents(self, text: str, cps: np.ndarray, doc_begin: np.ndarray,
                         doc_end: np.ndarray, tables: tuple[np.ndarray, np.ndarray, np.ndarray], *,
                         add_new: bool = True, count_df: bool = True, with_offsets: bool = True,
                         with_lines: bool = True):
        """Tokenize and map documents to ids (the tokenizer fast path; see encode_batch).

        text: the joined documents (a str, or an object with ``len`` and slices within one
        document: :class:`~.tokenizer.JoinedTexts`); cps: uint8, uint16 or uint32 (C,) its code points
        (tokenizer.code_points); doc_begin/doc_end int64 (D,): document d is
        text[doc_begin[d]:doc_end[d]]; tables: normalization.normalization_tables().
        Returns ``(ids uint32 (W,), starts int64 (W,), ends int64 (W,), line_starts uint8
        (W,), doc_token_end int64 (D,))`` with spans from the start of each token's own
        document (text[doc_begin[d] + starts[t]:doc_begin[d] + ends[t]]; None without
        ``with_offsets``), line starts None without ``with_lines``, and doc_token_end[d] the
        number of tokens in documents 0..d; every array is the caller's own. New tokens get ids in
        order of first occurrence; unknown ones map to UNKNOWN unless ``add_new``. With
        ``count_df`` the D documents are counted into :attr:`df` and :attr:`n_docs`.
        """
        char_class, fold, expansions = tables
        if cps.dtype not in (np.uint8, np.uint16, np.uint32) or cps.ndim != 1 or cps.size != len(text):
            raise ValueError(f"cps must be 1-d uint8, uint16 or uint32 of len(text)={len(text)}, "
                             f"got {cps.dtype} {cps.shape}")
        # uint8 and uint16 code points lie below any table that covers the BMP: no pass over cps for their max.
        highest = np.iinfo(cps.dtype).max if cps.dtype != np.uint32 else int(cps.max(initial=0))
        if char_class.dtype != np.uint8 or fold.dtype != np.uint32 or expansions.dtype != np.uint32 \
                or char_class.shape != fold.shape or char_class.shape[0] <= highest:
            raise ValueError("tables must be normalization.normalization_tables(), covering every code point")
        doc_begin = np.ascontiguousarray(doc_begin, dtype=np.int64)
        doc_end = np.ascontiguousarray(doc_end, dtype=np.int64)
        n_docs = doc_begin.size
        if doc_end.shape != (n_docs,) or (n_docs and (doc_begin.min() < 0 or doc_end.max() > cps.size
                                                      or np.any(doc_end < doc_begin))):
            raise ValueError("documents must satisfy 0 <= doc_begin <= doc_end <= len(text)")
        # The kernel's tokens are separated by at least one code point; the reference's
        # ("½" is two tokens) may need more room, made below.
        longest = int((doc_end - doc_begin).max(initial=0))
        # simple_document's scratch for documents up to that length
        buffers = scan_buffers((cps.size + 1) // 2, simple_scratch_words(longest))
        keys, ids, starts, ends, lines = buffers.keys, buffers.ids, buffers.starts, buffers.ends, buffers.lines
        scratch = buffers.scratch
        doc_token_end = np.zeros(n_docs, dtype=np.int64)
        direct, lead = scan_tables(char_class, fold)
        d, i, w, nl = 0, (int(doc_begin[0]) if n_docs else 0), 0, 1
        while True:
            w0 = w
            d, s, e, w, nl, status = scan_documents(cps, doc_begin, doc_end, d, i, w, nl, char_class, fold,
                                                    expansions, direct, lead, scratch, keys, starts, ends,
                                                    lines, doc_token_end)
            self._resolve_keys(cps, starts, ends, keys, w0, w, fold, expansions, add_new, ids)
            if status == _STATUS_DONE:
                break
            # A stretch the tables cannot decide (a combining sequence, "½"): the reference
            # tokenizes it; s and e are segment starts with no token character around them.
            region = text[s:e]
            tokens, t_starts, t_ends = token_spans(region)
            n = len(tokens)
            need = w + n + (cps.size - e + 1) // 2
            if need > ids.size:
                keys, ids, starts, ends, lines = (_grown(a, need, 0) for a in (keys, ids, starts, ends, lines))
            if n:
                region_lines = line_flags_of(region, t_starts.tolist())
                region_lines[0] = nl or "\n" in region[:t_starts[0]]
                nl = int("\n" in region[t_starts[-1]:])
                ids[w:w + n] = self.ids_of(tokens, add_new=add_new)
                starts[w:w + n] = s + t_starts
                ends[w:w + n] = s + t_ends
                lines[w:w + n] = region_lines
                w += n
            else:
                nl = int(nl or "\n" in region)
            i = e
        ids = ids[:w]
        if count_df:
            _count_df(ids, np.concatenate((np.zeros(1, dtype=np.int64), doc_token_end)), self._n_docs,
                      len(self), self._rec)
            self._n_docs += n_docs
        # Arrays of their own (the buffers are the next chunk's), spans from their document's start.
        doc_starts = doc_ends = None
        if with_offsets:
            doc_starts, doc_ends = np.empty(w, dtype=np.int64), np.empty(w, dtype=np.int64)
            _document_spans(starts, ends, doc_begin, doc_token_end, doc_starts, doc_ends)
        return ids.copy(), doc_starts, doc_ends, lines[:w].copy() if with_lines else None, doc_token_end

    def _resolve_keys(self, cps, starts, ends, keys, t, t_end, fold, expansions, add_new, out_ids) -> None:
        """out_ids[t:t_end] = ids of the scanned tokens t..t_end-1 (:func:`_resolve`)."""
        while True:
            t, status = _resolve(cps, starts, ends, keys, t, t_end, fold, expansions, add_new, self._pool,
                                 self._rec, self._table, self._shift, self._state, out_ids)
            if status == _STATUS_DONE:
                return
            self._reserve(1, _LONGEST_FOLD * int(ends[t] - starts[t]))

    def _run_spans(self, cps, starts, ends, add_new):
        """Ids of tokens cps[starts[t]:ends[t]] taken as they are (no lowercasing)."""
        out = np.empty(starts.size, dtype=np.uint32)
        t = 0
        while True:
            t, status = _encode_spans(cps, starts, ends, t, add_new, self._pool, self._rec,
                                      self._table, self._shift, self._state, out)
            if status == _STATUS_DONE:
                return out
            self._reserve(1, int(ends[t] - starts[t]))

    # ----------------------------------------------------------------- document frequency
    def count_documents(self, ids: np.ndarray, doc_offsets: np.ndarray) -> None:
        """Count each document of a corpus slice once for every distinct token in it.

        ids uint32 (W,); doc_offsets int64 (D+1,) with doc_offsets[0] == 0 and
        doc_offsets[-1] == W. UNKNOWN ids are skipped.
        """
        ids = np.ascontiguousarray(ids, dtype=np.uint32)
        doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
        if doc_offsets.ndim != 1 or doc_offsets.size < 1 or doc_offsets[0] != 0 \
                or doc_offsets[-1] != ids.size or np.any(np.diff(doc_offsets) < 0):
            raise ValueError("doc_offsets must be non-decreasing int64 (D+1,) from 0 to len(ids)")
        bad = _count_df(ids, doc_offsets, self._n_docs, len(self), self._rec)
        if bad >= 0:
            raise ValueError(f"ids[{bad}]={int(ids[bad])} is not an id of this vocabulary "
                             f"(size {len(self)})")
        self._n_docs += doc_offsets.size - 1

    def add_document_counts(self, documents: Iterable[Iterable[int]]) -> None:
        """Plain twin of :meth:`count_documents`: one set of distinct ids per document."""
        n = 0
        for doc in documents:
            for i in set(int(x) for x in doc):
                if not 0 <= i < len(self):
                    raise ValueError(f"id {i} is not an id of this vocabulary (size {len(self)})")
                self._rec[i, _DF] += 1
            n += 1
        self._n_docs += n

    # ----------------------------------------------------------------- text form
    def to_text(self, start: int = 0, stop: int | None = None, with_df: bool = True) -> bytes:
        """UTF-8 lines ``token[\\tdf]\\n`` for ids start..stop-1 (no header)."""
        stop = len(self) if stop is None else stop
        if not 0 <= start <= stop <= len(self):
            raise ValueError(f"start={start}, stop={stop}: need 0 <= start <= stop <= {len(self)}")
        end = self._state[1] if stop == len(self) else self._rec[stop, _START]
        chars = int(end - self._rec[start, _START]) if stop > start else 0
        out = np.empty(2 * chars + 22 * (stop - start), dtype=np.uint32)
        n = write_lines(self._pool, self._rec, start, stop, with_df, out)
        return out[:n].tobytes().decode("utf-32-le", "surrogatepass").encode("utf-8", "surrogatepass")

    @classmethod
    def from_text(cls, data: bytes, size: int, with_df: bool = True, n_docs: int = 0,
                  df: np.ndarray | None = None, source: str = "<bytes>") -> Vocabulary:
        """Inverse of :meth:`to_text` for all ids; ``df`` (int64 (size,)) when not in the text."""
        cps = _to_cps(data.decode("utf-8", "surrogatepass"))
        vocab = cls(capacity=max(size, 1), pool_capacity=max(cps.size + size, 1))
        n, err = parse_lines(cps, with_df, vocab._pool, vocab._rec)
        if err:
            raise ValueError(f"{source}: token line {n + 1}: {PARSE_ERRORS[err]}")
        if n != size:
            raise ValueError(f"{source}: {n} token lines, expected size={size}")
        if df is not None:
            df = np.asarray(df, dtype=np.int64)
            if df.shape != (size,):
                raise ValueError(f"{source}: df has shape {df.shape}, expected ({size},)")
            vocab._rec[:size, _DF] = df
        vocab._rec[:size, _LAST_DOC] = -1
        vocab._state[:] = (size, vocab._rec[size - 1, _START] + vocab._rec[size - 1, _LENGTH] if size else 0)
        bits = cls._table_bits(size)
        vocab._table = np.zeros((1 << bits, 2), dtype=np.uint64)
        vocab._shift = 64 - bits
        dup = _build_table(vocab._pool, vocab._rec, size, vocab._table, vocab._shift)
        if dup >= 0:
            raise ValueError(f"{source}: token line {dup + 1} ({vocab.token(dup)!r}) duplicates an "
                             "earlier token")
        vocab._n_docs = int(n_docs)
        return vocab

    def save(self, path: str | os.PathLike) -> None:
        """Write the file format of the module docstring atomically (tmp + os.replace)."""
        path = Path(path)
        header = {"format": FORMAT, "version": VERSION, "size": len(self), "n_docs": self._n_docs}
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(json.dumps(header).encode() + b"\n")
            f.write(self.to_text(with_df=True))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Vocabulary:
        data = Path(path).read_bytes()
        nl = data.find(b"\n")
        try:
            header = json.loads(data[:nl if nl >= 0 else len(data)])
        except ValueError as e:
            raise ValueError(f"{path}: first line is not a JSON header: {e}") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise ValueError(f"{path}: not a {FORMAT} file (header {str(header)[:200]})")
        if header.get("version") != VERSION:
            raise ValueError(f"{path}: version {header.get('version')}, this code reads {VERSION}")
        return cls.from_text(data[nl + 1:], int(header["size"]), with_df=True,
                             n_docs=int(header["n_docs"]), source=str(path))


def _grown(a: np.ndarray, n: int, fill) -> np.ndarray:
    out = np.empty((n,) + a.shape[1:], dtype=a.dtype)
    out[:a.shape[0]] = a
    out[a.shape[0]:] = fill
    return out

