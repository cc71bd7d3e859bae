"""The reduced corpus: every document's frequent-window intervals, ready for an exact engine.

Document d of the reduced corpus is its intervals (:mod:`.windows`) in order,
each pair of neighbours separated by a token of its own (an id used once in the whole
reduced corpus: df 1 < sigma, so no frequent phrase contains it and nothing grows across
it). Documents keep their numbers (a document without intervals is empty), so df, the
documents of a phrase and every per-document figure mean the same as in the full corpus.

``global_position`` maps each reduced token back to its position in the full corpus
(-1 for separators): coverage, and from it every report figure, is mapped back through it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class ReducedCorpus:
    """tokens uint32 (R,); doc_offsets int64 (D+1,); global_position int64 (R,), -1 at
    separators; n_separators: how many separator ids were used (ids ``first_separator``..)."""

    tokens: np.ndarray
    doc_offsets: np.ndarray
    global_position: np.ndarray
    first_separator: int
    n_separators: int

    @property
    def n_tokens(self) -> int:
        return int(self.tokens.shape[0])


def reduced_corpus(seg_doc: np.ndarray, seg_global_start: np.ndarray, seg_offsets: np.ndarray,
                   seg_tokens: np.ndarray, n_docs: int, first_separator: int) -> ReducedCorpus:
    """Assemble the reduced corpus from intervals sorted by (document, start).

    seg_doc: int64 (S,) document of each interval; seg_global_start: int64 (S,) its first
    token's position in the full corpus; seg_offsets: int64 (S+1,) interval k is
    ``seg_tokens[seg_offsets[k]:seg_offsets[k+1]]`` (uint32, true token ids, all below
    ``first_separator``); n_docs: documents of the full corpus.
    """
    seg_doc = np.asarray(seg_doc, dtype=np.int64)
    seg_global_start = np.asarray(seg_global_start, dtype=np.int64)
    seg_offsets = np.asarray(seg_offsets, dtype=np.int64)
    seg_tokens = np.asarray(seg_tokens, dtype=np.uint32)
    n_seg = seg_doc.shape[0]
    if seg_offsets.shape[0] != n_seg + 1 or seg_offsets[-1] != seg_tokens.shape[0]:
        raise ValueError("seg_offsets must have S+1 entries ending at len(seg_tokens)")
    if n_seg and (np.any(np.diff(seg_doc) < 0) or seg_doc[0] < 0 or seg_doc[-1] >= n_docs):
        raise ValueError(f"seg_doc must be non-decreasing document numbers in [0, {n_docs})")
    if seg_tokens.size and int(seg_tokens.max()) >= first_separator:
        raise ValueError(f"first_separator={first_separator} collides with a token id")
    lengths = np.diff(seg_offsets)
    after_same_doc = np.zeros(n_seg, dtype=bool)
    after_same_doc[1:] = seg_doc[1:] == seg_doc[:-1]
    n_sep = int(after_same_doc.sum())
    if first_separator + n_sep > np.iinfo(np.uint32).max:
        raise ValueError("too many intervals for 32-bit separator ids")
    out_start = seg_offsets[:-1] + np.cumsum(after_same_doc)
    n_out = int(seg_tokens.shape[0]) + n_sep
    tokens = np.empty(n_out, dtype=np.uint32)
    global_position = np.full(n_out, -1, dtype=np.int64)
    within = np.arange(seg_tokens.shape[0], dtype=np.int64) - np.repeat(seg_offsets[:-1], lengths)
    dst = np.repeat(out_start, lengths) + within
    tokens[dst] = seg_tokens
    global_position[dst] = np.repeat(seg_global_start, lengths) + within
    sep_at = out_start[after_same_doc] - 1
    tokens[sep_at] = first_separator + np.arange(n_sep, dtype=np.int64)
    per_doc = np.bincount(seg_doc, weights=lengths + after_same_doc, minlength=n_docs).astype(np.int64)
    doc_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(per_doc, out=doc_offsets[1:])
    return ReducedCorpus(tokens, doc_offsets, global_position, int(first_separator), n_sep)


def reduced_corpus_reference(seg_doc, seg_global_start, seg_offsets, seg_tokens, n_docs: int,
                             first_separator: int) -> ReducedCorpus:
    """Plain twin of :func:`reduced_corpus`: documents built one interval at a time."""
    docs: list[list[tuple[int, int]]] = [[] for _ in range(n_docs)]  # (token, global position)
    next_sep = first_separator
    off = np.asarray(seg_offsets).tolist()
    for k, d in enumerate(np.asarray(seg_doc).tolist()):
        if docs[d]:
            docs[d].append((next_sep, -1))
            next_sep += 1
        g0 = int(seg_global_start[k])
        docs[d].extend((int(t), g0 + i) for i, t in enumerate(np.asarray(seg_tokens)[off[k]:off[k + 1]].tolist()))
    flat = [x for doc in docs for x in doc]
    doc_offsets = np.concatenate([[0], np.cumsum([len(doc) for doc in docs])]).astype(np.int64)
    return ReducedCorpus(np.asarray([t for t, _ in flat], dtype=np.uint32), doc_offsets,
                         np.asarray([g for _, g in flat], dtype=np.int64), first_separator,
                         next_sep - first_separator)


def global_coverage(reduced: ReducedCorpus, reduced_coverage: np.ndarray, n_tokens: int) -> np.ndarray:
    """bool (n_tokens,): the full corpus' coverage from the reduced corpus' (bool (R,))."""
    reduced_coverage = np.asarray(reduced_coverage, dtype=bool)
    if reduced_coverage.shape != reduced.tokens.shape:
        raise ValueError(f"reduced_coverage has shape {reduced_coverage.shape}, the reduced corpus "
                         f"{reduced.tokens.shape}")
    out = np.zeros(n_tokens, dtype=bool)
    pos = reduced.global_position[reduced_coverage]
    if pos.size and pos.min() < 0:
        raise ValueError("a separator is covered: the engine returned a phrase across intervals")
    out[pos] = True
    return out
