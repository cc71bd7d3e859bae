"""A batch's tokens, carried from one strip pass to the next instead of tokenizing again.

:class:`~bloomspan.ingest.match.template_matcher.TemplateMatcher` reads a batch through one
:func:`~bloomspan.engine.text.tokenizer.encode_batch` call. With template records the
cleaner matches each stripped text again until a pass removes nothing, and the strip rule
(:mod:`bloomspan.ingest.clean.cleaner`) guarantees that a stripped text's tokens are the original tokens without
the removed ones: the kept pieces are the original characters, and a junction holds only
non-token characters (a gap's closing punctuation, a sentence end, whitespace, a gap's
opening punctuation). So the next pass's tokens follow from this pass's:

* ids: the kept tokens' ids, in the same batch vocabulary;
* character offsets: shifted, after each removed region, by the characters it removed
  less its junction's length;
* line starts (a "\\n" between the previous token's start and this one's; only in tokens
  that hold them, :func:`tokenize_batch`'s ``with_lines``): unchanged for a
  token whose previous token was kept beside it; for the first token after a removed
  region, whether its junction holds a "\\n" (nothing else lies between the two tokens);
  the first token of a text always starts a line.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import Vocabulary

# Characters per distinct token of a batch, about (the web crawl's batches of 1,000 pages:
# 3.4 M characters, ~50,000 distinct tokens); only the starting size of its vocabulary.
CHARS_PER_NEW_TOKEN = 64


@dataclass(frozen=True)
class BatchTokens:
    """The tokens of D texts, W in all, ids in the vocabulary ``words``: the batch's own (every
    token has an id), or a matcher's frozen one (:func:`tokenize_batch`: a token outside it is
    ``words.UNKNOWN``).

    ids:        uint32 (W,)  token ids, texts concatenated
    doc_offsets: int64 (D+1,) text d holds tokens doc_offsets[d]:doc_offsets[d+1]
    char_starts: int64 (W,)  token starts in their own text; char_ends exclusive ends
    line_starts: uint8 (W,)  1 where a token starts a line (every text's first token does), or
                None: not computed (``tokenize_batch(with_lines=False)``: a reader of phrases only)
    """

    words: Vocabulary
    ids: np.ndarray
    doc_offsets: np.ndarray
    char_starts: np.ndarray
    char_ends: np.ndarray
    line_starts: np.ndarray | None


def tokenize_batch(texts: Sequence[str], words: Vocabulary | None = None, *, with_lines: bool = True) -> BatchTokens:
    """One :func:`encode_batch` of ``texts`` (no document frequencies).

    ``words`` None: a fresh vocabulary of the batch, with room for a distinct token per
    ``CHARS_PER_NEW_TOKEN`` characters, so that a batch's first look at its tokens rarely stops
    to grow the table. ``words`` given: that vocabulary, left as it is (a phrase matcher's
    frozen one: a token outside it is ``UNKNOWN``), one probe per token and nothing added.
    ``with_lines`` False: no line starts (``line_starts`` None), for a reader of phrases only."""
    texts = list(texts)
    add_new = words is None
    if words is None:
        chars = sum(map(len, texts))
        words = Vocabulary(capacity=max(1024, chars // CHARS_PER_NEW_TOKEN), pool_capacity=max(8192, chars // 4))
    if not with_lines:
        ids, offsets, starts, ends = encode_batch(texts, words, True, add_new=add_new, count_df=False)
        return BatchTokens(words, ids, offsets, starts, ends, None)
    ids, offsets, starts, ends, lines = encode_batch(texts, words, True, add_new=add_new, count_df=False,
                                                     with_lines=True)
    firsts = offsets[:-1][offsets[:-1] < offsets[1:]]
    lines[firsts] = 1
    return BatchTokens(words, ids, offsets, starts, ends, lines)


def tokens_after_strip(tokens: BatchTokens, rows: Sequence[int], matches: Sequence, junctions: Sequence[Sequence[str]]
                       ) -> BatchTokens | None:
    """The tokens of the stripped texts of ``rows`` (in that order): text ``rows[i]`` of
    ``tokens`` stripped of the merged spans of ``matches[i]`` (a
    :class:`~bloomspan.ingest.matcher.MatchResult` of that text), ``junctions[i]`` the
    text that replaced each span's region (:func:`~bloomspan.ingest.cleaner.strip_spans_with_junctions`).

    None when a span's edge falls between two tokens of one character (NFKC expands "¼" to
    "1⁄4", two tokens): stripping keeps that character whole, so its tokens come back and
    only tokenizing the stripped texts gives them. Array work for the whole batch, no
    Python loop over tokens."""
    rows = np.asarray(rows, dtype=np.int64)
    lens = tokens.doc_offsets[rows + 1] - tokens.doc_offsets[rows]
    row_base = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)  # the rows' tokens, gathered in order
    total = int(row_base[-1])
    at = np.repeat(tokens.doc_offsets[rows] - row_base[:-1], lens) + np.arange(total, dtype=np.int64)
    cs, ce = tokens.char_starts[at], tokens.char_ends[at]
    n_spans = np.fromiter((m.span_token_start.shape[0] for m in matches), dtype=np.int64, count=len(matches))
    span_row = np.repeat(np.arange(len(matches), dtype=np.int64), n_spans)

    def spans(attr):
        parts = [getattr(m, attr) for m in matches]
        return np.concatenate(parts).astype(np.int64, copy=False) if parts else np.zeros(0, dtype=np.int64)
    s = spans("span_token_start") + row_base[span_row]
    e = spans("span_token_end") + row_base[span_row]
    joins = [j for js in junctions for j in js]
    if len(joins) != s.shape[0]:
        raise ValueError(f"{len(joins)} junctions for {s.shape[0]} spans")
    inner_s = s[s > row_base[span_row]]  # spans with a token before them in their text
    inner_e = e[e < row_base[span_row + 1]]  # spans with a token after them
    if (ce[inner_s - 1] > cs[inner_s]).any() or (ce[inner_e - 1] > cs[inner_e]).any():
        return None
    # Spans open minus spans closed before each token (counts, not np.add.at's scatter); and how
    # many spans end at or before each token, the searchsorted of the sorted ends done as a cumsum.
    ends_at = np.bincount(e, minlength=total + 1)
    kept = np.cumsum(np.bincount(s, minlength=total + 1)[:-1] - ends_at[:-1]) == 0
    # Characters each region removed, net of its junction; a token is shifted by the regions before it in its text.
    removed = (spans("span_gap_end") - spans("span_gap_start")
               - np.fromiter(map(len, joins), dtype=np.int64, count=len(joins)))
    cum = np.concatenate([[0], np.cumsum(removed)])
    first_span = np.concatenate([[0], np.cumsum(n_spans)])  # each row's first span
    token_row = np.repeat(np.arange(len(matches), dtype=np.int64), lens)
    shift = cum[np.cumsum(ends_at[:-1])] - cum[first_span[token_row]]
    offsets = np.concatenate([[0], np.cumsum(kept)]).astype(np.int64)[row_base]
    flags = None
    if tokens.line_starts is not None:
        flags = tokens.line_starts[at]
        follows = e < row_base[span_row + 1]
        newline = np.fromiter(("\n" in j for j in joins), dtype=np.uint8, count=len(joins))
        flags[e[follows]] = newline[follows]
        flags = flags[kept]
        flags[offsets[:-1][np.diff(offsets) > 0]] = 1  # every text's first token starts a line
    return BatchTokens(tokens.words, tokens.ids[at][kept], offsets, (cs - shift)[kept], (ce - shift)[kept], flags)


def take_rows(tokens: BatchTokens, rows: Sequence[int]) -> BatchTokens:
    """The tokens of texts ``rows`` of ``tokens`` (ascending), as a batch of their own in the
    same vocabulary: the same ids, offsets and line starts, text by text."""
    rows = np.asarray(rows, dtype=np.int64)
    lens = tokens.doc_offsets[rows + 1] - tokens.doc_offsets[rows]
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    at = np.repeat(tokens.doc_offsets[rows] - offsets[:-1], lens) + np.arange(int(offsets[-1]), dtype=np.int64)
    lines = None if tokens.line_starts is None else tokens.line_starts[at]
    return BatchTokens(tokens.words, tokens.ids[at], offsets, tokens.char_starts[at], tokens.char_ends[at], lines)
