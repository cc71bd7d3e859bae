"""A page's own facts: a slotted line whose numbers differ on every page is content at the page's top.

With number slots (``TemplateConfig.slots``) "pytest 7.1.2 has just been released to PyPI" and
"pytest 5.4.3 has just been released to PyPI" are one line, on every release announcement of the
site, so the repetition passes find the title and the lede of each such page like chrome. But a
slot whose values differ on every page that holds the line is not a form letter's blank filled
with the same date or version: the numbers are what the page is about. Chrome that numbers its
pages ("Page 3 of 12", "Previous: pytest-7.1.3") holds such values too, but it sits in the bars
at a page's edges; the page's title and first paragraph sit at the end of its header, before the
first text no pass found.

The rule, per group of the first level (a site; the whole corpus without groups):

* a line **type** is the line's tokens with every number as the slot; the type is an **own-fact
  line** of the group when it holds the slot, at least ``sigma`` pages of the group hold it
  (the group's sigma, :func:`~.scoped_mining.group_sigma`: below that no pass takes it), and its
  lines as written (numbers as they are) take at least :data:`VALUE_SHARE` times as many
  distinct values as there are pages (the values differ on nearly every page).

Then per page, on its lines (*covered*: every token of the line is):

* the page's **header** ends where the table-of-contents rule's does (:mod:`.toc_sections`): at
  the first run of consecutive uncovered lines holding at least :data:`HEADER_GAP` tokens; a page
  without such a run has its first half as its header;
* the **zone** is the header less its first line: a page's first line is the bar or title the
  generator prints on every page ("Vim documentation: usr_05"), chrome by every spec;
* a covered own-fact line in the zone is content when its numbers echo in another line of the
  page (:func:`number_echoes`: a run of :data:`ECHO_RUN` consecutive numbers of it, or all of
  them when it has fewer, recurs in another line: the lede repeats the heading's version, the
  heading the breadcrumb's), it is the only line of its type in the page (one of a list of such
  lines, every release in a sidebar, is navigation), and the next line is not the same line as
  written (a breadcrumb's last item, followed by the page's heading that repeats it: the
  heading is the content, the breadcrumb the navigation). A pager ("352 products found. Page 6
  of 18") or a price under a shop's heading takes values of its own on every page too, but
  nothing else in the page repeats them.

Mining's detector applies it last, after the table-of-contents rule, to every pass's coverage;
its records are kind ``"own_facts"`` (:class:`OwnFactsModel`, one per group, the own-fact line
types as token strings with :data:`~bloomspan.engine.text.slots.SLOT_TOKEN`), and the ingest
matcher applies them to its matches with the same kernel (:func:`own_fact_tokens`).
:func:`own_fact_lines_reference` and :func:`number_echoes_reference` are the plain twins. Nothing
here changes exact MCFP mining.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from bloomspan.engine.text.slots import SLOT_ID, SLOT_TOKEN

from .blocks import flags_per_span
from .model_record import check_model_record
from .page_skeleton import next_same_type
from .title_nav import NAV_WORDS, token_key
from .toc_sections import HEADER_GAP, header_end, header_end_reference

RECORD_VERSION = 1
VALUE_SHARE = 0.9  # distinct values per page holding the line, at least
ECHO_RUN = 3  # consecutive numbers of a line that must recur in another line of its page


@njit(cache=True, nogil=True)
def _own_fact_kernel(covered, candidate, block_len, raw_types, next_same, prev_same, doc_blocks, header_gap, out):
    """out[k] = True for the lines k the rule gives back to the content (module docstring).

    covered bool (B,): every token of the line is covered; candidate bool (B,): the line is an
    own-fact line of its page's group; block_len int64 (B,); raw_types int64 (B,): equal lines as
    written, equal type; next_same / prev_same int64 (B,): the next / previous line of the same
    slotted type in the same page, -1 where none; doc_blocks int64 (D+1,): page d's lines are
    ``doc_blocks[d]:doc_blocks[d+1]``; out bool (B,), False on entry.
    """
    for d in range(doc_blocks.shape[0] - 1):
        a, b = doc_blocks[d], doc_blocks[d + 1]
        header = header_end(covered, block_len, a, b, header_gap)
        if header < 0:  # no first uncovered text: the page's first half
            header = a + (b - a + 1) // 2
        for k in range(a + 1, header):
            if not (covered[k] and candidate[k]) or next_same[k] >= 0:
                continue
            p = prev_same[k]
            if p >= 0 and not (p == k - 1 and raw_types[p] == raw_types[k] and prev_same[p] < 0):
                continue  # one of a list of such lines (every release in a sidebar): navigation
            out[k] = True


def own_fact_lines(covered: np.ndarray, candidate: np.ndarray, block_len: np.ndarray, types: np.ndarray,
                   raw_types: np.ndarray, doc_blocks: np.ndarray) -> np.ndarray:
    """bool (B,): the lines the rule gives back to the content. covered, candidate bool (B,);
    block_len int64 (B,); types, raw_types int64 (B,) (:func:`~.blocks.block_types` of the lines
    with numbers as the slot, and as written); doc_blocks int64 (D+1,) each page's first line."""
    n = covered.shape[0]
    out = np.zeros(n, dtype=bool)
    if n == 0:  # the kernel runs without candidates too: `bloomspan warmup` compiles it on any crawl
        return out
    doc_blocks = np.asarray(doc_blocks, dtype=np.int64)
    block_doc = np.repeat(np.arange(doc_blocks.shape[0] - 1, dtype=np.int64), np.diff(doc_blocks))
    next_same = next_same_type(np.asarray(types, dtype=np.int64), block_doc)
    prev_same = np.full(n, -1, dtype=np.int64)
    has_next = np.flatnonzero(next_same >= 0)
    prev_same[next_same[has_next]] = has_next
    _own_fact_kernel(np.asarray(covered, dtype=np.bool_), np.asarray(candidate, dtype=np.bool_),
                     np.asarray(block_len, dtype=np.int64), np.asarray(raw_types, dtype=np.int64), next_same,
                     prev_same, doc_blocks, HEADER_GAP, out)
    return out


