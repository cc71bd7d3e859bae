"""Sections a page's own table of contents lists are the page's content, however often they repeat.

A reference page often opens with a table of contents of its own sections (a sidebar that lists
"Variants", "Trait Implementations", "Blanket Implementations"), and further down the page holds
those headings again, each above its section. Where a section's text is generated and the same
on many pages (a type's blanket implementations, members inherited from a base class, a "See also"
block), the repetition passes find it like chrome, and the page-skeleton walk joins it to the
page's end. But the page's own table of contents names it: it is a section of the page. Chrome
does not do this. A bottom bar that repeats the top one ("index · modules · next · previous")
repeats its lines side by side, not one line above each part of the text, and a breadcrumb
repeated in a footer is one line, not a list of the page's sections.

The rule, per page, on its lines (a line is *covered* when every token of it is):

* the page's **header**: its lines before the first run of consecutive uncovered lines holding at
  least :data:`HEADER_GAP` tokens (the first text no pass found); a page without such a run has
  no header and the rule does not apply to it;
* **entries**: the covered header lines of at most :data:`ENTRY_LENGTH` tokens whose line (its
  token sequence) occurs again after the header; an entry's first copy after the header is its
  **heading**. Taken in the entries' order, a heading is kept when it comes after the previous
  kept one (a table of contents lists the sections in the page's order);
* the page **lists its sections** when at least ``min_headings`` headings are kept and no two
  kept headings are adjacent lines (text lies between a page's headings);
* then in every run of covered lines after the header that holds a kept heading, the lines from
  its first kept heading to the run's end are content: their tokens leave the coverage.

:func:`toc_section_tokens` applies it to a corpus (mining's detector runs it last, on the
coverage of every pass; the ingest matcher runs it on its matches, with the same kernel);
:func:`toc_section_lines_reference` is its plain twin. Nothing here changes exact MCFP mining.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from .blocks import flags_per_span
from .page_skeleton import next_same_type

HEADER_GAP = 10  # uncovered tokens in a row that end a page's header (its first text no pass found)
ENTRY_LENGTH = 10  # longest table-of-contents entry, in tokens (SkeletonConfig.toc_line_length's default)


@njit(cache=True, nogil=True, inline="always")
def header_end(covered, block_len, a, b, header_gap):
    """The first line of page lines ``a:b`` that starts a run of uncovered lines holding at least
    ``header_gap`` tokens (the page's header ends there), or -1 where there is none."""
    stretch = 0
    start = a
    for i in range(a, b):
        if covered[i]:
            stretch = 0
            continue
        if stretch == 0:
            start = i
        stretch += block_len[i]
        if stretch >= header_gap:
            return start
    return -1


@njit(cache=True, nogil=True)
def _toc_section_kernel(covered, block_len, next_same, doc_blocks, header_gap, entry_length, min_headings, out):
    """out[k] = True for the lines k the rule gives back to the content (module docstring).

    covered bool (B,): every token of the line is covered; block_len int64 (B,); next_same
    int64 (B,): the next line of the same type in the same page, -1 where none
    (:func:`~.page_skeleton.next_same_type`); doc_blocks int64 (D+1,): page d's lines are
    ``doc_blocks[d]:doc_blocks[d+1]``; out bool (B,), False on entry.
    """
    heading = np.zeros(covered.shape[0], dtype=np.bool_)
    for d in range(doc_blocks.shape[0] - 1):
        a, b = doc_blocks[d], doc_blocks[d + 1]
        header = header_end(covered, block_len, a, b, header_gap)
        if header < 0:
            continue
        kept = 0
        last = -1
        adjacent = False
        for k in range(a, header):
            if not covered[k] or block_len[k] > entry_length:
                continue
            h = next_same[k]
            while h >= 0 and h < header:
                h = next_same[h]
            if h < 0 or h <= last:
                continue
            if last >= 0 and h == last + 1:
                adjacent = True
            heading[h] = True
            last = h
            kept += 1
        if kept >= min_headings and not adjacent:
            i = header
            while i < b:
                if not covered[i]:
                    i += 1
                    continue
                e = i
                while e < b and covered[e]:
                    e += 1
                for k in range(i, e):
                    if heading[k]:
                        for m in range(k, e):
                            out[m] = True
                        break
                i = e
        for k in range(header, b):  # clear this page's marks
            heading[k] = False


def toc_section_lines(covered: np.ndarray, block_len: np.ndarray, types: np.ndarray, doc_blocks: np.ndarray,
                      min_headings: int) -> np.ndarray:
    """bool (B,): the lines the rule gives back to the content. covered bool (B,) (every token of
    the line covered), block_len int64 (B,), types int64 (B,) (equal token sequences, equal type),
    doc_blocks int64 (D+1,) each page's first line; ``min_headings`` <= 0 switches the rule off."""
    n = covered.shape[0]
    out = np.zeros(n, dtype=bool)
    if n == 0 or min_headings <= 0:
        return out
    doc_blocks = np.asarray(doc_blocks, dtype=np.int64)
    block_doc = np.repeat(np.arange(doc_blocks.shape[0] - 1, dtype=np.int64), np.diff(doc_blocks))
    next_same = next_same_type(np.asarray(types, dtype=np.int64), block_doc)
    _toc_section_kernel(np.asarray(covered, dtype=np.bool_), np.asarray(block_len, dtype=np.int64), next_same,
                        doc_blocks, HEADER_GAP, ENTRY_LENGTH, int(min_headings), out)
    return out


def toc_section_tokens(coverage: np.ndarray, block_offsets: np.ndarray, doc_offsets: np.ndarray,
                       types: np.ndarray, min_headings: int) -> np.ndarray:
    """bool (W,): the covered tokens the rule gives back to the content. coverage bool (W,);
    block_offsets int64 (B+1,) the lines (never crossing a page); doc_offsets int64 (D+1,);
    types (B,) the lines' types (:func:`~.blocks.block_types`)."""
    coverage = np.asarray(coverage, dtype=bool)
    block_offsets = np.asarray(block_offsets, dtype=np.int64)
    lengths = np.diff(block_offsets)
    if coverage.shape[0] == 0 or lengths.shape[0] == 0 or min_headings <= 0:
        return np.zeros(coverage.shape[0], dtype=bool)
    covered = flags_per_span(coverage, block_offsets[:-1], block_offsets[1:]) == lengths
    doc_blocks = np.searchsorted(block_offsets[:-1], np.asarray(doc_offsets, dtype=np.int64), side="left")
    lines = toc_section_lines(covered, lengths, types, doc_blocks, min_headings)
    return np.repeat(lines, lengths) & coverage


def header_end_reference(lines: Sequence[tuple], covered: Sequence[bool], header_gap: int) -> int | None:
    """Plain twin of :func:`header_end` on a page given as its lines: the first line of the first
    run of uncovered lines holding at least ``header_gap`` tokens, or None."""
    stretch = 0
    for i in range(len(lines)):
        if covered[i]:
            stretch = 0
            continue
        stretch += len(lines[i])
        if stretch >= header_gap:
            j = i  # the run's first line
            while j > 0 and not covered[j - 1]:
                j -= 1
            return j
    return None


def toc_section_lines_reference(pages: Sequence[Sequence[tuple]], covered: Sequence[Sequence[bool]],
                                min_headings: int, header_gap: int = HEADER_GAP,
                                entry_length: int = ENTRY_LENGTH) -> list[list[bool]]:
    """Plain twin of :func:`toc_section_lines`: ``pages[d]`` the lines of page d (token tuples),
    ``covered[d]`` whether each is covered; per page, the lines given back to the content."""
    out = []
    for lines, cov in zip(pages, covered):
        n = len(lines)
        back = [False] * n
        out.append(back)
        if min_headings <= 0:
            continue
        header = header_end_reference(lines, cov, header_gap)
        if header is None:
            continue
        headings = []
        for k in range(header):
            if not cov[k] or len(lines[k]) > entry_length:
                continue
            copies = [h for h in range(header, n) if lines[h] == lines[k]]
            if copies and (not headings or copies[0] > headings[-1]):
                headings.append(copies[0])
        if len(headings) < min_headings or any(b - a == 1 for a, b in zip(headings, headings[1:])):
            continue
        i = header
        while i < n:
            if not cov[i]:
                i += 1
                continue
            e = i
            while e < n and cov[e]:
                e += 1
            first = next((k for k in range(i, e) if k in headings), None)
            if first is not None:
                back[first:e] = [True] * (e - first)
            i = e
    return out
