"""Page skeletons: the variable navigation between frequent lines, reached from the page edges.

Repetition alone cannot find navigation that differs on every page: a local table of
contents, "Previous: <title>" links, a breadcrumb ending in the page's own title, the list
of languages a page exists in. But such lines sit *between* lines that do repeat ("On this
page", "Navigation", "Quick search", "Copyright ..."), in the header and footer of the page,
and the pairs of repeated lines around them repeat too. This pass walks each page from its
start forwards and from its end backwards along its **anchors** and fills the gaps between
them while the walk stays plausible; it stops at the first step that is not, so the middle
of a page (the content) is never reached through an implausible step.

Per group (site) of ``n`` documents with ``sigma = group_sigma(n, ...)``:

* a line's **type** is its token sequence (slots applied); its df is the number of the
  group's documents holding it as a whole line; a type is **frequent** when df >= sigma;
* a line's **class** (anchors only): its type when df >= ``strong = max(sigma,
  ceil(anchor_fraction * n))`` (a line on most pages: "Navigation", "Quick search");
  else, for a line of at most ``echo_length`` tokens, its longest prefix of 2-4 tokens
  that starts >= ``strong`` lines of more tokens ("Available Languages: ...", "Apache >
  HTTP Server > ... > <section>"; long lines are prose or formulas, never such bars); else its
  type when the earlier passes already cover it (``detected``); else none (not an anchor).
  A line of numbers only (all slots: a code listing's line numbers) anchors only when
  detected and never seeds a box: however often it repeats, it is no evidence;
* a **step** joins consecutive anchors of one page (the page start and end are anchors
  "^" and "$"); the lines between them are its **gap**; a step's class pair is
  **frequent** when >= sigma documents of the group hold that step;
* a line is an **echo** when its type occurs again in the same page (a local table of
  contents repeats the page's headings; a breadcrumb repeats its title);
* a gap line is **navigation-like** when it is rare and at most ``line_length`` tokens
  long (or an echo of at most ``echo_length``), or frequent and at most ``echo_length``
  tokens long (a menu entry on some of the group's pages);
* a step is **good** when: its gap is empty and its pair is frequent, or both anchors were
  detected, or neither anchor is a page edge (two lines that are each on most pages or
  already found, side by side); or, never for the page's largest gap (the content), its gap
  is non-empty and: every gap line is an echo of at most ``echo_length`` tokens and neither
  anchor is a page edge; or every gap line is navigation-like and the pair is frequent; or
  every gap line is navigation-like, the step comes before the largest gap, does not start
  at the page start and its gap holds >= ``toc_min_lines`` lines repeated later in the page
  (a sidebar holding the page's table of contents, whatever the pages around it hold);
* the **walks**: from "^" forwards, every good step is covered (both anchors and the gap)
  until the first step that is not; likewise from "$" backwards;
* **echo extension**: after the header the walk goes on over echo lines (a table of
  contents before the headings it lists, or the second copy of the sidebar's) but stops at
  a line equal to the line before it within the first two lines after the header (a
  breadcrumb's last item followed by the same title as the page's heading: the heading is
  content; deeper in a list, "array" then "ARRAY" are two entries); before the footer, over lines whose type
  came earlier and does not come again (a table of contents after the headings it lists).
  Both stop at the first line that is not such an echo or is longer than ``echo_length``.
  With ``site_echo_length`` > 0 the forward extension also takes lines of at most that many
  tokens that occur on another page of the group (a site map's or a chapter list's entries
  are other pages' titles); 0 switches this off.
* **tables of contents**, anywhere in the page (a "quick view" box between the page's
  summary and its body): a run of >= ``toc_min_lines`` **entries**, rare lines of at most
  ``toc_line_length`` tokens that occur exactly twice in the page, whose second copies
  (the headings) come after the run, in the same order and never adjacent (text between
  headings; a repeated code block's copies are adjacent). The run is covered with the
  frequent title line of at most ``TITLE_LENGTH`` tokens just before it ("Topics") and
  the lines just after it of at most ``line_length`` tokens that are frequent or occur on
  another page of the group and occur once in the page (a "See also" list of other pages'
  titles). ``toc_min_lines`` 0 switches this off.
* **boxes**, between the header and the footer: a run of >= ``box_min_lines`` lines of at
  most ``line_length`` tokens, each on >= ``box_fraction`` of the group's documents (and
  >= sigma), is a box of links in the page's middle ("Bugfix checklist / httpd changelog /
  Known issues / Report a bug" inside Apache's quick-view box); it is covered with its
  neighbours backwards and forwards while they are a frequent title of at most
  ``TITLE_LENGTH`` tokens, an echo of at most ``echo_length`` tokens or a rare line of at
  most ``line_length`` tokens on another page of the group; forwards it stops at a line
  whose type came earlier in the page (the first heading its table of contents listed).
  ``box_min_lines`` 0 switches this off.

The same rules, with the same kernel, are applied to new documents at ingest from a
:class:`PageSkeleton` (the group's classes and frequent pairs), see
:mod:`bloomspan.ingest.match.template_matcher`. Nothing here changes exact MCFP mining.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numba import njit

from bloomspan.engine.text.slots import SLOT_ID, SLOT_TOKEN

from .blocks import block_documents, block_types, distinct_documents, span_hashes, tokens_of_blocks
from .config import SkeletonConfig
from .scoped_mining import group_sigma

PREFIX_LENGTHS = (4, 3, 2)  # longest first
TITLE_LENGTH = 3  # longest title line ("Topics", "See also") taken next to a table of contents or a box
START_KEY, END_KEY = ("^",), ("$",)
_FREQUENT, _SITE_ECHO, _SHARED, _BOX_SEED, _ANCHOR = 1, 2, 4, 8, 16  # line flag bits (PageSkeleton._line_flags)
_START, _END = -1, -2


class SkeletonLines(NamedTuple):
    """The per-line arrays :func:`skeleton_kernel` reads, for a batch of D pages of B lines
    (mining: a corpus; ingest: a batch of new pages). All int64 or bool, shape (B,) unless said.

    doc_blocks:       int64 (D+1,): page d's lines are ``doc_blocks[d]:doc_blocks[d+1]``.
    cls:              the line's anchor class, -1: no anchor.
    block_len:        the line's tokens.
    rare:             bool: the line is not frequent in its group (df < sigma).
    echo_before / echo_after: bool: the line's type occurs earlier / later in its page.
    repeats_previous: bool: same type as the line before it in its page.
    elsewhere:        bool: a short line on another page of the group (site echoes), or all False.
    detected:         bool: the other passes cover the line.
    next_same:        int64: the next line of the same type in the page, -1: none.
    shared:           bool: the line occurs on another page of the group.
    box_seed:         bool: a short line on >= box_fraction of the group's pages.
    """

    doc_blocks: np.ndarray
    cls: np.ndarray
    block_len: np.ndarray
    rare: np.ndarray
    echo_before: np.ndarray
    echo_after: np.ndarray
    repeats_previous: np.ndarray
    elsewhere: np.ndarray
    detected: np.ndarray
    next_same: np.ndarray
    shared: np.ndarray
    box_seed: np.ndarray


class SkeletonLimits(NamedTuple):
    """The integer knobs of :class:`~.config.SkeletonConfig` the kernel reads (:func:`skeleton_limits`)."""

    line_length: int
    echo_length: int
    toc_min_lines: int
    toc_line_length: int
    box_min_lines: int


def skeleton_limits(config: SkeletonConfig) -> SkeletonLimits:
    return SkeletonLimits(config.line_length, config.echo_length, config.toc_min_lines, config.toc_line_length,
                          config.box_min_lines)


# --------------------------------------------------------------------------- the walk
@njit(cache=True, nogil=True)
def _pair_ok(ok_keys, n_cls, a, b):
    key = (a + 2) * (n_cls + 2) + (b + 2)
    i = np.searchsorted(ok_keys, key)
    return i < ok_keys.shape[0] and ok_keys[i] == key


@njit(cache=True, nogil=True)
def skeleton_kernel(docs, lines, ok_keys, n_cls, limits, out):
    """Mark ``out[b] = True`` (bool (B,)) for every line the walks, echo extensions, tables of
    contents and boxes of the module docstring cover, for each page of ``docs`` (int64 indices
    into ``lines.doc_blocks``). ``lines``: a :class:`SkeletonLines` bundle; ``ok_keys``: sorted
    int64 keys ``(a+2)*(n_cls+2)+(b+2)`` of the frequent class pairs (page start -1, page end
    -2); ``limits``: a :class:`SkeletonLimits`."""
    doc_blocks = lines.doc_blocks
    for k in range(docs.shape[0]):
        d = docs[k]
        b0, b1 = doc_blocks[d], doc_blocks[d + 1]
        if b1 > b0:
            walk_page(b0, b1, lines, ok_keys, n_cls, limits.line_length, limits.echo_length, limits.toc_min_lines,
                      limits.toc_line_length, limits.box_min_lines, out)


@njit(cache=True, nogil=True)
def walk_page(b0, b1, lines, ok_keys, n_cls, line_length, echo_length, toc_min_lines, toc_line_length, box_min_lines,
              out):
    """:func:`skeleton_kernel` on one page, lines ``b0:b1`` (non-empty) of ``lines``, with one
    skeleton's frequent pairs ``ok_keys`` / ``n_cls`` and its limits as integers."""
    cls, block_len, rare = lines.cls, lines.block_len, lines.rare
    echo_before, echo_after, repeats_previous = lines.echo_before, lines.echo_after, lines.repeats_previous
    elsewhere, detected, next_same, shared, box_seed = (lines.elsewhere, lines.detected, lines.next_same, lines.shared,
                                                         lines.box_seed)
    # anchors with the page edges as sentinels: pos = block index, c = class
    n_anchor = 0
    for b in range(b0, b1):
        if cls[b] >= 0:
            n_anchor += 1
    pos = np.empty(n_anchor + 2, dtype=np.int64)
    cl = np.empty(n_anchor + 2, dtype=np.int64)
    pos[0], cl[0] = b0 - 1, _START
    j = 1
    for b in range(b0, b1):
        if cls[b] >= 0:
            pos[j], cl[j] = b, cls[b]
            j += 1
    pos[j], cl[j] = b1, _END
    n_steps = n_anchor + 1
    gap_tokens = np.zeros(n_steps, dtype=np.int64)
    largest = 0
    for s in range(n_steps):
        for b in range(pos[s] + 1, pos[s + 1]):
            gap_tokens[s] += block_len[b]
        if gap_tokens[s] > gap_tokens[largest]:
            largest = s
    good = np.zeros(n_steps, dtype=np.bool_)
    for s in range(n_steps):
        a, c = cl[s], cl[s + 1]
        g0, g1 = pos[s] + 1, pos[s + 1]
        if g1 == g0:
            good[s] = (a != _START and c != _END) or _pair_ok(ok_keys, n_cls, a, c) or (
                (a == _START or detected[pos[s]]) and (c == _END or detected[pos[s + 1]]))
            continue
        if s == largest:
            continue
        all_echo = a != _START and c != _END
        navigation = True
        toc_lines = 0
        for b in range(g0, g1):
            echo = (echo_before[b] or echo_after[b]) and block_len[b] <= echo_length
            if not echo:
                all_echo = False
            elif echo_after[b]:
                toc_lines += 1
            if not (((block_len[b] <= line_length or echo) and rare[b])
                    or (not rare[b] and block_len[b] <= echo_length)):
                navigation = False
        good[s] = all_echo or (navigation and (
            _pair_ok(ok_keys, n_cls, a, c)
            or (s < largest and a != _START and toc_min_lines > 0 and toc_lines >= toc_min_lines)))
    header_end = b0 - 1  # last block reached from the start
    footer_start = b1  # first block reached from the end
    for direction in range(2):
        for t in range(n_steps):
            s = t if direction == 0 else n_steps - 1 - t
            if not good[s]:
                break
            lo = pos[s] if cl[s] != _START else pos[s] + 1
            hi = pos[s + 1] if cl[s + 1] != _END else pos[s + 1] - 1
            for b in range(lo, hi + 1):
                out[b] = True
            if direction == 0:
                header_end = pos[s + 1]
            else:
                footer_start = pos[s]
    if header_end < footer_start:
        if box_min_lines > 0:
            _cover_boxes(header_end + 1, footer_start, block_len, rare, echo_before, echo_after, shared, box_seed,
                         line_length, echo_length, box_min_lines, out)
        x = header_end + 1
        while x < footer_start and (echo_after[x] or echo_before[x] or elsewhere[x]) \
                and not (repeats_previous[x] and x - header_end <= 2) \
                and block_len[x] <= echo_length:
            out[x] = True
            x += 1
        stop = x
        x = footer_start - 1
        while x >= stop and echo_before[x] and not echo_after[x] and block_len[x] <= echo_length:
            out[x] = True
            x -= 1
    if toc_min_lines > 0:
        _cover_tables_of_contents(b0, b1, block_len, rare, echo_before, next_same, shared, line_length,
                                  toc_min_lines, toc_line_length, out)