def number_echoes(raw_tokens: np.ndarray, numbers: np.ndarray, block_offsets: np.ndarray, doc_blocks: np.ndarray,
                  lines: np.ndarray) -> np.ndarray:
    """bool (B,): for each line of ``lines`` (int64 line indices), whether its numbers as written
    (its *number key*: its number tokens in order) echo in another line of its page: a run of
    ``min(len(key), ECHO_RUN)`` consecutive numbers of its key is a run of consecutive numbers of
    the other line's key ("pytest 7.1.2 has just been released" and the heading "pytest-7.1.2").
    raw_tokens uint32 (W,); numbers bool (W,) the number tokens; block_offsets int64 (B+1,);
    doc_blocks int64 (D+1,). :func:`number_echoes_reference` is its plain twin."""
    out = np.zeros(block_offsets.shape[0] - 1, dtype=bool)
    if lines.shape[0] == 0:
        return out
    raw_tokens, numbers = np.asarray(raw_tokens), np.asarray(numbers, dtype=bool)
    line_doc = np.searchsorted(doc_blocks, lines, side="right") - 1
    keys: dict[int, tuple] = {}

    def key(k: int) -> tuple:
        got = keys.get(k)
        if got is None:
            a, b = int(block_offsets[k]), int(block_offsets[k + 1])
            got = keys[k] = tuple(raw_tokens[a:b][numbers[a:b]].tolist())
        return got
    runs: dict[tuple[int, int], set] = {}  # (page, run length) -> {(run, line)} of the page's lines
    for k, d in zip(lines.tolist(), line_doc.tolist()):
        own = key(k)
        m = min(len(own), ECHO_RUN)
        if m == 0:
            continue
        seen = runs.get((d, m))
        if seen is None:
            seen = runs[(d, m)] = {}
            for j in range(int(doc_blocks[d]), int(doc_blocks[d + 1])):
                other = key(j)
                for i in range(len(other) - m + 1):
                    seen.setdefault(other[i:i + m], set()).add(j)
        out[k] = any(seen.get(own[i:i + m], set()) - {k} for i in range(len(own) - m + 1))
    return out


