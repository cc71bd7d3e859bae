"""Block-anchored templates: whole lines (and chains of whole lines) repeated across documents.

A *block* is a line of the source text: the tokens between two line breaks
(:func:`block_offsets_from_texts`). Navigation, breadcrumbs and footers are short (3-8
tokens, below any safe global minimum length) but each fills a whole line, and the same
line sequence repeats page after page; a short phrase that repeats *inside* sentences
("for example", "of the") never forms a whole line that often. So:

* **block type**: blocks with the same token sequence share a type (exact: 64-bit hashes,
  then every hash group is verified token by token, :func:`block_types`);
* **df of a type / of a pair**: the number of distinct documents where the type occurs as
  a whole block, or where two types occur as consecutive blocks ``(b, b+1)`` of one
  document; a type or pair is *frequent* when its df >= sigma;
* **page edges** (``edges=True``): each document's start and end count as blocks of 0
  tokens, so a first line that opens many pages pairs with the start ("Home · Catalog ·
  About us" above every breadcrumb) and a last line that closes them pairs with the end;
* **chain**: a maximal run of consecutive blocks of one document (page edges included) in
  which every adjacent pair is frequent;
* a block is **template** when it lies in a chain of at least ``run_min_length`` tokens,
  or when its own type is frequent and it has at least ``block_min_length`` tokens.

Phrases (:class:`~.phrase.TemplatePhrase`, kind ``"block"``): every frequent
single type with at least ``block_min_length`` tokens (one block) and every frequent
pair that occurs inside a template chain (two blocks, the lines' tokens joined; or one
block with ``anchor`` "start"/"end" for a pair with the document's start or end).
Matching them block-aligned and keeping merged chains of pairs with at least
``run_min_length`` tokens reproduces the coverage (see
:mod:`bloomspan.ingest.match.template_matcher`).

Arrays: ``tokens`` uint32 (W,); ``doc_offsets`` int64 (D+1,); ``block_offsets`` int64
(B+1,), strictly increasing from 0 to W, every boundary of a non-empty document among
them (blocks never cross documents and are never empty).
"""
from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from bloomspan.engine.text.slots import SLOT_ID
from bloomspan.engine.text.tokenizer import CHUNK_CHARS, _chunks

from .phrase import TemplatePhrase, sort_template_phrases

logger = logging.getLogger(__name__)

_NEWLINE = re.compile("\n")
_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)
_HASH_ADD = np.uint64(0xBF58476D1CE4E5B9)


# --------------------------------------------------------------------------- boundaries
def line_start_flags(text: str, char_starts: np.ndarray) -> np.ndarray:
    """bool (n,): True for the first token of each line of ``text``.

    char_starts: int64 (n,), the tokens' start offsets in ``text``, ascending. Token 0
    always starts a line; token i > 0 does when a "\\n" lies between token i-1 and token i.
    """
    char_starts = np.asarray(char_starts, dtype=np.int64)
    n = char_starts.shape[0]
    flags = np.zeros(n, dtype=bool)
    if n == 0:
        return flags
    newlines = np.fromiter((m.start() for m in _NEWLINE.finditer(text)), dtype=np.int64)
    line = np.searchsorted(newlines, char_starts, side="left")
    flags[0] = True
    flags[1:] = line[1:] != line[:-1]
    return flags


@njit(cache=True, nogil=True)
def _mark_line_starts(cps, starts, flags):
    """flags[i] = 1 for i >= 1 when a "\\n" (code point 10) lies in cps[starts[i-1]:starts[i]].

    cps: uint8 or uint32 code points; starts int64 (n,) ascending; flags uint8 (n,).
    """
    for i in range(1, starts.shape[0]):
        for c in range(starts[i - 1], starts[i]):
            if cps[c] == 10:
                flags[i] = 1
                break


