"""Merged spans of a text's matches, and the :class:`MatchResult` every matcher returns.

:func:`merge_spans` (numba) merges overlapping *or adjacent* token spans of one document;
a merged span ``[ts, te)`` maps to characters ``[starts[ts], ends[te - 1])``. Plain twin:
:func:`merge_spans_reference`. :func:`span_mask` (numba, twin :func:`span_mask_reference`)
marks the tokens of a batch's spans, which the rules read as masks.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def merge_spans(start, end, doc, out_start, out_end, out_doc, group):
    """Merge overlapping or adjacent spans of the same document; returns the number K of merged spans.

    ``start``/``end``/``doc``: int64 (M,), sorted by (doc, start), end exclusive. Writes
    merged spans to ``out_start``/``out_end``/``out_doc`` (int64, capacity >= M) and
    ``group[k]`` (int64 (M,)), the merged span that contains span k. Spans ``[a, b)`` and
    ``[c, d)`` of one document with ``c <= b`` merge.
    """
    k = -1
    for i in range(start.shape[0]):
        if k >= 0 and doc[i] == out_doc[k] and start[i] <= out_end[k]:
            if end[i] > out_end[k]:
                out_end[k] = end[i]
        else:
            k += 1
            out_start[k] = start[i]
            out_end[k] = end[i]
            out_doc[k] = doc[i]
        group[i] = k
    return k + 1


def merge_spans_reference(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Plain-Python twin of :func:`merge_spans` for one document: the merged list for any
    order of input spans."""
    merged: list[list[int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return [(s, e) for s, e in merged]


@njit(cache=True, nogil=True)
def _fill_spans(starts, ends, out):
    for k in range(starts.shape[0]):
        for i in range(starts[k], ends[k]):
            out[i] = True


def span_mask(starts: np.ndarray, ends: np.ndarray, n: int) -> np.ndarray:
    """bool (n,): True at every position of some span ``[starts[k], ends[k])`` (int64, any
    order, overlaps allowed, ``starts[k] <= ends[k] <= n``): one pass over the covered
    positions instead of a difference array's scatter and cumulative sum over all n."""
    out = np.zeros(n, dtype=np.bool_)
    if starts.shape[0]:
        _fill_spans(np.ascontiguousarray(starts, dtype=np.int64), np.ascontiguousarray(ends, dtype=np.int64), out)
    return out


def span_mask_reference(spans: list[tuple[int, int]], n: int) -> list[bool]:
    """Plain twin of :func:`span_mask`."""
    return [any(s <= i < e for s, e in spans) for i in range(n)]


@dataclass(frozen=True)
class MatchResult:
    """Matches of one text. N tokens, M matches, K merged spans.

    n_tokens, covered_tokens: tokens in the text, tokens inside some merged span.
    token_starts, token_ends: int64 (N,) character offsets of the tokens (ends exclusive).
    match_start, match_end:   int64 (M,) token range of each match (end exclusive), sorted
                              by (start, end, phrase); a match found across a removed span
                              (``fixed_point``) ranges over the removed tokens too.
    match_phrase:             int32 (M,) phrase index (position in the PhraseSet).
    match_span:               int64 (M,) merged span that contains the match.
    span_token_start/end:     int64 (K,) merged token ranges, ascending, disjoint, never adjacent.
    span_char_start/end:      int64 (K,) ``token_starts[span_token_start]``,
                              ``token_ends[span_token_end - 1]``.
    span_gap_start/end:       int64 (K,) the span with the gaps on both sides: from the end
                              of the token before it (0 if none) to the start of the token
                              after it (len(text) if none); what strip mode replaces.
    """

    n_tokens: int
    covered_tokens: int
    token_starts: np.ndarray
    token_ends: np.ndarray
    match_start: np.ndarray
    match_end: np.ndarray
    match_phrase: np.ndarray
    match_span: np.ndarray
    span_token_start: np.ndarray
    span_token_end: np.ndarray
    span_char_start: np.ndarray
    span_char_end: np.ndarray
    span_gap_start: np.ndarray
    span_gap_end: np.ndarray

    @classmethod
    def no_match(cls, token_starts: np.ndarray, token_ends: np.ndarray) -> MatchResult:
        e64, e32 = _EMPTY_I64, _EMPTY_I32
        return cls(int(token_starts.shape[0]), 0, token_starts, token_ends, e64, e64, e32, e64, e64, e64, e64, e64, e64, e64)

    @property
    def n_spans(self) -> int:
        return int(self.span_token_start.shape[0])

    def span_phrases(self) -> list[list[int]]:
        """For each merged span, the distinct phrase indices matched inside it, ascending."""
        out: list[set[int]] = [set() for _ in range(self.n_spans)]
        for k, p in zip(self.match_span.tolist(), self.match_phrase.tolist()):
            out[k].add(p)
        return [sorted(x) for x in out]


_EMPTY_I64 = np.zeros(0, dtype=np.int64)
_EMPTY_I32 = np.zeros(0, dtype=np.int32)


@dataclass(frozen=True)
class TemplateMatch:
    """Covered spans of one text. N tokens, K merged spans (ascending, disjoint, never adjacent).

    token_starts/token_ends: int64 (N,) character offsets of the tokens.
    span_token_start/end:    int64 (K,) token ranges, end exclusive.
    span_char_start/end:     int64 (K,) from the first token's start to the last token's end.
    phrases:                 int64 (P,) indices of the phrases that contributed, ascending.
    """

    n_tokens: int
    token_starts: np.ndarray
    token_ends: np.ndarray
    span_token_start: np.ndarray
    span_token_end: np.ndarray
    span_char_start: np.ndarray
    span_char_end: np.ndarray
    phrases: np.ndarray

    @property
    def covered_tokens(self) -> int:
        return int((self.span_token_end - self.span_token_start).sum())

    def token_mask(self) -> np.ndarray:
        """bool (N,): True for covered tokens."""
        mask = np.zeros(self.n_tokens, dtype=bool)
        for a, b in zip(self.span_token_start.tolist(), self.span_token_end.tolist()):
            mask[a:b] = True
        return mask

    def with_mask(self, mask: np.ndarray) -> TemplateMatch:
        """This text's match with ``mask`` (bool (N,)) as its covered tokens, merged into spans."""
        rise = np.flatnonzero(mask & ~np.concatenate([[False], mask[:-1]]))
        fall = np.flatnonzero(mask & ~np.concatenate([mask[1:], [False]])) + 1
        return TemplateMatch(self.n_tokens, self.token_starts, self.token_ends, rise.astype(np.int64),
                             fall.astype(np.int64), self.token_starts[rise], self.token_ends[fall - 1], self.phrases)


def with_batch_mask(matches: list[TemplateMatch], mask: np.ndarray, tok_off: np.ndarray, changed: np.ndarray
                    ) -> list[TemplateMatch]:
    """``matches[d].with_mask(mask[tok_off[d]:tok_off[d + 1]])`` for every text ``d`` where
    ``changed[d]`` (bool (D,)), the others as they are: ``mask`` (bool (W,)) holds the batch's
    tokens, and its runs are found once for the batch, cut at every text's edges."""
    n = mask.shape[0]
    first = np.zeros(n, dtype=bool)  # a text's first token (an empty text's offset is the next one's, or n)
    starts = tok_off[:-1]
    first[starts[starts < n]] = True
    last = np.zeros(n, dtype=bool)  # a text's last token (an empty text's is the text's before it)
    ends = tok_off[1:] - 1
    last[ends[ends >= 0]] = True
    before = np.zeros(n, dtype=bool)
    before[1:] = mask[:-1]
    after = np.zeros(n, dtype=bool)
    after[:-1] = mask[1:]
    rise = np.flatnonzero(mask & ~(before & ~first))
    fall = np.flatnonzero(mask & ~(after & ~last)) + 1
    bounds = np.searchsorted(rise, tok_off).tolist()
    offs = tok_off.tolist()
    out = []
    for d, (match, redo) in enumerate(zip(matches, changed.tolist())):
        if not redo:
            out.append(match)
            continue
        a = offs[d]
        r, f = rise[bounds[d]:bounds[d + 1]] - a, fall[bounds[d]:bounds[d + 1]] - a
        out.append(TemplateMatch(match.n_tokens, match.token_starts, match.token_ends, r, f, match.token_starts[r],
                                 match.token_ends[f - 1], match.phrases))
    return out