def number_echoes_reference(pages: Sequence[Sequence[tuple]], numbers: Sequence[Sequence[tuple]],
                            run: int | None = None) -> list[list[bool]]:
    """Plain twin of :func:`number_echoes` on every line: ``pages[d]`` the lines of page d (token
    tuples as written), ``numbers[d]`` per line a tuple of bools (which tokens are numbers)."""
    run = ECHO_RUN if run is None else run
    out = []
    for lines, flags in zip(pages, numbers):
        keys = [tuple(t for t, f in zip(line, fl) if f) for line, fl in zip(lines, flags)]

        def runs_of(key: tuple, m: int) -> set:
            return {key[i:i + m] for i in range(len(key) - m + 1)}
        out.append([bool(key) and any(runs_of(key, min(len(key), run)) & runs_of(other, min(len(key), run))
                                      for j, other in enumerate(keys) if j != k)
                    for k, key in enumerate(keys)])
    return out


def own_fact_tokens(coverage: np.ndarray, block_offsets: np.ndarray, doc_offsets: np.ndarray,
                    candidate: np.ndarray, types: np.ndarray, raw_types: np.ndarray, raw_tokens: np.ndarray,
                    numbers: np.ndarray) -> np.ndarray:
    """bool (W,): the covered tokens the rule gives back to the content. coverage bool (W,);
    block_offsets int64 (B+1,) the lines (never crossing a page); doc_offsets int64 (D+1,);
    candidate bool (B,) own-fact lines; types, raw_types int64 (B,) the lines' types with numbers
    as the slot and as written; raw_tokens uint32 (W,) as written; numbers bool (W,) the number
    tokens. A candidate counts only where its numbers echo in another line of its page
    (:func:`number_echoes`)."""
    coverage = np.asarray(coverage, dtype=bool)
    block_offsets = np.asarray(block_offsets, dtype=np.int64)
    lengths = np.diff(block_offsets)
    if coverage.shape[0] == 0 or lengths.shape[0] == 0:
        return np.zeros(coverage.shape[0], dtype=bool)
    covered = (flags_per_span(coverage, block_offsets[:-1], block_offsets[1:]) == lengths) & (lengths > 0)
    doc_blocks = np.searchsorted(block_offsets[:-1], np.asarray(doc_offsets, dtype=np.int64), side="left")
    maybe = np.flatnonzero(np.asarray(candidate, dtype=bool) & covered)
    echoed = number_echoes(raw_tokens, numbers, block_offsets, doc_blocks, maybe)
    lines = own_fact_lines(covered, echoed, lengths, types, raw_types, doc_blocks)
    return np.repeat(lines, lengths) & coverage


def own_fact_lines_reference(pages: Sequence[Sequence[tuple]], slotted: Sequence[Sequence[tuple]],
                             covered: Sequence[Sequence[bool]], candidate: Sequence[Sequence[bool]],
                             header_gap: int = HEADER_GAP) -> list[list[bool]]:
    """Plain twin of :func:`own_fact_lines`: ``pages[d]`` the lines of page d as written (token
    tuples), ``slotted[d]`` the same with numbers as the slot, ``covered[d]`` and ``candidate[d]``
    per line; per page, the lines given back."""
    out = []
    for lines, slots, cov, cand in zip(pages, slotted, covered, candidate):
        n = len(lines)
        header = header_end_reference(lines, cov, header_gap)
        if header is None:  # no first uncovered text: the page's first half
            header = (n + 1) // 2
        back = []
        for k in range(n):
            same = [j for j in range(n) if slots[j] == slots[k]]
            alone = same == [k] or (same == [k - 1, k] and lines[k - 1] == lines[k])
            echoed = k + 1 < n and lines[k + 1] == lines[k]
            back.append(0 < k < header and bool(cov[k] and cand[k]) and alone and not echoed)
        out.append(back)
    return out


