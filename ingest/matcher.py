"""Find every phrase of a :class:`PhraseSet` in documents in one pass (Aho–Corasick over token ids).

Pipeline for a batch of texts (:meth:`PhraseMatcher.find_batch`):

1. :func:`bloomspan.engine.text.tokenizer.encode_batch` (the numba fast path of
   :func:`~bloomspan.engine.text.tokenizer.token_spans`: same tokens, same character offsets)
   tokenizes every text and maps tokens to ids of a frozen
   :class:`~bloomspan.engine.text.vocabulary.Vocabulary` holding the phrase tokens only.
   Symbol = id + 1 for the V phrase tokens (1..V); a token in no phrase is the sentinel 0,
   which resets the automaton to the root.
2. :func:`ac_scan` (numba) runs the automaton over all documents (reset at each document
   start) and reports every occurrence of every phrase as ``(start_token, end_token,
   phrase_index)``, end exclusive, overlaps included.
3. Matches of phrases scoped to another site are dropped; the rest, sorted, go through
   :func:`merge_spans`, which merges overlapping *or adjacent* token spans of one document.
4. A merged span ``[ts, te)`` maps to characters ``[starts[ts], ends[te - 1])``: from the
   first token's first character to the last token's last character, so the punctuation
   and whitespace between its tokens is inside, nothing before or after it.
5. With ``fixed_point=True`` (what the cleaner asks for) the spans are closed under
   removal: the automaton runs again over the tokens the spans leave (the token sequence a
   stripped text has, see :mod:`.cleaner`), and a phrase found there — necessarily across
   the place where a span was cut out, since every other occurrence was found in step 2 —
   is covered too, from its first to its last token in the original text (the removed
   tokens between its parts are inside). Repeated until a pass finds nothing, so a
   stripped text holds no phrase of the set: stripping it again removes nothing. Each pass
   re-scans only the documents the previous pass changed and removes at least one token
   of each, so passes are few (one extra, finding nothing, on typical pages).

Window matching (``match="windows"``, what the cleaner and the proxy use by default): a
phrase mined with ``min_length`` L is found wherever any run of L of its consecutive tokens
occurs, not only whole. Every such window is itself frequent (it occurs in every document
its phrase occurs in), so a banner whose neighbours differ from every mined page is still
known boilerplate. The windows are looked up in a hash index (:mod:`.window_index`);
overlapping window occurrences of one phrase are reported as one match (a *run*), so a
match's tokens are exactly the tokens its windows cover. Phrases with no known L (a
hand-written list), and phrases of at most L tokens, are matched whole: by the automaton,
or, for a phrase of exactly L tokens (its one window), by the window index of L, which
reports each of its occurrences as the automaton would, so the automaton is not run at all
when every phrase has its L.
Step 5 (``fixed_point``) applies to windows as to phrases: a stripped text holds no window.

The automaton (:class:`Automaton`) is a set of numpy arrays: a dense transition row for
the root, a CSR table of sorted transitions for the other states, failure links,
dictionary-suffix links and per-state outputs. Plain twins: :func:`find_matches_reference`
(scan), :func:`merge_spans_reference` (merge) and :meth:`PhraseMatcher.find_reference`
(the whole pipeline on :func:`~bloomspan.engine.text.tokenizer.token_spans`).
"""
from __future__ import annotations

import logging
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from bloomspan.engine.text.tokenizer import encode_batch, token_spans
from bloomspan.engine.text.vocabulary import Vocabulary

from .phrase_set import PhraseSet
from .window_index import WindowIndex, build_window_index

logger = logging.getLogger(__name__)

GLOBAL_SCOPE = -1  # phrase_scope value of phrases that apply to every document
UNKNOWN_SCOPE = -2  # scope id of a document whose scope no phrase names
BATCH_CHARS = 1 << 22  # characters per encode/scan round: bounds the token arrays
MATCH_MODES = ("windows", "phrases")