def line_starts_batch(texts: Sequence[str], doc_offsets: np.ndarray, char_starts: np.ndarray) -> np.ndarray:
    """uint8 (W,) line-start flags of a batch: :func:`line_start_flags` of each document.

    doc_offsets int64 (D+1,) and char_starts int64 (W,) as returned by :func:`encode_batch`.
    One pass over the batch instead of one call per document (which would cost about as
    much as tokenizing): the texts are joined with "\\n" as in :func:`encode_batch`, a token
    starts a line when a "\\n" lies between the previous token's start and its own, and the
    first token of every document starts one anyway, so the joining "\\n" changes nothing.
    """
    flags = np.zeros(char_starts.shape[0], dtype=np.uint8)
    d0 = 0
    for chunk in _chunks(list(texts), CHUNK_CHARS):
        d1 = d0 + len(chunk)
        a, b = int(doc_offsets[d0]), int(doc_offsets[d1])
        if b > a:
            joined = "\n".join(chunk)
            if joined.isascii():
                cps = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
            else:
                cps = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
            lengths = np.fromiter(map(len, chunk), dtype=np.int64, count=len(chunk))
            doc_begin = np.zeros(len(chunk), dtype=np.int64)
            np.cumsum(lengths[:-1] + 1, out=doc_begin[1:])
            starts = char_starts[a:b] + np.repeat(doc_begin, np.diff(doc_offsets[d0:d1 + 1]))
            _mark_line_starts(cps, starts, flags[a:b])
        d0 = d1
    firsts = doc_offsets[:-1]
    flags[firsts[firsts < doc_offsets[1:]]] = 1
    return flags


def block_offsets_from_flags(start_flags: np.ndarray, doc_offsets: np.ndarray) -> np.ndarray:
    """int64 (B+1,) block boundaries from bool (W,) block-start flags; every document start
    also starts a block."""
    start_flags = np.asarray(start_flags, dtype=bool).copy()
    doc_offsets = np.asarray(doc_offsets, dtype=np.int64)
    n = start_flags.shape[0]
    if doc_offsets[-1] != n:
        raise ValueError(f"start_flags has {n} entries but doc_offsets ends at {doc_offsets[-1]}")
    inner = doc_offsets[doc_offsets < n]
    start_flags[inner] = True
    return np.concatenate([np.flatnonzero(start_flags), [n]]).astype(np.int64)


def block_offsets_from_texts(texts: Sequence[str], doc_offsets: np.ndarray, char_starts: np.ndarray) -> np.ndarray:
    """Block (line) boundaries of a tokenized corpus: int64 (B+1,).

    texts: the D documents; doc_offsets: int64 (D+1,); char_starts: int64 (W,), each
    token's start in its own document's text (``encode_batch(..., with_offsets=True)``).
    """
    doc_offsets = np.asarray(doc_offsets, dtype=np.int64)
    char_starts = np.asarray(char_starts, dtype=np.int64)
    if len(texts) != doc_offsets.shape[0] - 1:
        raise ValueError(f"texts has {len(texts)} documents, doc_offsets describes {doc_offsets.shape[0] - 1}")
    return block_offsets_from_flags(line_starts_batch(texts, doc_offsets, char_starts).view(np.bool_), doc_offsets)


def check_blocks(block_offsets, doc_offsets, n_tokens: int) -> np.ndarray:
    """Validate ``block_offsets`` (see the module docstring); returns it as int64."""
    block_offsets = np.ascontiguousarray(block_offsets, dtype=np.int64)
    doc_offsets = np.asarray(doc_offsets, dtype=np.int64)
    if block_offsets.ndim != 1 or block_offsets.shape[0] < 1:
        raise ValueError("block_offsets: must be int64 of shape (B+1,)")
    if block_offsets[0] != 0 or block_offsets[-1] != n_tokens:
        raise ValueError(f"block_offsets: must start at 0 and end at W={n_tokens}")
    if block_offsets.shape[0] > 1 and np.any(np.diff(block_offsets) <= 0):
        raise ValueError("block_offsets: must be strictly increasing (blocks are never empty)")
    inner = np.unique(doc_offsets[(doc_offsets > 0) & (doc_offsets < n_tokens)])
    if inner.shape[0] and not np.isin(inner, block_offsets).all():
        raise ValueError("block_offsets: every document boundary must also be a block boundary")
    return block_offsets


def block_documents(block_offsets: np.ndarray, doc_offsets: np.ndarray) -> np.ndarray:
    """int64 (B,): the document of each block."""
    return (np.searchsorted(doc_offsets, block_offsets[:-1], side="right") - 1).astype(np.int64)