@dataclass(frozen=True)
class OwnFactsModel:
    """One group's own-fact line types: ``lines``, each a tuple of token ids (mining, the slot as
    :data:`~bloomspan.engine.text.slots.SLOT_ID`) or of token strings (read from a record, the
    slot as :data:`~bloomspan.engine.text.slots.SLOT_TOKEN`); ``documents`` the group's pages."""

    scope: str | None
    lines: tuple[tuple, ...]
    documents: int = 0

    def to_record(self, token: Callable[[int], str] | None = None) -> dict:
        """JSON form (kind "own_facts"); ``token`` maps token ids to strings (mining's models)."""
        def text(t) -> str:
            if isinstance(t, str):
                return t
            return SLOT_TOKEN if t == SLOT_ID else token(t)
        lines = sorted([text(t) for t in line] for line in self.lines)
        return {"kind": "own_facts", "version": RECORD_VERSION, "scope": self.scope, "lines": lines,
                "documents": self.documents}

    @classmethod
    def from_record(cls, rec: Mapping, where: str = "record") -> OwnFactsModel:
        """Read :meth:`to_record`'s form, every key required; a newer version is refused."""
        check_model_record(rec, "own_facts", RECORD_VERSION, ("lines", "documents"), where)
        scope, lines, documents = rec.get("scope"), rec["lines"], rec["documents"]
        if scope is not None and not isinstance(scope, str):
            raise ValueError(f"{where}: own_facts scope={scope!r}: must be a string (a site) or null")
        if not isinstance(lines, list) or not all(
                isinstance(x, list) and x and all(isinstance(t, str) for t in x) and SLOT_TOKEN in x for x in lines):
            raise ValueError(f"{where}: own_facts lines: must be a list of token lists, each holding {SLOT_TOKEN!r}")
        if not isinstance(documents, int) or isinstance(documents, bool) or documents < 0:
            raise ValueError(f"{where}: own_facts documents={documents!r}: must be an integer >= 0")
        return cls(scope=scope, lines=tuple(tuple(x) for x in lines), documents=documents)


@dataclass
class OwnFactsResult:
    """candidate bool (B,): each line is an own-fact line of its page's group; models: one per
    group that has such lines; stats."""

    candidate: np.ndarray
    models: list[OwnFactsModel]
    stats: dict