@dataclass(frozen=True)
class Automaton:
    """Aho–Corasick automaton over symbols 0..V (0 = sentinel, never on an edge).

    S states, state 0 is the root; E non-root edges; O (state, phrase) outputs.

    root_goto:  int32 (V+1,)  root's transition on each symbol; 0 = stay at the root.
    edge_ptr:   int64 (S+1,)  CSR row pointers: state s's edges are edge_ptr[s]:edge_ptr[s+1]
                              (the root's row is empty: it uses root_goto).
    edge_sym:   int32 (E,)    edge symbols, ascending within a row.
    edge_dst:   int32 (E,)    edge targets.
    fail:       int32 (S,)    failure link: longest proper suffix state (0 for depth 1).
    out_ptr:    int64 (S+1,)  CSR row pointers into out_phrase.
    out_phrase: int32 (O,)    phrase indices whose tokens spell exactly state s.
    dict_link:  int32 (S,)    nearest proper-suffix state with outputs, 0 if none.
    depth:      int32 (S,)    number of tokens spelled by the state.
    """

    root_goto: np.ndarray
    edge_ptr: np.ndarray
    edge_sym: np.ndarray
    edge_dst: np.ndarray
    fail: np.ndarray
    out_ptr: np.ndarray
    out_phrase: np.ndarray
    dict_link: np.ndarray
    depth: np.ndarray

    @property
    def n_states(self) -> int:
        return int(self.fail.shape[0])


def build_automaton(patterns: list[tuple[int, ...]]) -> Automaton:
    """Automaton for ``patterns`` (non-empty tuples of symbols >= 1); pattern i reports index i.

    Equal patterns share a state and are all reported.
    """
    children: list[dict[int, int]] = [{}]
    outputs: list[list[int]] = [[]]
    depth = [0]
    max_sym = 0
    for pi, pat in enumerate(patterns):
        if len(pat) == 0 or min(pat) < 1:
            raise ValueError(f"pattern {pi}={pat!r}: must be non-empty with symbols >= 1 (0 is the sentinel)")
        max_sym = max(max_sym, max(pat))
        s = 0
        for a in pat:
            nxt = children[s].get(a)
            if nxt is None:
                nxt = len(children)
                children[s][a] = nxt
                children.append({})
                outputs.append([])
                depth.append(depth[s] + 1)
            s = nxt
        outputs[s].append(pi)
    n = len(children)
    fail = [0] * n
    dict_link = [0] * n
    queue = deque(children[0].values())
    while queue:  # BFS: a state's fail target is shallower, so already final
        u = queue.popleft()
        for a, v in children[u].items():
            f = fail[u]
            while f and a not in children[f]:
                f = fail[f]
            fv = children[f].get(a, 0) if u else 0  # depth-1 states fail to the root
            fail[v] = fv
            dict_link[v] = fv if outputs[fv] else dict_link[fv]
            queue.append(v)
    root_goto = np.zeros(max_sym + 1, dtype=np.int32)
    for a, v in children[0].items():
        root_goto[a] = v
    edge_ptr = np.zeros(n + 1, dtype=np.int64)
    edge_ptr[2:] = np.cumsum([len(children[s]) for s in range(1, n)], dtype=np.int64)
    rows = [sorted(children[s].items()) for s in range(1, n)]
    edge_sym = np.fromiter((a for row in rows for a, _ in row), dtype=np.int32, count=int(edge_ptr[-1]))
    edge_dst = np.fromiter((v for row in rows for _, v in row), dtype=np.int32, count=int(edge_ptr[-1]))
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    out_ptr[1:] = np.cumsum([len(o) for o in outputs])
    out_phrase = np.fromiter((p for o in outputs for p in o), dtype=np.int32, count=int(out_ptr[-1]))
    return Automaton(
        root_goto=root_goto,
        edge_ptr=edge_ptr,
        edge_sym=edge_sym,
        edge_dst=edge_dst,
        fail=np.asarray(fail, dtype=np.int32),
        out_ptr=out_ptr,
        out_phrase=out_phrase,
        dict_link=np.asarray(dict_link, dtype=np.int32),
        depth=np.asarray(depth, dtype=np.int32),
    )