@njit(cache=True, nogil=True)
def _box_neighbour(b, block_len, rare, echo_before, echo_after, shared, line_length, echo_length):
    """Whether block ``b`` next to a box belongs to it: a short frequent title, an echo of at
    most ``echo_length`` tokens, or a rare line of at most ``line_length`` tokens that is on
    another page of the group (another page's title)."""
    echo = (echo_before[b] or echo_after[b]) and block_len[b] <= echo_length
    if block_len[b] > line_length and not echo:
        return False
    return (not rare[b] and block_len[b] <= TITLE_LENGTH) or echo or (rare[b] and shared[b])


@njit(cache=True, nogil=True)
def _cover_boxes(lo, hi, block_len, rare, echo_before, echo_after, shared, box_seed, line_length, echo_length,
                 box_min_lines, out):
    """In the page's middle ``[lo, hi)``: a run of >= ``box_min_lines`` seed lines (a box of
    links on a large share of the pages, e.g. "Bugfix checklist / httpd changelog / Known
    issues") and its neighbours (:func:`_box_neighbour`) backwards, and forwards up to the
    first line whose type came earlier in the page (a heading its table of contents listed)."""
    b = lo
    while b < hi:
        if not box_seed[b]:
            b += 1
            continue
        e = b
        while e < hi and box_seed[e]:
            e += 1
        if e - b < box_min_lines:
            b = e
            continue
        for x in range(b, e):
            out[x] = True
        k = b - 1
        while k >= lo and _box_neighbour(k, block_len, rare, echo_before, echo_after, shared, line_length,
                                         echo_length):
            out[k] = True
            k -= 1
        k = e
        while k < hi and not echo_before[k] and _box_neighbour(k, block_len, rare, echo_before, echo_after, shared,
                                                                line_length, echo_length):
            out[k] = True
            k += 1
        b = k