def mine_own_facts(tokens: np.ndarray, raw_tokens: np.ndarray, doc_offsets: np.ndarray, block_offsets: np.ndarray,
                   groups: Sequence[str | None] | None, min_pages: int, token_strings: Sequence[str],
                   types: np.ndarray, raw_types: np.ndarray) -> OwnFactsResult:
    """The own-fact line types of each group (module docstring). tokens uint32 (W,) with numbers
    as :data:`~bloomspan.engine.text.slots.SLOT_ID`, raw_tokens uint32 (W,) as written;
    groups: one name per page (None: no group), or None for one group of every page;
    ``min_pages``: fewest pages that hold a type alone; token_strings: each token id's string;
    types, raw_types int64 (B,): :func:`~.blocks.block_types` of the lines of ``tokens`` and of
    ``raw_tokens`` (the caller's, which :func:`own_fact_tokens` reads too)."""
    block_offsets = np.asarray(block_offsets, dtype=np.int64)
    n_docs = doc_offsets.shape[0] - 1
    n_lines = block_offsets.shape[0] - 1
    lengths = np.diff(block_offsets)
    candidate = np.zeros(n_lines, dtype=bool)
    empty = OwnFactsResult(candidate, [], {"own_fact_groups": {}})
    if n_lines == 0:
        return empty
    names: list[str | None] = [None] if groups is None else sorted({g for g in groups if g is not None})
    index = {g: i for i, g in enumerate(names)}
    doc_group = (np.zeros(n_docs, dtype=np.int64) if groups is None
                 else np.asarray([index[g] if g is not None else -1 for g in groups], dtype=np.int64))
    group_pages = np.bincount(doc_group[doc_group >= 0], minlength=len(names))
    doc_blocks = np.searchsorted(block_offsets[:-1], np.asarray(doc_offsets, dtype=np.int64), side="left")
    block_doc = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(doc_blocks))
    slotted = flags_per_span(np.asarray(tokens) == np.uint32(SLOT_ID), block_offsets[:-1], block_offsets[1:]) > 0
    line_group = doc_group[block_doc]
    lines = np.flatnonzero(slotted & (line_group >= 0) & (lengths > 0))
    if lines.shape[0] == 0:
        return empty
    types, raw = np.asarray(types, dtype=np.int64)[lines], np.asarray(raw_types, dtype=np.int64)[lines]
    g, page = line_group[lines], block_doc[lines]
    # Per (type, page): its lines and its distinct values there. A page holds the type *alone*
    # when at most two lines of it hold one value (a heading, and the breadcrumb that repeats it).
    tp, tp_of, tp_lines = np.unique(np.stack([types, page]), axis=1, return_inverse=True, return_counts=True)
    tp_of = tp_of.reshape(-1)
    tpv = np.unique(np.stack([tp_of, raw]), axis=1)
    tp_values = np.bincount(tpv[0], minlength=tp.shape[1])
    alone = (tp_lines <= 2) & (tp_values == 1)
    first_raw = np.zeros(tp.shape[1], dtype=np.int64)
    first_raw[tp_of[::-1]] = raw[::-1]  # the (one) value of each alone (type, page)
    # Per type (a type belongs to one group: its pages' group, types being equal token
    # sequences and groups disjoint by page; group and type together keep them apart).
    tp_group = doc_group[tp[1]]
    width = int(types.max()) + 1
    key_of_tp = tp_group * width + tp[0]
    keys, key_inv = np.unique(key_of_tp[alone], return_inverse=True)
    n_alone = np.bincount(key_inv, minlength=keys.shape[0])
    kv = np.unique(np.stack([key_inv, first_raw[alone]]), axis=1)
    n_values = np.bincount(kv[0], minlength=keys.shape[0])
    own = (n_alone >= max(int(min_pages), 1)) & (n_values >= VALUE_SHARE * n_alone)
    # A line with a navigation word names a neighbour's facts ("Previous: pytest-7.1.3"), not its page's.
    first_line = {}
    for k, t in zip(lines.tolist(), types.tolist()):
        first_line.setdefault(t, k)
    for j in np.flatnonzero(own).tolist():
        k = first_line[int(keys[j] % width)]
        if any(token_key(token_strings[t]) in NAV_WORDS
               for t in raw_tokens[block_offsets[k]:block_offsets[k + 1]].tolist() if t != SLOT_ID):
            own[j] = False
    own_keys = keys[own]
    candidate[lines] = np.isin(g * width + types, own_keys)
    models, stats = [], {}
    for gi, name in enumerate(names):
        found_types = sorted(int(x % width) for x in own_keys if x // width == gi)
        if not found_types:
            continue
        found = tuple(tuple(int(x) for x in tokens[block_offsets[first_line[t]]:block_offsets[first_line[t] + 1]])
                      for t in found_types)
        models.append(OwnFactsModel(scope=name, lines=found, documents=int(group_pages[gi])))
        stats[str(name)] = len(found)
    return OwnFactsResult(candidate, models, {"own_fact_groups": stats})