@njit(cache=True, nogil=True)
def ac_scan(
    sym, doc_offsets, root_goto, edge_ptr, edge_sym, edge_dst, fail, out_ptr, out_phrase, dict_link, depth,
    out_start, out_end, out_idx,
):  # fmt: skip
    """Scan the documents of ``sym`` and write matches; returns the total number of matches.

    sym:         int32 (W,)   symbols of all documents, concatenated.
    doc_offsets: int64 (D+1,) document d is sym[doc_offsets[d]:doc_offsets[d+1]]; the
                 automaton restarts at the root at every document start.
    Writes match k (k < capacity = out_start.shape[0]) as ``out_start[k]`` (int64, first
    token, index into sym), ``out_end[k]`` (int64, one past the last token),
    ``out_idx[k]`` (int32, pattern index). If the return value exceeds the capacity, the
    caller re-runs with larger buffers. Matches come ordered by end position, longest
    first within one end. Symbols outside 1..V (0 or >= root_goto.shape[0]) reset to the root.
    """
    cap = out_start.shape[0]
    n_sym = root_goto.shape[0]
    count = 0
    for d in range(doc_offsets.shape[0] - 1):
        s = 0
        for i in range(doc_offsets[d], doc_offsets[d + 1]):
            a = sym[i]
            if a <= 0 or a >= n_sym:
                s = 0
                continue
            while True:
                if s == 0:
                    s = root_goto[a]
                    break
                lo = edge_ptr[s]
                hi = edge_ptr[s + 1]
                while lo < hi:  # binary search of a in the sorted row
                    mid = (lo + hi) >> 1
                    if edge_sym[mid] < a:
                        lo = mid + 1
                    else:
                        hi = mid
                if lo < edge_ptr[s + 1] and edge_sym[lo] == a:
                    s = edge_dst[lo]
                    break
                s = fail[s]
            t = s if out_ptr[s] < out_ptr[s + 1] else dict_link[s]
            while t != 0:
                length = depth[t]
                for k in range(out_ptr[t], out_ptr[t + 1]):
                    if count < cap:
                        out_start[count] = i + 1 - length
                        out_end[count] = i + 1
                        out_idx[count] = out_phrase[k]
                    count += 1
                t = dict_link[t]
    return count