@njit(cache=True, nogil=True)
def _toc_entry(b, block_len, rare, echo_before, next_same, toc_line_length):
    """The later copy of block ``b`` when ``b`` can be a table-of-contents entry (a rare
    line of at most ``toc_line_length`` tokens on the page exactly twice, this being the
    first copy), else -1."""
    n = next_same[b]
    if n < 0 or not rare[b] or echo_before[b] or block_len[b] > toc_line_length or next_same[n] >= 0:
        return -1
    return n


@njit(cache=True, nogil=True)
def _cover_tables_of_contents(b0, b1, block_len, rare, echo_before, next_same, shared, line_length,
                              toc_min_lines, toc_line_length, out):
    """Anywhere in the page ``[b0, b1)``: a run of >= ``toc_min_lines`` entries whose second
    copies come after the run, in the same order, never adjacent (headings with text between
    them), plus the short frequent title just before it ("Topics", "Contents") and the short
    lines after it that are frequent or on another page and never repeated in the page (a
    "See also" list of other pages' titles)."""
    x = b0
    while x < b1:
        e = x
        prev = -1
        while e < b1:
            n = _toc_entry(e, block_len, rare, echo_before, next_same, toc_line_length)
            if n < 0 or (prev >= 0 and n - prev < 2):
                break
            prev = n
            e += 1
        if e - x < toc_min_lines or next_same[x] < e:
            x += 1
            continue
        for b in range(x, e):
            out[b] = True
        if x > b0 and not rare[x - 1] and block_len[x - 1] <= TITLE_LENGTH:
            out[x - 1] = True
        while e < b1 and block_len[e] <= line_length and (shared[e] or not rare[e]) \
                and next_same[e] < 0 and not echo_before[e]:
            out[e] = True
            e += 1
        x = e


def skeleton_reference(doc_lines: Sequence[Sequence[Mapping]], ok_pairs: set, params: SkeletonConfig
                       ) -> list[list[bool]]:
    """Plain twin of :func:`skeleton_kernel`, one page at a time. ``doc_lines[d][i]`` is a
    dict with ``cls`` (hashable or None), ``len``, ``rare``, ``detected``, ``elsewhere``,
    ``shared``, ``box_seed`` and ``type`` (hashable); ``ok_pairs``: set of frequent (class, class) pairs
    with "^"/"$" for the page edges. Echo flags and later copies are derived from ``type``."""
    out = []
    for lines in doc_lines:
        n = len(lines)
        covered = [False] * n
        types = [ln["type"] for ln in lines]
        before = [types[i] in types[:i] for i in range(n)]
        after = [types[i] in types[i + 1:] for i in range(n)]
        copies = [[j for j in range(n) if types[j] == types[i]] for i in range(n)]
        anchors = [(-1, "^")] + [(i, ln["cls"]) for i, ln in enumerate(lines) if ln["cls"] is not None] + [(n, "$")]
        steps = list(zip(anchors, anchors[1:]))
        gaps = [sum(lines[i]["len"] for i in range(pa + 1, pb)) for (pa, _), (pb, _) in steps]
        largest = gaps.index(max(gaps)) if gaps else 0

        def is_echo(i):
            return (before[i] or after[i]) and lines[i]["len"] <= params.echo_length

        def navigation_like(i):
            ln = lines[i]
            return (ln["rare"] and (ln["len"] <= params.line_length or is_echo(i))) or (
                not ln["rare"] and ln["len"] <= params.echo_length)

        def good(k):
            (pa, ca), (pb, cb) = steps[k]
            gap = range(pa + 1, pb)
            if not gap:
                return (ca != "^" and cb != "$") or (ca, cb) in ok_pairs or (
                    (ca == "^" or lines[pa]["detected"]) and (cb == "$" or lines[pb]["detected"]))
            if k == largest:
                return False
            if ca != "^" and cb != "$" and all(is_echo(i) for i in gap):
                return True
            if not all(navigation_like(i) for i in gap):
                return False
            toc_lines = sum(1 for i in gap if is_echo(i) and after[i])
            return (ca, cb) in ok_pairs or (k < largest and ca != "^" and params.toc_min_lines > 0
                                            and toc_lines >= params.toc_min_lines)

        header_end, footer_start = -1, n
        for order in (range(len(steps)), reversed(range(len(steps)))):
            forward = isinstance(order, range)
            for k in order:
                if not good(k):
                    break
                (pa, _), (pb, _) = steps[k]
                for i in range(max(pa, 0), min(pb, n - 1) + 1):
                    covered[i] = True
                if forward:
                    header_end = pb
                else:
                    footer_start = pa
        if header_end < footer_start:
            if params.box_min_lines > 0:
                _boxes_reference(lines, before, after, range(header_end + 1, footer_start), covered, params)
            x = header_end + 1
            while (x < footer_start and (after[x] or before[x] or lines[x]["elsewhere"])
                   and not (x > 0 and types[x] == types[x - 1] and x - header_end <= 2)
                   and lines[x]["len"] <= params.echo_length):
                covered[x] = True
                x += 1
            stop = x
            x = footer_start - 1
            while x >= stop and before[x] and not after[x] and lines[x]["len"] <= params.echo_length:
                covered[x] = True
                x -= 1
        if params.toc_min_lines > 0:
            _tables_of_contents_reference(lines, copies, covered, params)
        out.append(covered)
    return out