def tokens_of_blocks(block_offsets: np.ndarray, blocks: np.ndarray, n_tokens: int) -> np.ndarray:
    """bool (n_tokens,): the tokens of the blocks ``blocks`` (int indices, any order, repeats
    allowed), from a difference array over their spans (what a pass covers, from the lines it
    found)."""
    blocks = np.asarray(blocks, dtype=np.int64)
    diff = np.zeros(int(n_tokens) + 1, dtype=np.int64)
    np.add.at(diff, block_offsets[blocks], 1)
    np.add.at(diff, block_offsets[blocks + 1], -1)
    return np.cumsum(diff[:-1]) > 0


def block_slots(tokens: np.ndarray, block_offsets: np.ndarray, b: int, e: int) -> tuple[int, ...]:
    """The slot positions (numbers read as :data:`SLOT_ID`) in the tokens of blocks b..e-1."""
    seg = tokens[block_offsets[b]:block_offsets[e]]
    return tuple(np.flatnonzero(seg == np.uint32(SLOT_ID)).tolist())


# --------------------------------------------------------------------------- block types
def flags_per_span(flags: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """int64: for each span ``[starts[k], ends[k])`` of a token array, how many of its
    tokens are True in ``flags`` (bool (W,)); with block offsets, per block. Counted by
    :func:`_count_flags` over the spans' tokens (blocks cover each token once), not by a
    cumulative sum over every token; :func:`flags_per_span_reference` is its plain twin."""
    out = np.empty(np.shape(starts)[0], dtype=np.int64)
    _count_flags(np.ascontiguousarray(flags, dtype=np.bool_), np.ascontiguousarray(starts, dtype=np.int64),
                 np.ascontiguousarray(ends, dtype=np.int64), out)
    return out


@njit(cache=True, nogil=True)
def _count_flags(flags, starts, ends, out):
    for k in range(starts.shape[0]):
        c = 0
        for i in range(starts[k], ends[k]):
            c += flags[i]
        out[k] = c


def flags_per_span_reference(flags, starts, ends) -> np.ndarray:
    """Plain twin of :func:`flags_per_span`: a prefix sum."""
    counts = np.concatenate([[0], np.cumsum(flags, dtype=np.int64)])
    return counts[np.asarray(ends, dtype=np.int64)] - counts[np.asarray(starts, dtype=np.int64)]


@njit(cache=True, nogil=True)
def span_hashes(tokens, starts, ends, out):
    """out[k] (uint64) = hash of tokens[starts[k]:ends[k]] and its length."""
    for k in range(starts.shape[0]):
        h = np.uint64(ends[k] - starts[k]) * _HASH_ADD
        for i in range(starts[k], ends[k]):
            h = (h ^ np.uint64(tokens[i])) * _HASH_MUL
            h ^= h >> np.uint64(29)
        out[k] = h


def block_hashes(tokens, block_offsets, out):
    """out[b] (uint64) = hash of tokens[block_offsets[b]:block_offsets[b+1]] and its length."""
    span_hashes(tokens, block_offsets[:-1], block_offsets[1:], out)


@njit(cache=True, nogil=True)
def _same_block(tokens, block_offsets, a, b):
    la = block_offsets[a + 1] - block_offsets[a]
    if la != block_offsets[b + 1] - block_offsets[b]:
        return False
    for k in range(la):
        if tokens[block_offsets[a] + k] != tokens[block_offsets[b] + k]:
            return False
    return True


@njit(cache=True, nogil=True)
def _types_from_sorted(tokens, block_offsets, order, hashes, types):
    """Assign type ids along ``order`` (blocks sorted by hash); a block equal to its hash
    group's first block gets the group's type. Returns (n_types, n_collisions): blocks
    whose hash matched but tokens did not get type -1 (resolved by the caller)."""
    n_types = 0
    collisions = 0
    first = -1
    for k in range(order.shape[0]):
        b = order[k]
        if k == 0 or hashes[b] != hashes[order[k - 1]]:
            first = b
            types[b] = n_types
            n_types += 1
        elif _same_block(tokens, block_offsets, first, b):
            types[b] = types[first]
        else:
            types[b] = -1
            collisions += 1
    return n_types, collisions


def block_types(tokens: np.ndarray, block_offsets: np.ndarray) -> tuple[np.ndarray, int]:
    """Exact block types: int64 (B,) with equal ids iff equal token sequences, and T.

    Ids are dense (0..T-1) but otherwise arbitrary (hash order).
    """
    tokens = np.ascontiguousarray(tokens, dtype=np.uint32)
    n_blocks = block_offsets.shape[0] - 1
    hashes = np.empty(n_blocks, dtype=np.uint64)
    with np.errstate(over="ignore"):  # wrap-around is the hash (matters with NUMBA_DISABLE_JIT=1)
        block_hashes(tokens, block_offsets, hashes)
    order = np.argsort(hashes, kind="stable")
    types = np.empty(n_blocks, dtype=np.int64)
    n_types, collisions = _types_from_sorted(tokens, block_offsets, order, hashes, types)
    if collisions:  # 64-bit collisions: resolve the few affected blocks exactly
        logger.warning("block_types: %d hash collisions resolved by token comparison", collisions)
        seen: dict[tuple, int] = {}
        for b in np.flatnonzero(types == -1).tolist():
            key = tuple(tokens[block_offsets[b]:block_offsets[b + 1]].tolist())
            if key not in seen:
                seen[key] = n_types
                n_types += 1
            types[b] = seen[key]
    return types, int(n_types)


def block_types_reference(tokens: np.ndarray, block_offsets: np.ndarray) -> np.ndarray:
    """Plain twin: int64 (B,) type ids numbered by first appearance (compare as partitions)."""
    seen: dict[tuple, int] = {}
    out = []
    for b in range(block_offsets.shape[0] - 1):
        key = tuple(np.asarray(tokens[block_offsets[b]:block_offsets[b + 1]]).tolist())
        out.append(seen.setdefault(key, len(seen)))
    return np.asarray(out, dtype=np.int64)


def distinct_documents(keys: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct documents per key. keys: int64 (N, K) rows; docs: int64 (N,).

    Returns ``(group int64 (N,), df int64 (G,), count int64 (G,))``: the group of each
    row (rows with equal keys share a group), distinct documents and rows per group.
    """
    n = docs.shape[0]
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    cols = [docs] + [keys[:, j] for j in range(keys.shape[1] - 1, -1, -1)]
    order = np.lexsort(cols)
    sk = keys[order]
    sd = docs[order]
    new_key = np.ones(n, dtype=bool)
    new_key[1:] = np.any(sk[1:] != sk[:-1], axis=1)
    new_doc = new_key.copy()
    new_doc[1:] |= sd[1:] != sd[:-1]
    gid_sorted = np.cumsum(new_key) - 1
    n_groups = int(gid_sorted[-1]) + 1
    df = np.bincount(gid_sorted, weights=new_doc, minlength=n_groups).astype(np.int64)
    count = np.bincount(gid_sorted, minlength=n_groups).astype(np.int64)
    group = np.empty(n, dtype=np.int64)
    group[order] = gid_sorted
    return group, df, count


# --------------------------------------------------------------------------- chains
@njit(cache=True, nogil=True)
def chain_cover(frequent_pair, single_ok, block_len, run_min_length, covered, in_chain):
    """Template blocks from frequent pairs and frequent singles.

    frequent_pair: bool (B,), True at b when blocks b and b+1 are in one document and
      their pair is frequent (False at the last block); single_ok: bool (B,), block b's
      type is frequent and long enough alone; block_len: int64 (B,) tokens per block.
    Writes covered (bool (B,)) and in_chain (bool (B,): b lies in a chain of >= 2 blocks
    with >= run_min_length tokens). Returns the number of such chains.
    """
    n = frequent_pair.shape[0]
    chains = 0
    b = 0
    while b < n:
        covered[b] = single_ok[b]
        in_chain[b] = False
        if b + 1 < n and frequent_pair[b]:
            e = b + 1
            total = block_len[b] + block_len[e]
            while e + 1 < n and frequent_pair[e]:
                e += 1
                total += block_len[e]
            good = total >= run_min_length
            if good:
                chains += 1
            for k in range(b, e + 1):
                covered[k] = single_ok[k] or good
                in_chain[k] = good
            b = e + 1
        else:
            b += 1
    return chains


def chain_cover_reference(frequent_pair, single_ok, block_len, run_min_length) -> tuple[np.ndarray, np.ndarray]:
    """Plain twin of :func:`chain_cover`: (covered, in_chain), both bool (B,)."""
    n = len(frequent_pair)
    covered = [bool(s) for s in single_ok]
    in_chain = [False] * n
    b = 0
    while b < n:
        e = b
        while e + 1 < n and frequent_pair[e]:
            e += 1
        if e > b and sum(int(x) for x in block_len[b:e + 1]) >= run_min_length:
            for k in range(b, e + 1):
                covered[k] = True
                in_chain[k] = True
        b = e + 1
    return np.asarray(covered, dtype=bool), np.asarray(in_chain, dtype=bool)


# --------------------------------------------------------------------------- mining
@dataclass
class BlockMiningResult:
    """phrases: kind "block", psi order; coverage: bool (W,); block_covered: bool (B,)."""

    phrases: list[TemplatePhrase]
    coverage: np.ndarray
    block_covered: np.ndarray
    stats: dict = field(default_factory=dict)


def _expand(block_doc: np.ndarray, types: np.ndarray, n_types: int):
    """Each document's blocks framed by a virtual start and end element (0 tokens).

    Returns ``(ex_type int64 (E,), ex_index int64 (B,), first int64 (K,), last int64 (K,))``
    with E = B + 2K for the K non-empty documents: ``ex_type`` holds the block types with
    START = n_types and END = n_types + 1 around each document; ``ex_index[b]`` is block
    b's position; ``first``/``last`` are the positions of each document's START and END.
    """
    n_blocks = block_doc.shape[0]
    is_first = np.ones(n_blocks, dtype=bool)
    is_first[1:] = block_doc[1:] != block_doc[:-1]
    rank = np.cumsum(is_first) - 1
    ex_index = np.arange(n_blocks, dtype=np.int64) + 2 * rank + 1
    n_docs = int(rank[-1]) + 1 if n_blocks else 0
    ex_type = np.empty(n_blocks + 2 * n_docs, dtype=np.int64)
    ex_type[ex_index] = types
    first = ex_index[is_first] - 1
    is_last = np.ones(n_blocks, dtype=bool)
    is_last[:-1] = is_first[1:]
    last = ex_index[is_last] + 1
    ex_type[first] = n_types
    ex_type[last] = n_types + 1
    return ex_type, ex_index, first, last


def mine_blocks(tokens, doc_offsets, block_offsets, sigma: int, block_min_length: int, run_min_length: int,
                scope: str | None = None, count_unit: np.ndarray | None = None, edges: bool = True,
                single_use: np.ndarray | None = None) -> BlockMiningResult:
    """Whole-block templates of a corpus (definitions in the module docstring).

    tokens uint32 (W,), doc_offsets int64 (D+1,), block_offsets int64 (B+1,); sigma >= 2;
    block_min_length, run_min_length >= 1 tokens. ``scope`` is copied into every phrase.
    count_unit: int64 (D,), optional: document d counts as unit ``count_unit[d]`` (e.g.
    its site), so "frequent" means "in >= sigma distinct units" and ``df`` counts units;
    pairs still never cross documents. Default: every document is its own unit.
    edges: the start and the end of a document act as blocks of 0 tokens, so "the first
    line of a page" pairs with the start in every page where it comes first (a pair
    phrase with ``anchor="start"``/``"end"`` and one block).
    single_use: bool (B,), optional: blocks that never count as repeated, each a type of its
    own (lines of numbers only: a code listing's line numbers or a table's cells repeat on
    every page without being a template); they join no phrase and no chain.
    """
    for name, value, low in (("sigma", sigma, 2), ("block_min_length", block_min_length, 1),
                             ("run_min_length", run_min_length, 1)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < low:
            raise ValueError(f"{name}={value!r}: must be an integer >= {low}")
    tokens = np.ascontiguousarray(tokens, dtype=np.uint32)
    doc_offsets = np.asarray(doc_offsets, dtype=np.int64)
    block_offsets = check_blocks(block_offsets, doc_offsets, tokens.shape[0])
    n_blocks = block_offsets.shape[0] - 1
    block_len = np.diff(block_offsets)
    block_doc = block_documents(block_offsets, doc_offsets)
    if count_unit is None:
        block_unit = block_doc
    else:
        count_unit = np.asarray(count_unit, dtype=np.int64)
        if count_unit.shape != (doc_offsets.shape[0] - 1,):
            raise ValueError(f"count_unit has shape {count_unit.shape}: must be ({doc_offsets.shape[0] - 1},), "
                             "one unit per document")
        block_unit = count_unit[block_doc]
    types, n_types = block_types(tokens, block_offsets)
    if single_use is not None:
        single_use = np.asarray(single_use, dtype=bool)
        if single_use.shape != (n_blocks,):
            raise ValueError(f"single_use has shape {single_use.shape}: must be ({n_blocks},), one flag per block")
        k = int(single_use.sum())
        if k:
            types = types.copy()
            types[single_use] = n_types + np.arange(k, dtype=types.dtype)
            uniq, inv = np.unique(types, return_inverse=True)  # dense again (a type may be gone)
            types, n_types = inv.astype(types.dtype), int(uniq.shape[0])
    _g, type_df, type_count = distinct_documents(types[:, None], block_unit)
    # distinct_documents numbers groups by sorted key, i.e. by type id: group t == type t.
    single_ok = (type_df[types] >= sigma) & (block_len >= block_min_length)

    start_t, end_t = n_types, n_types + 1
    ex_type, ex_index, ex_first, ex_last = _expand(block_doc, types, n_types)
    n_ex = ex_type.shape[0]
    ex_block = np.full(n_ex, -1, dtype=np.int64)
    ex_block[ex_index] = np.arange(n_blocks)
    ex_unit = np.empty(n_ex, dtype=np.int64)
    ex_unit[ex_index] = block_unit
    ex_unit[ex_first] = block_unit[ex_block[ex_first + 1]] if n_blocks else ex_unit[ex_first]
    ex_unit[ex_last] = block_unit[ex_block[ex_last - 1]] if n_blocks else ex_unit[ex_last]
    ex_len = np.zeros(n_ex, dtype=np.int64)
    ex_len[ex_index] = block_len
    ex_single = np.zeros(n_ex, dtype=bool)
    ex_single[ex_index] = single_ok
    # Pairs inside one document: every neighbour pair but (END, next START); without
    # edges also none that involves START or END.
    valid = ex_type[:-1] != end_t
    if not edges:
        valid &= (ex_type[:-1] != start_t) & (ex_type[1:] != end_t)
    pair_at = np.flatnonzero(valid)
    pair_keys = np.stack([ex_type[pair_at], ex_type[pair_at + 1]], axis=1)
    pair_group, pair_df, pair_count = distinct_documents(pair_keys, ex_unit[pair_at])
    frequent_pair = np.zeros(n_ex, dtype=bool)
    frequent_pair[pair_at] = pair_df[pair_group] >= sigma

    ex_covered = np.zeros(n_ex, dtype=bool)
    in_chain = np.zeros(n_ex, dtype=bool)
    n_chains = chain_cover(frequent_pair, ex_single, ex_len, np.int64(run_min_length), ex_covered, in_chain)
    covered = ex_covered[ex_index]

    phrases: list[TemplatePhrase] = []
    first_of_type = np.full(n_types, -1, dtype=np.int64)
    first_of_type[types[::-1]] = np.arange(n_blocks - 1, -1, -1)
    for t in np.flatnonzero((type_df >= sigma) & (block_len[first_of_type] >= block_min_length)).tolist():
        b = int(first_of_type[t])
        phrases.append(TemplatePhrase(tuple(tokens[block_offsets[b]:block_offsets[b + 1]].tolist()),
                                      int(type_df[t]), int(type_count[t]), kind="block", scope=scope,
                                      slots=block_slots(tokens, block_offsets, b, b + 1),
                                      block_lengths=(int(block_len[b]),)))
    used = pair_at[frequent_pair[pair_at] & in_chain[pair_at]]
    groups_used = np.unique(pair_group[np.searchsorted(pair_at, used)])
    first_pair = np.full(pair_df.shape[0], -1, dtype=np.int64)
    first_pair[pair_group[::-1]] = pair_at[::-1]
    for g in groups_used.tolist():
        i = int(first_pair[g])
        real = [int(ex_block[k]) for k in (i, i + 1) if ex_block[k] >= 0]
        b, e = real[0], real[-1] + 1
        anchor = "start" if ex_type[i] == start_t else "end" if ex_type[i + 1] == end_t else None
        phrases.append(TemplatePhrase(tuple(tokens[block_offsets[b]:block_offsets[e]].tolist()),
                                      int(pair_df[g]), int(pair_count[g]), kind="block", scope=scope,
                                      slots=block_slots(tokens, block_offsets, b, e),
                                      block_lengths=tuple(int(block_len[k]) for k in real), anchor=anchor))
    coverage = tokens_of_blocks(block_offsets, np.flatnonzero(covered), tokens.shape[0])
    stats = {"blocks": int(n_blocks), "block_types": int(n_types), "frequent_types": int((type_df >= sigma).sum()),
             "frequent_pairs": int((pair_df >= sigma).sum()), "chains": int(n_chains),
             "covered_blocks": int(covered.sum()), "covered_tokens": int(coverage.sum())}
    return BlockMiningResult(sort_template_phrases(phrases), coverage, covered, stats)



class _SingleUse(tuple):
    """A block that equals no other block, itself included elsewhere (identity equality)."""

    __eq__ = object.__eq__
    __ne__ = object.__ne__
    __hash__ = object.__hash__


def mine_blocks_reference(docs: Sequence[Sequence[Sequence[int]]], sigma: int, block_min_length: int,
                          run_min_length: int, edges: bool = True, units: Sequence[int] | None = None,
                          single_use: Sequence[Sequence[bool]] | None = None
                          ) -> tuple[set[tuple], list[list[bool]]]:
    """Brute force over documents given as lists of blocks (token-id tuples); ``units[d]``
    is document d's counting unit (default: d); ``single_use[d][k]``: block k of document d
    equals no other block.

    Returns ``(phrases, covered)``: the set of (tokens, df, occurrences, block_lengths, anchor)
    of every reported phrase, and per document the per-block template flags.
    """
    start, end = ("<start>",), ("<end>",)  # virtual blocks; never equal to a token tuple
    def block(d, k, b):
        return _SingleUse(b) if single_use is not None and single_use[d][k] else tuple(b)
    framed = [[start] + [block(d, k, b) for k, b in enumerate(blocks)] + [end] if blocks else []
              for d, blocks in enumerate(docs)]
    type_docs: dict[tuple, set] = {}
    type_occ: dict[tuple, int] = {}
    pair_docs: dict[tuple, set] = {}
    pair_occ: dict[tuple, int] = {}

    def pair_ok(x, y) -> bool:
        return edges or (x is not start and y is not end)

    for d, seq in enumerate(framed):
        u = d if units is None else units[d]
        for k, blk in enumerate(seq):
            if blk not in (start, end):
                type_docs.setdefault(blk, set()).add(u)
                type_occ[blk] = type_occ.get(blk, 0) + 1
            if k + 1 < len(seq) and pair_ok(blk, seq[k + 1]):
                key = (blk, seq[k + 1])
                pair_docs.setdefault(key, set()).add(u)
                pair_occ[key] = pair_occ.get(key, 0) + 1
    phrases = {(t, len(ds), type_occ[t], (len(t),), None) for t, ds in type_docs.items()
               if len(ds) >= sigma and len(t) >= block_min_length}
    covered = []
    for seq in framed:
        fp = [k + 1 < len(seq) and pair_ok(seq[k], seq[k + 1]) and len(pair_docs[(seq[k], seq[k + 1])]) >= sigma
              for k in range(len(seq))]
        lens = [0 if blk in (start, end) else len(blk) for blk in seq]
        single = [blk not in (start, end) and len(type_docs[blk]) >= sigma and len(blk) >= block_min_length
                  for blk in seq]
        cov, chain = chain_cover_reference(fp, single, lens, run_min_length)
        for k in range(len(seq) - 1):
            if fp[k] and chain[k]:
                x, y = seq[k], seq[k + 1]
                real = [b for b in (x, y) if b not in (start, end)]
                anchor = "start" if x == start else "end" if y == end else None
                phrases.add((sum(real, ()), len(pair_docs[(x, y)]), pair_occ[(x, y)], tuple(len(b) for b in real),
                             anchor))
        covered.append(cov[1:-1].tolist())
    return phrases, covered