def scan_symbols(
    automaton: Automaton, sym: np.ndarray, doc_offsets: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All pattern occurrences in ``sym`` (int32 (W,)), sorted by (start, end, index).

    ``doc_offsets`` (int64 (D+1,), default one document) keeps matches inside documents.
    Returns ``(start int64 (M,), end int64 (M,), index int32 (M,))``, end exclusive.
    """
    sym = np.ascontiguousarray(sym, dtype=np.int32)
    if sym.ndim != 1:
        raise ValueError(f"sym must be 1-D, got shape {sym.shape}")
    if doc_offsets is None:
        doc_offsets = np.array([0, sym.shape[0]], dtype=np.int64)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    if doc_offsets.ndim != 1 or doc_offsets.shape[0] < 1 or doc_offsets[0] != 0 or doc_offsets[-1] != sym.shape[0]:
        raise ValueError(f"doc_offsets must be int64 (D+1,) from 0 to len(sym)={sym.shape[0]}")
    cap = max(16, sym.shape[0] // 4)
    a = automaton
    while True:
        start = np.empty(cap, dtype=np.int64)
        end = np.empty(cap, dtype=np.int64)
        idx = np.empty(cap, dtype=np.int32)
        m = ac_scan(sym, doc_offsets, a.root_goto, a.edge_ptr, a.edge_sym, a.edge_dst, a.fail, a.out_ptr,
                    a.out_phrase, a.dict_link, a.depth, start, end, idx)  # fmt: skip
        if m <= cap:
            break
        cap = int(m)
    start, end, idx = start[:m], end[:m], idx[:m]
    order = np.lexsort((idx, end, start))
    return start[order], end[order], idx[order]


def find_matches_reference(phrases: list[tuple], tokens: list) -> list[tuple[int, int, int]]:
    """Plain-Python twin of the scan: every ``(start, end, phrase_index)``, sorted.

    For each start position, looks up every slice up to the longest phrase length.
    """
    by_tuple: dict[tuple, list[int]] = {}
    for i, p in enumerate(phrases):
        by_tuple.setdefault(tuple(p), []).append(i)
    max_len = max((len(p) for p in phrases), default=0)
    found = []
    for s in range(len(tokens)):
        for e in range(s + 1, min(len(tokens), s + max_len) + 1):
            for i in by_tuple.get(tuple(tokens[s:e]), ()):
                found.append((s, e, i))
    return sorted(found)


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


def window_lengths(phrase_set: PhraseSet, match: str = "windows", min_length: int | None = None) -> np.ndarray:
    """int64 (P,): the window length each phrase is matched by, 0 for "whole phrase".

    ``match="phrases"``: all 0. ``match="windows"``: ``min_length`` when given, else the
    phrase's own ``min_length`` (the run that mined it, :attr:`PhraseRecord.min_length`);
    a phrase with neither, or of fewer tokens than its window, is matched whole (0).
    """
    if match not in MATCH_MODES:
        raise ValueError(f"match={match!r}: must be one of {', '.join(MATCH_MODES)}")
    if min_length is not None and (not isinstance(min_length, int) or isinstance(min_length, bool) or min_length < 1):
        raise ValueError(f"min_length={min_length!r}: must be an integer >= 1 (the mining run's --min-length)")
    out = np.zeros(len(phrase_set), dtype=np.int64)
    if match == "phrases":
        return out
    for i, p in enumerate(phrase_set):
        w = min_length if min_length is not None else p.min_length
        if w is not None and p.length > w:
            out[i] = w
    return out


class PhraseMatcher:
    """Matcher for every phrase of ``phrase_set`` (built once, reused per batch).

    match:        "phrases" (whole phrases, the default of this class) or "windows" (every
                  window of :func:`window_lengths` tokens; module docstring).
    min_length:   window length for every phrase (None: each phrase's own ``min_length``).
    vocabulary:   frozen :class:`Vocabulary` of the phrase tokens (id i = symbol i + 1).
    automaton:    :class:`Automaton` over the symbols of the phrases matched whole that no
                  window index holds; its pattern k is phrase ``whole_index[k]``.
    windows:      one (:class:`~.window_index.WindowIndex`, phrase indices int64) per window
                  length L, holding the phrases matched by windows of L and those matched
                  whole that have L tokens; pattern k of an index is phrase ``indices[k]``.
    phrase_scope: int32 (P,) scope id of each phrase, GLOBAL_SCOPE for unscoped ones.
    scope_ids:    scope string -> scope id.
    """

    def __init__(self, phrase_set: PhraseSet, match: str = "phrases", min_length: int | None = None):
        self.phrase_set = phrase_set
        self.match = match
        self.window_length = window_lengths(phrase_set, match, min_length)
        tokens = sorted({t for p in phrase_set for t in p.tokens})
        self.vocabulary = Vocabulary(capacity=max(len(tokens), 1))
        ids = self.vocabulary.ids_of(tokens, add_new=True)
        symbol = dict(zip(tokens, (ids.astype(np.int64) + 1).tolist()))
        patterns = [tuple(symbol[t] for t in p.tokens) for p in phrase_set]
        self.scope_ids = {s: i for i, s in enumerate(phrase_set.scopes)}
        self.phrase_scope = np.fromiter(
            (GLOBAL_SCOPE if p.scope is None else self.scope_ids[p.scope] for p in phrase_set),
            dtype=np.int32,
            count=len(phrase_set),
        )
        # A whole phrase of exactly L tokens is its only L-window: the index of windows of L
        # finds it (reported like the automaton reports it), so one scan covers both.
        whole = self.window_length == 0
        phrase_length = np.fromiter((p.length for p in phrase_set), dtype=np.int64, count=len(phrase_set))
        in_automaton = whole.copy()
        self.windows: list[tuple[WindowIndex, np.ndarray]] = []
        for length in np.unique(self.window_length[~whole]).tolist():
            members = np.flatnonzero((self.window_length == length) | (whole & (phrase_length == length)))
            index = build_window_index([patterns[i] for i in members.tolist()], int(length), self.phrase_scope[members],
                                       whole[members])
            self.windows.append((index, members.astype(np.int64)))
            in_automaton[members] = False
        self.whole_index = np.flatnonzero(in_automaton).astype(np.int64)
        self.automaton = build_automaton([patterns[i] for i in self.whole_index.tolist()])
        logger.debug("matcher: %d phrases (%d whole, %d by windows of %s tokens), %d symbols, %d states, %d windows",
                     len(patterns), self.whole_index.shape[0], len(patterns) - self.whole_index.shape[0],
                     [w.length for w, _ in self.windows], len(tokens), self.automaton.n_states,
                     sum(w.n_entries for w, _ in self.windows))

    @property
    def nbytes(self) -> int:
        """Bytes held by the automaton and window indices (the vocabulary aside)."""
        a = self.automaton
        auto = sum(int(x.nbytes) for x in (a.root_goto, a.edge_ptr, a.edge_sym, a.edge_dst, a.fail, a.out_ptr,
                                           a.out_phrase, a.dict_link, a.depth))
        return auto + sum(w.nbytes + int(m.nbytes) for w, m in self.windows)

    def _doc_scope(self, scope: str | None) -> int:
        return self.scope_ids.get(scope, UNKNOWN_SCOPE) if scope is not None else UNKNOWN_SCOPE

    def find(self, text: str, scope: str | None = None, fixed_point: bool = False) -> MatchResult:
        """Matches of one text (see :meth:`find_batch`)."""
        return self.find_batch([text], [scope], fixed_point=fixed_point)[0]

    def find_batch(self, texts: Sequence[str], scopes: Sequence[str | None] | None = None,
                   fixed_point: bool = False) -> list[MatchResult]:
        """Tokenize, match, merge and map to character offsets, for each text.

        ``scopes[d]`` is text d's scope: phrases scoped elsewhere are left out
        (None: only unscoped phrases apply). ``fixed_point``: close the spans under
        removal (module docstring, step 5). Texts are processed in rounds of about
        BATCH_CHARS characters.
        """
        texts = list(texts)
        scopes = [None] * len(texts) if scopes is None else list(scopes)
        if len(scopes) != len(texts):
            raise ValueError(f"scopes has {len(scopes)} entries for {len(texts)} texts")
        out: list[MatchResult] = []
        begin = 0
        while begin < len(texts):
            end, chars = begin, 0
            while end < len(texts) and (end == begin or chars + len(texts[end]) <= BATCH_CHARS):
                chars += len(texts[end])
                end += 1
            out.extend(self._find_round(texts[begin:end], scopes[begin:end], fixed_point))
            begin = end
        return out

    def _scan_scoped(self, sym: np.ndarray, tok_off: np.ndarray, doc_scope: np.ndarray | None):
        """Matches ``(start, end, index, doc)`` in ``sym`` whose phrase applies to their document."""
        parts = []  # each sorted by (start, end, index): phrase indices map in ascending order
        if self.whole_index.shape[0] or not self.windows:
            m_start, m_end, m_idx = scan_symbols(self.automaton, sym, tok_off)
            parts.append((m_start, m_end, self.whole_index[m_idx].astype(np.int32)))
        for index, members in self.windows:
            w_start, w_end, w_idx = index.find_runs(sym, tok_off)
            parts.append((w_start, w_end, members[w_idx].astype(np.int32)))
        m_start, m_end, m_idx = parts[0]
        if len(parts) > 1:
            m_start, m_end, m_idx = (np.concatenate(col) for col in zip(*parts))
            order = np.lexsort((m_idx, m_end, m_start))
            m_start, m_end, m_idx = m_start[order], m_end[order], m_idx[order]
        m_doc = np.searchsorted(tok_off, m_start, side="right") - 1
        if doc_scope is not None and m_idx.shape[0]:
            ps = self.phrase_scope[m_idx]
            keep = (ps == GLOBAL_SCOPE) | (ps == doc_scope[m_doc])
            if not keep.all():
                m_start, m_end, m_idx, m_doc = m_start[keep], m_end[keep], m_idx[keep], m_doc[keep]
        return m_start, m_end, m_idx, m_doc

    def _close_under_removal(self, sym, tok_off, doc_scope, m_start, m_end, m_idx, m_doc):
        """Add the matches found across removed spans until none is left (step 5); returns
        the matches, sorted by (start, end, index), in the coordinates of ``sym``."""
        n_docs = tok_off.shape[0] - 1
        tok_doc = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(tok_off))
        is_covered = np.zeros(sym.shape[0], dtype=bool)
        parts = [(m_start, m_end, m_idx, m_doc)]
        new_start, new_end, new_doc = m_start, m_end, m_doc
        while new_doc.shape[0]:
            delta = np.zeros(sym.shape[0] + 1, dtype=np.int64)
            np.add.at(delta, new_start, 1)
            np.add.at(delta, new_end, -1)
            is_covered |= np.cumsum(delta[:-1]) > 0
            changed = np.zeros(n_docs, dtype=bool)
            changed[new_doc] = True
            left = np.flatnonzero(~is_covered & changed[tok_doc])
            if left.shape[0] == 0:
                break
            left_doc = tok_doc[left]
            left_off = np.zeros(n_docs + 1, dtype=np.int64)
            np.cumsum(np.bincount(left_doc, minlength=n_docs), out=left_off[1:])
            s, e, idx, d = self._scan_scoped(sym[left], left_off, doc_scope)
            if s.shape[0] == 0:
                break
            new_start, new_end, new_doc = left[s], left[e - 1] + 1, d
            parts.append((new_start, new_end, idx, new_doc))
        if len(parts) == 1:
            return m_start, m_end, m_idx, m_doc
        m_start, m_end, m_idx, m_doc = (np.concatenate(col) for col in zip(*parts))
        order = np.lexsort((m_idx, m_end, m_start))
        return m_start[order], m_end[order], m_idx[order], m_doc[order]

    def _find_round(self, texts: list[str], scopes: list[str | None], fixed_point: bool = False) -> list[MatchResult]:
        n_docs = len(texts)
        ids, tok_off, cstart, cend = encode_batch(texts, self.vocabulary, True, add_new=False, count_df=False)
        # uint32 wrap-around: UNKNOWN (2**32 - 1) + 1 == 0, the sentinel; id i -> i + 1.
        sym = (ids + np.uint32(1)).astype(np.int32)
        if not sym.any():
            return [MatchResult.no_match(cstart[a:b], cend[a:b]) for a, b in zip(tok_off[:-1].tolist(), tok_off[1:].tolist())]
        doc_scope = np.fromiter(map(self._doc_scope, scopes), dtype=np.int32, count=n_docs) if self.scope_ids else None
        m_start, m_end, m_idx, m_doc = self._scan_scoped(sym, tok_off, doc_scope)
        if fixed_point and m_start.shape[0]:
            m_start, m_end, m_idx, m_doc = self._close_under_removal(sym, tok_off, doc_scope, m_start, m_end, m_idx, m_doc)
        m = m_start.shape[0]
        s_start, s_end, s_doc, group = (np.empty(m, dtype=np.int64) for _ in range(4))
        k = merge_spans(m_start, m_end, m_doc, s_start, s_end, s_doc, group)
        s_start, s_end, s_doc = s_start[:k], s_end[:k], s_doc[:k]
        # Everything per document is computed here for the whole round (relative to the
        # document's first token / first span), so the loop below only slices.
        doc_first, doc_stop = tok_off[:-1], tok_off[1:]
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n_docs)
        doc_range = np.arange(n_docs + 1)
        m_bound = np.searchsorted(m_doc, doc_range)
        s_bound = np.searchsorted(s_doc, doc_range)
        s_cstart, s_cend = cstart[s_start], cend[s_end - 1]
        has_before = s_start > doc_first[s_doc]
        s_gstart = np.where(has_before, cend[np.maximum(s_start - 1, 0)], 0)
        has_after = s_end < doc_stop[s_doc]
        s_gend = np.where(has_after, cstart[np.minimum(s_end, max(len(cstart) - 1, 0))], lengths[s_doc])
        covered = np.bincount(s_doc, weights=s_end - s_start, minlength=n_docs).astype(np.int64).tolist()
        m_start, m_end = m_start - doc_first[m_doc], m_end - doc_first[m_doc]
        group = group - s_bound[m_doc]
        s_start, s_end = s_start - doc_first[s_doc], s_end - doc_first[s_doc]
        t_bound, m_bound, s_bound = tok_off.tolist(), m_bound.tolist(), s_bound.tolist()
        results = []
        for d in range(n_docs):
            a, b = t_bound[d], t_bound[d + 1]
            m0, m1, k0, k1 = m_bound[d], m_bound[d + 1], s_bound[d], s_bound[d + 1]
            if m0 == m1:
                results.append(MatchResult.no_match(cstart[a:b], cend[a:b]))
                continue
            results.append(MatchResult(
                b - a, covered[d], cstart[a:b], cend[a:b], m_start[m0:m1], m_end[m0:m1], m_idx[m0:m1],
                group[m0:m1], s_start[k0:k1], s_end[k0:k1], s_cstart[k0:k1], s_cend[k0:k1],
                s_gstart[k0:k1], s_gend[k0:k1],
            ))  # fmt: skip
        return results

    def find_reference(self, text: str, scope: str | None = None, fixed_point: bool = False) -> MatchResult:
        """Plain twin of :meth:`find`: token_spans, a dict lookup, the reference scan and merge
        (``fixed_point``: scan the tokens left by the spans again until nothing is found)."""
        tokens, starts, ends = token_spans(text)
        doc_scope = self._doc_scope(scope)
        # Windows mode: every window of a phrase is a pattern of its own, reported as the phrase.
        patterns, owner = [], []
        for p, (ph, w) in enumerate(zip(self.phrase_set, self.window_length.tolist())):
            w = w or ph.length
            patterns += [ph.tokens[j:j + w] for j in range(ph.length - w + 1)]
            owner += [p] * (ph.length - w + 1)

        def scan(toks: list) -> list[tuple[int, int, int]]:
            return sorted({(s, e, owner[k]) for s, e, k in find_matches_reference(patterns, toks)
                           if self.phrase_scope[owner[k]] in (GLOBAL_SCOPE, doc_scope)})

        found = scan(tokens)
        covered = {i for s, e, _ in found for i in range(s, e)}
        while fixed_point:
            left = [i for i in range(len(tokens)) if i not in covered]
            across = [(left[s], left[e - 1] + 1, p) for s, e, p in scan([tokens[i] for i in left])]
            if not across:
                break
            found = sorted(found + across)
            covered |= {i for s, e, _ in across for i in range(s, e)}
        merged = merge_spans_reference([(s, e) for s, e, _ in found])
        span_of = [next(k for k, (a, b) in enumerate(merged) if a <= s and e <= b) for s, e, _ in found]
        i64 = lambda xs: np.asarray(xs, dtype=np.int64).reshape(-1)  # noqa: E731
        n = len(tokens)
        return MatchResult(
            n_tokens=n,
            covered_tokens=sum(b - a for a, b in merged),
            token_starts=starts,
            token_ends=ends,
            match_start=i64([f[0] for f in found]),
            match_end=i64([f[1] for f in found]),
            match_phrase=np.asarray([f[2] for f in found], dtype=np.int32).reshape(-1),
            match_span=i64(span_of),
            span_token_start=i64([a for a, _ in merged]),
            span_token_end=i64([b for _, b in merged]),
            span_char_start=i64([starts[a] for a, _ in merged]),
            span_char_end=i64([ends[b - 1] for _, b in merged]),
            span_gap_start=i64([ends[a - 1] if a > 0 else 0 for a, _ in merged]),
            span_gap_end=i64([starts[b] if b < n else len(text) for _, b in merged]),
        )