def _boxes_reference(lines: Sequence[Mapping], before: list, after: list, middle: range, covered: list,
                     params: SkeletonConfig) -> None:
    """Plain twin of :func:`_cover_boxes` on the page's ``middle`` lines."""
    def neighbour(i):
        ln = lines[i]
        echo = (before[i] or after[i]) and ln["len"] <= params.echo_length
        if ln["len"] > params.line_length and not echo:
            return False
        return (not ln["rare"] and ln["len"] <= TITLE_LENGTH) or echo or (ln["rare"] and ln["shared"])

    b = middle.start
    while b < middle.stop:
        run = 0
        while b + run < middle.stop and lines[b + run]["box_seed"]:
            run += 1
        if run == 0 or run < params.box_min_lines:
            b += max(run, 1)
            continue
        for i in range(b, b + run):
            covered[i] = True
        k = b - 1
        while k >= middle.start and neighbour(k):
            covered[k] = True
            k -= 1
        k = b + run
        while k < middle.stop and not before[k] and neighbour(k):
            covered[k] = True
            k += 1
        b = k


def _tables_of_contents_reference(lines: Sequence[Mapping], copies: Sequence[list], covered: list,
                                  params: SkeletonConfig) -> None:
    """Plain twin of :func:`_cover_tables_of_contents` (``copies[i]``: the positions of line
    ``i``'s type in the page)."""
    n = len(lines)

    def second_copy(i):  # an entry: a rare short line on the page exactly twice, i the first
        ln = lines[i]
        ok = ln["rare"] and ln["len"] <= params.toc_line_length and len(copies[i]) == 2 and copies[i][0] == i
        return copies[i][1] if ok else None

    x = 0
    while x < n:
        run = []
        for i in range(x, n):
            later = second_copy(i)
            if later is None or (run and later - run[-1] < 2):
                break
            run.append(later)
        e = x + len(run)
        if len(run) < params.toc_min_lines or run[0] < e:
            x += 1
            continue
        for i in range(x, e):
            covered[i] = True
        if x > 0 and not lines[x - 1]["rare"] and lines[x - 1]["len"] <= TITLE_LENGTH:
            covered[x - 1] = True
        while (e < n and lines[e]["len"] <= params.line_length and (lines[e]["shared"] or not lines[e]["rare"])
               and len(copies[e]) == 1):
            covered[e] = True
            e += 1
        x = e


# --------------------------------------------------------------------------- helpers
def _lookup(keys: np.ndarray, values: np.ndarray, query: np.ndarray, default: int) -> np.ndarray:
    """int64: ``values`` at ``query``'s place in sorted ``keys``, ``default`` where absent."""
    if keys.shape[0] == 0:
        return np.full(query.shape[0], default, dtype=np.int64)
    i = np.minimum(np.searchsorted(keys, query), keys.shape[0] - 1)
    return np.where(keys[i] == query, values[i], default).astype(np.int64)


