"""Aho–Corasick over token symbols: the automaton of the phrases matched whole, and its scan.

The automaton (:class:`Automaton`) is a set of numpy arrays: a dense transition row for
the root, a CSR table of sorted transitions for the other states, failure links,
dictionary-suffix links and per-state outputs. :func:`ac_scan` (numba) runs it over all
documents (reset at each document start) and reports every occurrence of every pattern as
``(start_token, end_token, pattern_index)``, end exclusive, overlaps included. Plain twin of
the scan: :func:`find_matches_reference`.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
from numba import njit


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
