"""Text the operator denied, protected from every kind of record a cleaner applies.

Curation (:mod:`.curation`) drops the phrase records that contain a denied phrase or lie
inside one, but page skeletons and line shapes are no phrases: a skeleton walk or a line
shape covers whole lines whatever words they hold, and a phrase that only overlaps a
denied phrase's edge can still reach into it. So after matching, every occurrence of a
denied entry's tokens (whole tokens, as the tokenizer produces them) is cut out of the
covered spans: those tokens stay, the text around them is cleaned as before.

:func:`occurrence_mask` finds the occurrences in token ids (numpy over the whole batch,
one pass per entry; :func:`occurrence_mask_reference` is its plain twin);
:class:`DeniedText` holds the entries' tokens in a vocabulary of their own and cuts a
cleaner's :class:`~bloomspan.ingest.match.spans.MatchResult` objects; :func:`cut_match` rebuilds one result
without the cut tokens (spans, character offsets, gaps and match-to-span links exact).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import UNKNOWN, Vocabulary

from ..match.spans import MatchResult


def occurrence_mask(ids: np.ndarray, doc_offsets: np.ndarray, patterns: Sequence[np.ndarray]) -> np.ndarray:
    """bool (W,): True at the tokens of every occurrence of any of ``patterns`` (uint32 id
    arrays) in ``ids`` (uint32 (W,), documents ``ids[doc_offsets[d]:doc_offsets[d + 1]]``);
    an occurrence never crosses a document boundary. A pattern holding ``UNKNOWN`` (a token
    the text's vocabulary lacks) occurs nowhere."""
    n = int(ids.shape[0])
    diff = np.zeros(n + 1, dtype=np.int64)
    for pattern in patterns:
        m = int(pattern.shape[0])
        if m == 0 or m > n or (pattern == UNKNOWN).any():
            continue
        starts = np.flatnonzero(ids[:n - m + 1] == pattern[0])
        for k in range(1, m):
            if not starts.shape[0]:
                break
            starts = starts[ids[starts + k] == pattern[k]]
        if not starts.shape[0]:
            continue
        same_doc = (np.searchsorted(doc_offsets, starts, side="right")
                    == np.searchsorted(doc_offsets, starts + m - 1, side="right"))
        starts = starts[same_doc]
        np.add.at(diff, starts, 1)
        np.add.at(diff, starts + m, -1)
    return np.cumsum(diff[:-1]) > 0


def occurrence_mask_reference(ids: Sequence[int], doc_offsets: Sequence[int], patterns: Sequence[Sequence[int]]
                              ) -> np.ndarray:
    """Plain twin of :func:`occurrence_mask`, one document and position at a time."""
    mask = np.zeros(len(ids), dtype=bool)
    for d in range(len(doc_offsets) - 1):
        doc = list(ids[doc_offsets[d]:doc_offsets[d + 1]])
        for pattern in patterns:
            pattern = list(pattern)
            if not pattern or UNKNOWN in pattern:
                continue
            for i in range(len(doc) - len(pattern) + 1):
                if doc[i:i + len(pattern)] == pattern:
                    mask[doc_offsets[d] + i:doc_offsets[d] + i + len(pattern)] = True
    return mask


def cut_match(m: MatchResult, cut: np.ndarray, text_length: int) -> MatchResult:
    """``m`` without the tokens of ``cut`` (bool (N,)): each span's runs of uncut tokens are
    its spans now, with their character offsets and gaps; a match keeps the span of its first
    uncut token and goes when it holds none. ``m`` itself when no span holds a cut token."""
    n = m.n_tokens
    covered = np.zeros(n + 1, dtype=np.int64)
    np.add.at(covered, m.span_token_start, 1)
    np.add.at(covered, m.span_token_end, -1)
    covered = np.cumsum(covered[:-1]) > 0
    if not (covered & cut).any():
        return m
    keep = covered & ~cut
    rise = np.flatnonzero(keep & ~np.concatenate([[False], keep[:-1]])).astype(np.int64)
    fall = (np.flatnonzero(keep & ~np.concatenate([keep[1:], [False]])) + 1).astype(np.int64)
    if not rise.shape[0]:
        return MatchResult.no_match(m.token_starts, m.token_ends)
    # The first kept token at or after each position (n when none), and the span it opens or continues.
    nxt = np.full(n + 1, n, dtype=np.int64)
    at = np.flatnonzero(keep)
    nxt[at] = at
    nxt = np.minimum.accumulate(nxt[::-1])[::-1]
    opens = np.zeros(n, dtype=np.int64)
    opens[rise] = 1
    span_of = np.cumsum(opens) - 1
    first = nxt[m.match_start]
    held = first < m.match_end
    gap_start = np.where(rise > 0, m.token_ends[np.maximum(rise - 1, 0)], 0).astype(np.int64)
    gap_end = np.where(fall < n, m.token_starts[np.minimum(fall, n - 1)], text_length).astype(np.int64)
    return MatchResult(n, int(keep.sum()), m.token_starts, m.token_ends, m.match_start[held], m.match_end[held],
                       m.match_phrase[held], span_of[first[held]].astype(np.int64), rise, fall,
                       m.token_starts[rise], m.token_ends[fall - 1], gap_start, gap_end)


class DeniedText:
    """The token sequences a cleaner must leave uncovered (deny entries' tokens)."""

    def __init__(self, phrases: Iterable[Sequence[str]]):
        self.phrases = sorted({tuple(p) for p in phrases if p})
        tokens = sorted({t for p in self.phrases for t in p})
        self.vocabulary = Vocabulary(capacity=max(len(tokens), 1))
        self.vocabulary.ids_of(tokens, add_new=True)
        self._patterns = [self.vocabulary.ids_of(p) for p in self.phrases]

    def __bool__(self) -> bool:
        return bool(self.phrases)

    def __len__(self) -> int:
        return len(self.phrases)

    def masks(self, texts: Sequence[str]) -> list[np.ndarray]:
        """bool (N_d,) per text: its tokens inside an occurrence of a denied phrase."""
        if not texts:
            return []
        ids, tok_off = encode_batch(list(texts), self.vocabulary, add_new=False, count_df=False)
        mask = occurrence_mask(ids, tok_off, self._patterns)
        return [mask[tok_off[d]:tok_off[d + 1]] for d in range(len(texts))]

    def uncover(self, texts: Sequence[str], matches: Sequence[MatchResult]) -> list[MatchResult]:
        """``matches`` (one per text) without the tokens of the denied phrases' occurrences."""
        out = list(matches)
        todo = [i for i, m in enumerate(matches) if m.n_spans]
        for i, mask in zip(todo, self.masks([texts[i] for i in todo])):
            if mask.shape[0] != matches[i].n_tokens:
                raise ValueError(f"text {i}: {mask.shape[0]} tokens here, {matches[i].n_tokens} in its match")
            out[i] = cut_match(matches[i], mask, len(texts[i]))
        return out