def echo_flags(types: np.ndarray, block_doc: np.ndarray, next_same: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """bool (B,) three times: the block's type occurs earlier / later in the same document;
    the block before it in its document has the same type. ``next_same``: the blocks'
    :func:`next_same_type`, when the caller has it already (computed here otherwise)."""
    n = types.shape[0]
    if next_same is None:
        next_same = next_same_type(types, block_doc)
    after = next_same >= 0
    before = np.zeros(n, dtype=bool)
    before[next_same[after]] = True
    repeats = np.zeros(n, dtype=bool)
    if n:
        repeats[1:] = (types[1:] == types[:-1]) & (block_doc[1:] == block_doc[:-1])
    return before, after, repeats


def next_same_type(types: np.ndarray, block_doc: np.ndarray) -> np.ndarray:
    """int64 (B,): the next block of the same type in the same document, -1 where none."""
    n = types.shape[0]
    out = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return out
    order = np.lexsort((np.arange(n), types, block_doc))  # by doc, type, position
    same = (block_doc[order][1:] == block_doc[order][:-1]) & (types[order][1:] == types[order][:-1])
    out[order[:-1][same]] = order[1:][same]
    return out


def prefix_hashes(tokens: np.ndarray, block_offsets: np.ndarray, p: int) -> np.ndarray:
    """uint64 (B,): a hash of the first ``p`` tokens of each block longer than ``p`` tokens
    (never 0), else 0 (:func:`.blocks.span_hashes`)."""
    starts = block_offsets[:-1]
    longer = np.flatnonzero(np.diff(block_offsets) > p)
    hashed = np.empty(longer.shape[0], dtype=np.uint64)
    with np.errstate(over="ignore"):
        span_hashes(np.ascontiguousarray(tokens, dtype=np.uint32), starts[longer], starts[longer] + p, hashed)
    out = np.zeros(block_offsets.shape[0] - 1, dtype=np.uint64)
    out[longer] = hashed | np.uint64(1)
    return out


def _df_per_group(keys: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """int64 (N,): for each row of ``keys`` (int64 (N, K)), the distinct documents of its key."""
    group, df, _ = distinct_documents(keys, docs)
    return df[group] if group.shape[0] else np.zeros(0, np.int64)


# --------------------------------------------------------------------------- the model
@dataclass(frozen=True, kw_only=True)
class PageSkeleton:
    """What applying the pass to new pages of one group needs (token tuples are ids in
    mining, strings in records). ``pairs`` hold class keys: ("line", tokens),
    ("prefix", tokens), START_KEY or END_KEY."""

    scope: str | None
    sigma: int
    documents: int
    anchor_lines: frozenset
    anchor_prefixes: frozenset
    frequent_lines: frozenset
    pairs: frozenset
    params: SkeletonConfig = field(default_factory=SkeletonConfig)
    site_echo_lines: frozenset = frozenset()  # lines on >= 2 pages, <= params.site_echo_length tokens
    shared_lines: frozenset = frozenset()  # rare lines on >= 2 pages, <= params.line_length tokens
    box_seed_lines: frozenset = frozenset()  # lines on >= box_fraction of the pages, <= params.line_length tokens

    def to_record(self, token_text: Callable[[int], str]) -> dict:
        """JSON form (kind "skeleton"), read back by :meth:`from_record`."""
        def words(t):
            return [SLOT_TOKEN if x == SLOT_ID else token_text(x) for x in t]

        def key(k):
            return list(k) if k in (START_KEY, END_KEY) else [k[0], words(k[1])]
        rec = {"kind": "skeleton", "sigma": self.sigma, "documents": self.documents,
               "params": self.params.to_dict(),
               "site_echo_lines": sorted(words(t) for t in self.site_echo_lines),
               "shared_lines": sorted(words(t) for t in self.shared_lines),
               "box_seed_lines": sorted(words(t) for t in self.box_seed_lines),
               "anchor_lines": sorted(words(t) for t in self.anchor_lines),
               "anchor_prefixes": sorted(words(t) for t in self.anchor_prefixes),
               "frequent_lines": sorted(words(t) for t in self.frequent_lines),
               "pairs": sorted([key(a), key(b)] for a, b in self.pairs)}
        if self.scope is not None:
            rec["scope"] = self.scope
        return rec

    @classmethod
    def from_record(cls, rec: Mapping, where: str = "record") -> PageSkeleton:
        """Inverse of :meth:`to_record` (tokens stay strings). Raises ValueError naming the key."""
        def need(name, typ):
            v = rec.get(name)
            if not isinstance(v, typ):
                raise ValueError(f"{where}: skeleton key {name!r}={v!r}: must be a {typ.__name__}")
            return v

        def key(k):
            if k in (list(START_KEY), list(END_KEY)):
                return tuple(k)
            if (not isinstance(k, list) or len(k) != 2 or k[0] not in ("line", "prefix")
                    or not isinstance(k[1], list)):
                raise ValueError(f"{where}: skeleton pair entry {k!r}: must be ['^'], ['$'] or "
                                 "['line'|'prefix', [tokens]]")
            return (k[0], tuple(k[1]))
        try:
            params = SkeletonConfig.from_record(need("params", dict))
        except ValueError as exc:
            raise ValueError(f"{where}: skeleton key 'params': {exc}") from None
        pairs = need("pairs", list)
        if not all(isinstance(x, list) and len(x) == 2 for x in pairs):
            raise ValueError(f"{where}: skeleton key 'pairs': must be a list of [class, class]")
        return cls(scope=rec.get("scope"), sigma=int(need("sigma", int)), documents=int(need("documents", int)),
                   anchor_lines=frozenset(tuple(t) for t in need("anchor_lines", list)),
                   anchor_prefixes=frozenset(tuple(t) for t in need("anchor_prefixes", list)),
                   frequent_lines=frozenset(tuple(t) for t in need("frequent_lines", list)),
                   pairs=frozenset((key(a), key(b)) for a, b in pairs), params=params,
                   site_echo_lines=frozenset(tuple(t) for t in rec.get("site_echo_lines", [])),
                   shared_lines=frozenset(tuple(t) for t in rec.get("shared_lines", [])),
                   box_seed_lines=frozenset(tuple(t) for t in rec.get("box_seed_lines", [])))

    def classify(self, line: tuple, detected: bool):
        """Class key of one line (token tuple) or None (not an anchor)."""
        if line in self.anchor_lines:
            return ("line", line)
        for p in PREFIX_LENGTHS:
            if p < len(line) <= self.params.echo_length and line[:p] in self.anchor_prefixes:
                return ("prefix", line[:p])
        return ("line", line) if detected else None

    @functools.cached_property
    def _pair_table(self) -> tuple[dict, np.ndarray, int]:
        """(class key -> id, sorted int64 kernel keys of the frequent pairs, n_cls): built once;
        every class not in a pair shares the id ``n_cls - 1`` (no pair holds it)."""
        ids: dict = {START_KEY: _START, END_KEY: _END}
        for a, b in self.pairs:
            ids.setdefault(a, len(ids) - 2)
            ids.setdefault(b, len(ids) - 2)
        n_cls = len(ids) - 1  # + the shared id of classes outside every pair
        keys = np.asarray(sorted((ids[a] + 2) * (n_cls + 2) + (ids[b] + 2) for a, b in self.pairs), dtype=np.int64)
        return ids, keys, n_cls

    @functools.cached_property
    def _line_flags(self) -> dict:
        """line -> bits (_FREQUENT, _SITE_ECHO, _SHARED, _BOX_SEED, _ANCHOR) of the model's line sets."""
        table: dict = {}
        for bit, group in ((_FREQUENT, self.frequent_lines), (_SITE_ECHO, self.site_echo_lines),
                           (_SHARED, self.shared_lines), (_BOX_SEED, self.box_seed_lines),
                           (_ANCHOR, self.anchor_lines)):
            for t in group:
                table[t] = table.get(t, 0) | bit
        return table

    def map_tokens(self, mapping: Callable) -> PageSkeleton:
        """The same skeleton with every token ``t`` replaced by ``mapping(t)`` (e.g. strings
        to integer ids, which makes line keys cheap to build at ingest)."""
        def line(t):
            return tuple(mapping(x) for x in t)

        def key(k):
            return k if k in (START_KEY, END_KEY) else (k[0], line(k[1]))
        return dataclasses.replace(
            self, anchor_lines=frozenset(map(line, self.anchor_lines)),
            anchor_prefixes=frozenset(map(line, self.anchor_prefixes)),
            frequent_lines=frozenset(map(line, self.frequent_lines)),
            pairs=frozenset((key(a), key(b)) for a, b in self.pairs),
            site_echo_lines=frozenset(map(line, self.site_echo_lines)),
            shared_lines=frozenset(map(line, self.shared_lines)), box_seed_lines=frozenset(map(line, self.box_seed_lines)))

    def tokens(self) -> set:
        """Every token the skeleton's lines, prefixes and pairs hold."""
        out = set()
        for group in (self.anchor_lines, self.anchor_prefixes, self.frequent_lines, self.site_echo_lines,
                      self.shared_lines, self.box_seed_lines):
            for t in group:
                out.update(t)
        for a, b in self.pairs:
            for k in (a, b):
                if k not in (START_KEY, END_KEY):
                    out.update(k[1])
        return out

    @functools.cached_property
    def _class_ids(self) -> tuple[dict, dict]:
        """(line -> kernel id, prefix -> kernel id) of the classes the frequent pairs hold."""
        ids = self._pair_table[0]
        return ({k[1]: i for k, i in ids.items() if k[0] == "line"},
                {k[1]: i for k, i in ids.items() if k[0] == "prefix"})

    @functools.cached_property
    def _hashed(self) -> tuple:
        """The model's lines as sorted uint64 hashes (:func:`.blocks.span_hashes` of their
        token ids; integer tokens only, see :meth:`map_tokens`), for :meth:`cover_token_lines`:
        (flag hashes, flag bits, line-class hashes, ids, prefix hashes, ids)."""
        def hashed(lines: list) -> np.ndarray:
            if not lines:
                return np.zeros(0, dtype=np.uint64)
            lengths = np.asarray([len(t) for t in lines], dtype=np.int64)
            ends = np.cumsum(lengths)
            out = np.empty(len(lines), dtype=np.uint64)
            with np.errstate(over="ignore"):
                span_hashes(np.asarray([x for t in lines for x in t], dtype=np.uint32), ends - lengths, ends, out)
            return out

        def table(mapping: dict) -> tuple[np.ndarray, np.ndarray]:
            keys = hashed(list(mapping))
            values = np.asarray(list(mapping.values()), dtype=np.int64)
            order = np.argsort(keys, kind="stable")
            return keys[order], values[order]
        line_id, prefix_id = self._class_ids
        other = self._pair_table[2] - 1
        prefixes = {t: prefix_id.get(t, other) for t in self.anchor_prefixes}
        return (*table(self._line_flags), *table(line_id), *table(prefixes))

    @property
    def kernel_tables(self) -> tuple:
        """(flag hashes, flag bits, line-class hashes, ids, prefix hashes, ids, pair keys, n_cls):
        the sorted lookup tables :meth:`cover_token_lines` reads, for :mod:`.skeleton_set`."""
        _, keys, n_cls = self._pair_table
        return (*self._hashed, keys, n_cls)

    def cover_token_lines(self, tokens: np.ndarray, line_starts: np.ndarray, line_ends: np.ndarray,
                          page_lines: np.ndarray, detected: np.ndarray, single_use: np.ndarray) -> np.ndarray:
        """:meth:`cover_pages` on arrays: bool (L,) for the lines ``tokens[line_starts[i]:
        line_ends[i]]`` (uint32 ids in this model's integer token space; lines of page p are
        ``page_lines[p]:page_lines[p+1]``), ``detected``/``single_use`` bool (L,). Lines are
        compared by 64-bit hash (:func:`.blocks.span_hashes`, length mixed in) instead of
        token by token: no Python work per line; two different lines of a batch collide with
        probability about L**2 / 2**64."""
        fh, fb, lh, li, ph, pi = self._hashed
        ids, keys, n_cls = self._pair_table
        other = n_cls - 1
        tokens = np.ascontiguousarray(tokens, dtype=np.uint32)
        starts = np.asarray(line_starts, dtype=np.int64)
        ends = np.asarray(line_ends, dtype=np.int64)
        lengths = ends - starts
        n = starts.shape[0]
        h = np.empty(n, dtype=np.uint64)
        with np.errstate(over="ignore"):
            span_hashes(tokens, starts, ends, h)
        flags = _lookup(fh, fb, h, 0)
        single = np.asarray(single_use, dtype=bool)
        det = np.asarray(detected, dtype=bool)
        cls = np.where((flags & _ANCHOR != 0) & ~single, _lookup(lh, li, h, other), -1)
        echo_length = self.params.echo_length
        for p in PREFIX_LENGTHS:
            cand = np.flatnonzero((cls < 0) & ~single & (lengths > p) & (lengths <= echo_length))
            if cand.shape[0] == 0 or ph.shape[0] == 0:
                continue
            hp = np.empty(cand.shape[0], dtype=np.uint64)
            with np.errstate(over="ignore"):
                span_hashes(tokens, starts[cand], starts[cand] + p, hp)
            cls[cand] = _lookup(ph, pi, hp, -1)
        late = (cls < 0) & det
        cls[late] = _lookup(lh, li, h[late], other)
        types = np.unique(h, return_inverse=True)[1].astype(np.int64).reshape(-1)
        page_lines = np.asarray(page_lines, dtype=np.int64)
        block_doc = np.repeat(np.arange(page_lines.shape[0] - 1, dtype=np.int64), np.diff(page_lines))
        next_same = next_same_type(types, block_doc)
        before, after, repeats = echo_flags(types, block_doc, next_same)
        out = np.zeros(n, dtype=bool)
        lines = SkeletonLines(doc_blocks=page_lines, cls=cls, block_len=lengths, rare=(flags & _FREQUENT) == 0,
                              echo_before=before, echo_after=after, repeats_previous=repeats,
                              elsewhere=(flags & _SITE_ECHO) != 0, detected=det, next_same=next_same,
                              shared=(flags & _SHARED) != 0, box_seed=(flags & _BOX_SEED) != 0)
        skeleton_kernel(np.arange(page_lines.shape[0] - 1, dtype=np.int64), lines, keys, n_cls,
                        skeleton_limits(self.params), out)
        return out

    def cover_lines(self, lines: Sequence[tuple], detected: Sequence[bool]) -> np.ndarray:
        """bool (L,): the lines of one page (token tuples, slots applied as in mining) this
        skeleton covers, given which lines the other passes cover (``detected``)."""
        return self.cover_pages([lines], [detected])[0]

    def cover_pages(self, pages: Sequence[Sequence[tuple]], detected: Sequence[Sequence[bool]],
                    single_use: Sequence[Sequence[bool]] | None = None) -> list[np.ndarray]:
        """:meth:`cover_lines` for many pages with one kernel call: per page, bool (L,); the
        plain twin of :meth:`cover_token_lines` (lines as token tuples, :meth:`classify`, the
        model's sets). ``single_use[p][i]``: line i of page p is no anchor unless detected (numbers only), as
        in :func:`mine_skeletons`."""
        ids, keys, n_cls = self._pair_table
        lines = [t for page in pages for t in page]
        det = np.asarray([x for page in detected for x in page], dtype=bool)
        sizes = np.asarray([len(page) for page in pages], dtype=np.int64)
        if det.shape[0] != len(lines):
            raise ValueError("detected: one flag per line of every page")
        doc_blocks = np.zeros(len(pages) + 1, dtype=np.int64)
        np.cumsum(sizes, out=doc_blocks[1:])
        single = [False] * len(lines) if single_use is None else [x for page in single_use for x in page]
        if len(single) != len(lines):
            raise ValueError("single_use: one flag per line of every page")
        cls = np.full(len(lines), -1, dtype=np.int64)
        for i, (line, d, one) in enumerate(zip(lines, det.tolist(), single)):
            k = (("line", line) if d else None) if one else self.classify(line, d)
            if k is not None:
                cls[i] = ids.get(k, n_cls - 1)
        type_ids: dict = {}
        types = np.asarray([type_ids.setdefault(t, len(type_ids)) for t in lines], dtype=np.int64)
        block_doc = np.repeat(np.arange(len(pages), dtype=np.int64), sizes)
        next_same = next_same_type(types, block_doc)
        before, after, repeats = echo_flags(types, block_doc, next_same)
        out = np.zeros(len(lines), dtype=bool)

        def member(lines_of: frozenset) -> np.ndarray:
            return np.asarray([t in lines_of for t in lines], dtype=bool)
        bundle = SkeletonLines(doc_blocks=doc_blocks, cls=cls, block_len=np.asarray([len(t) for t in lines], np.int64),
                               rare=~member(self.frequent_lines), echo_before=before, echo_after=after,
                               repeats_previous=repeats, elsewhere=member(self.site_echo_lines), detected=det,
                               next_same=next_same, shared=member(self.shared_lines),
                               box_seed=member(self.box_seed_lines))
        skeleton_kernel(np.arange(len(pages), dtype=np.int64), bundle, keys, n_cls, skeleton_limits(self.params), out)
        return [out[a:b] for a, b in zip(doc_blocks[:-1].tolist(), doc_blocks[1:].tolist())]


@dataclass
class SkeletonResult:
    """coverage: bool (W,) tokens of the covered lines; skeletons: one per mined group;
    stats: per group documents, sigma, anchors and frequent pairs."""

    coverage: np.ndarray
    skeletons: list[PageSkeleton]
    stats: dict


def mine_skeletons(tokens: np.ndarray, doc_offsets: np.ndarray, block_offsets: np.ndarray,
                   groups: Sequence[str | None] | None, detected_tokens: np.ndarray, sigma_of: Callable[[int], int],
                   params: SkeletonConfig | None = None, single_use: np.ndarray | None = None,
                   anchor_max_length: int | None = None) -> SkeletonResult:
    """Run the pass on a corpus whose other passes cover ``detected_tokens`` (bool (W,)).

    tokens: uint32 (W,) with slots applied; groups: one name (or None: left out) per
    document, or None for one group of all documents (scope None); sigma_of(n): the
    group sigma for n documents; single_use: bool (B,), optional: lines that are no evidence
    of a template however often they repeat (numbers only: a code listing's line numbers), so
    never anchors (unless detected) nor box seeds; they stay lines of the walk and echoes (a
    version list in a changelog's sidebar). :meth:`PageSkeleton.cover_pages` takes the same flags.
    anchor_max_length: lines longer than this many tokens anchor only when detected, never by
    their share of the group's pages (the detector passes TemplateConfig.section_line_length for
    URL sections: a sentence on most pages of one section is its reference text); None: any length.
    The skeleton's anchor sets then lack them, so ingest walks alike.
    """
    params = params or SkeletonConfig()
    tokens = np.ascontiguousarray(tokens, dtype=np.uint32)
    n_docs = doc_offsets.shape[0] - 1
    n_blocks = block_offsets.shape[0] - 1
    coverage = np.zeros(tokens.shape[0], dtype=bool)
    if n_blocks == 0 or n_docs == 0:
        return SkeletonResult(coverage, [], {})
    types, n_types = block_types(tokens, block_offsets)
    single = np.zeros(n_blocks, dtype=bool) if single_use is None else np.asarray(single_use, dtype=bool)  # no anchor
    if single.shape != (n_blocks,):
        raise ValueError(f"single_use has shape {single.shape}: must be ({n_blocks},), one flag per line")
    block_doc = block_documents(block_offsets, doc_offsets)
    block_len = np.diff(block_offsets).astype(np.int64)
    covered_tokens = np.add.reduceat(np.asarray(detected_tokens, dtype=np.int64), block_offsets[:-1])
    detected = covered_tokens * 2 >= block_len
    next_same = next_same_type(types, block_doc)
    before, after, repeats = echo_flags(types, block_doc, next_same)
    doc_blocks = np.searchsorted(block_doc, np.arange(n_docs + 1), side="left").astype(np.int64)

    names = [None] * n_docs if groups is None else list(groups)
    if len(names) != n_docs:
        raise ValueError(f"groups has {len(names)} entries for {n_docs} documents")
    index: dict = {}
    doc_group = np.asarray([-1 if (g is None and groups is not None) else index.setdefault(g, len(index))
                            for g in names], dtype=np.int64)
    group_names = sorted(index, key=lambda g: index[g])
    if not group_names:  # every document left out (e.g. a level whose groups repeat an earlier level's)
        return SkeletonResult(coverage, [], {})
    group_size = np.bincount(doc_group[doc_group >= 0], minlength=len(group_names))
    sigma = np.asarray([sigma_of(int(n)) for n in group_size], dtype=np.int64)
    bgroup = doc_group[block_doc]
    live = bgroup >= 0

    def per_block(per_group: np.ndarray) -> np.ndarray:
        return np.where(live, per_group[np.maximum(bgroup, 0)], 0)

    def share_of_group(fraction: float) -> np.ndarray:
        """int64 (G,): documents that make ``fraction`` of each group, never below its sigma."""
        return np.asarray([group_sigma(int(n), fraction, int(s)) for s, n in zip(sigma, group_size)], dtype=np.int64)
    strong = share_of_group(params.anchor_fraction)
    bsig = per_block(sigma)
    bstrong = per_block(strong)

    type_df = np.zeros(n_blocks, dtype=np.int64)
    type_df[live] = _df_per_group(np.stack([bgroup[live], types[live]], axis=1), block_doc[live])
    rare = type_df < bsig
    elsewhere = live & (type_df >= 2) & (block_len <= params.site_echo_length)
    shared = live & (type_df >= 2)
    box_seed = live & (type_df >= per_block(share_of_group(params.box_fraction))) & (
        block_len <= params.line_length) & ~single
    cls = np.full(n_blocks, -1, dtype=np.int64)
    anchor_length_ok = np.ones(n_blocks, dtype=bool) if anchor_max_length is None else block_len <= anchor_max_length
    is_line_anchor = live & (type_df >= bstrong) & ~single & anchor_length_ok
    cls[is_line_anchor] = types[is_line_anchor]
    prefix_of: dict[int, tuple[int, np.ndarray]] = {}
    next_cls = n_types
    for p in PREFIX_LENGTHS:
        h = prefix_hashes(tokens, block_offsets, p)
        cand = live & (h != 0) & (cls < 0) & (block_len <= params.echo_length) & ~single & anchor_length_ok
        if not cand.any():
            continue
        rows = np.stack([bgroup, h.view(np.int64)], axis=1)
        df = np.zeros(n_blocks, dtype=np.int64)
        has = live & (h != 0)
        df[has] = _df_per_group(rows[has], block_doc[has])
        take = cand & (df >= bstrong)
        if take.any():
            uniq, inv = np.unique(h[take], return_inverse=True)
            cls[take] = next_cls + inv
            for j, c in enumerate(range(next_cls, next_cls + uniq.shape[0])):
                prefix_of[c] = (p, uniq[j])
            next_cls += uniq.shape[0]
    detected_only = live & (cls < 0) & detected
    cls[detected_only] = types[detected_only]
    n_cls = next_cls

    # Steps: per document of a group, its anchors' classes between the page-edge sentinels.
    live_docs = np.flatnonzero(doc_group >= 0)
    stats: dict = {}
    skeletons: list[PageSkeleton] = []
    if live_docs.shape[0] == 0:
        return SkeletonResult(coverage, skeletons, stats)
    anchor_blocks = np.flatnonzero(cls >= 0)  # block order = document order
    per_doc = np.bincount(block_doc[anchor_blocks], minlength=n_docs)[live_docs] + 2
    ends = np.cumsum(per_doc)
    seq = np.empty(int(ends[-1]), dtype=np.int64)
    edge = np.zeros(seq.shape[0], dtype=bool)
    edge[ends - per_doc] = True
    edge[ends - 1] = True
    seq[ends - per_doc] = _START
    seq[ends - 1] = _END
    seq[~edge] = cls[anchor_blocks]
    inside = np.ones(seq.shape[0] - 1, dtype=bool)
    inside[(ends - 1)[:-1]] = False  # no step from one document's end to the next one's start
    sa, sb = seq[:-1][inside], seq[1:][inside]
    sd = np.repeat(live_docs, per_doc - 1)
    sg = doc_group[sd]
    gid, pdf, _ = distinct_documents(np.stack([sg, sa, sb], axis=1), sd)
    frequent = pdf[gid] >= sigma[sg]
    covered_blocks = np.zeros(n_blocks, dtype=bool)
    first_block = np.zeros(n_cls, dtype=np.int64)  # one block of each class, for the model
    has_cls = cls >= 0
    first_block[cls[has_cls][::-1]] = np.flatnonzero(has_cls)[::-1]
    type_first = np.zeros(n_types, dtype=np.int64)  # one block of each type
    type_first[types[::-1]] = np.arange(n_blocks - 1, -1, -1)

    def class_key(c: int) -> tuple:
        if c == _START:
            return START_KEY
        if c == _END:
            return END_KEY
        b = int(first_block[c])
        if c >= n_types:
            p = prefix_of[c][0]
            return ("prefix", tuple(tokens[block_offsets[b]:block_offsets[b] + p].tolist()))
        return ("line", tuple(tokens[block_offsets[b]:block_offsets[b + 1]].tolist()))

    def line_set(blocks: np.ndarray) -> frozenset:
        """The distinct lines (token tuples) of ``blocks``, one tuple per type."""
        firsts = type_first[np.unique(types[blocks])]
        return frozenset(tuple(tokens[block_offsets[b]:block_offsets[b + 1]].tolist()) for b in firsts.tolist())

    lines = SkeletonLines(doc_blocks=doc_blocks, cls=cls, block_len=block_len, rare=rare, echo_before=before,
                          echo_after=after, repeats_previous=repeats, elsewhere=elsewhere, detected=detected,
                          next_same=next_same, shared=shared, box_seed=box_seed)
    limits = skeleton_limits(params)
    block_order = np.argsort(bgroup, kind="stable")
    block_bounds = np.searchsorted(bgroup[block_order], np.arange(len(group_names) + 1))
    doc_order = np.argsort(doc_group, kind="stable")
    doc_bounds = np.searchsorted(doc_group[doc_order], np.arange(len(group_names) + 1))
    step_order = np.argsort(sg, kind="stable")
    step_bounds = np.searchsorted(sg[step_order], np.arange(len(group_names) + 1))
    for g, name in enumerate(group_names):
        docs = np.sort(doc_order[doc_bounds[g]:doc_bounds[g + 1]]).astype(np.int64)
        n = int(docs.shape[0])
        stats_g = {"documents": n, "sigma": int(sigma[g]), "anchor_documents": int(strong[g])}
        if n < sigma[g]:
            stats[str(name)] = {**stats_g, "skipped": "fewer documents than sigma"}
            continue
        steps = step_order[step_bounds[g]:step_bounds[g + 1]]
        steps = steps[frequent[steps]]
        keys = np.unique((sa[steps] + 2) * (n_cls + 2) + (sb[steps] + 2))
        skeleton_kernel(docs, lines, keys, n_cls, limits, covered_blocks)
        blocks = block_order[block_bounds[g]:block_bounds[g + 1]]
        pair_list = {(int(k // (n_cls + 2)) - 2, int(k % (n_cls + 2)) - 2) for k in keys.tolist()}
        prefixes = frozenset(class_key(c)[1] for c in np.unique(cls[blocks][cls[blocks] >= n_types]).tolist())
        skeletons.append(PageSkeleton(
            scope=name, sigma=int(sigma[g]), documents=n, anchor_lines=line_set(blocks[is_line_anchor[blocks]]),
            anchor_prefixes=prefixes, frequent_lines=line_set(blocks[~rare[blocks]]),
            pairs=frozenset((class_key(a), class_key(b)) for a, b in pair_list), params=params,
            site_echo_lines=line_set(blocks[elsewhere[blocks]]),
            shared_lines=line_set(blocks[shared[blocks] & rare[blocks] & (block_len[blocks] <= params.line_length)])
            if params.toc_min_lines > 0 or params.box_min_lines > 0 else frozenset(),
            box_seed_lines=line_set(blocks[box_seed[blocks]]) if params.box_min_lines > 0 else frozenset()))
        stats[str(name)] = {**stats_g, "frequent_pairs": len(pair_list), "anchor_lines": len(skeletons[-1].anchor_lines),
                            "anchor_prefixes": len(prefixes)}
    idx = np.flatnonzero(covered_blocks)
    if idx.shape[0]:
        coverage = tokens_of_blocks(block_offsets, idx, tokens.shape[0])
    return SkeletonResult(coverage, skeletons, stats)
