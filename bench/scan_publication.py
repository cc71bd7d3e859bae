"""The phrase documents as publication built them before the engines returned occurrence
starts: one Aho–Corasick scan of the whole corpus (ingest's matcher, symbols = token id + 1),
a block of documents at a time. Kept as the plain reference the start-based construction
(:func:`bloomspan.sidecar.publish.publication.phrase_documents_for`) must equal byte for byte.
"""
from __future__ import annotations

import numpy as np

from bloomspan.ingest.match.automaton import build_automaton, scan_symbols
from bloomspan.ingest.records.phrase_set import stable_phrase_id
from bloomspan.sidecar.publish.bitmaps import bitmap_from_array, encode_bitmap
from bloomspan.sidecar.publish.publication import EXAMPLE_IDS

BLOCK_TOKENS = 1 << 24


def _blocks(doc_offsets: np.ndarray, block_tokens: int):
    """(d0, d1) document ranges of about ``block_tokens`` tokens (at least one document)."""
    n_docs = doc_offsets.shape[0] - 1
    d0 = 0
    while d0 < n_docs:
        limit = doc_offsets[d0] + block_tokens
        d1 = int(np.searchsorted(doc_offsets, limit, side="right")) - 1
        d1 = min(max(d1, d0 + 1), n_docs)
        yield d0, d1
        d0 = d1


def scan_phrase_documents(tokens: np.ndarray, doc_offsets: np.ndarray, phrases: list[tuple[int, ...]],
                          block_tokens: int = BLOCK_TOKENS) -> tuple[list[np.ndarray], np.ndarray]:
    """``(docs, occurrences)``: ``docs[p]`` int64 ascending documents holding phrase p, and
    int64 (P,) its number of start positions (overlaps counted), by scanning the corpus."""
    n_phrases = len(phrases)
    occurrences = np.zeros(n_phrases, dtype=np.int64)
    parts: list[list[np.ndarray]] = [[] for _ in range(n_phrases)]
    if n_phrases == 0:
        return [], occurrences
    automaton = build_automaton([tuple(int(t) + 1 for t in p) for p in phrases])
    doc_offsets = np.asarray(doc_offsets, dtype=np.int64)
    for d0, d1 in _blocks(doc_offsets, block_tokens):
        a, b = int(doc_offsets[d0]), int(doc_offsets[d1])
        sym = np.asarray(tokens[a:b], dtype=np.int64) + 1
        local = doc_offsets[d0:d1 + 1] - a
        start, _end, idx = scan_symbols(automaton, sym.astype(np.int32), local)
        if start.size == 0:
            continue
        occurrences += np.bincount(idx, minlength=n_phrases)
        doc = np.searchsorted(local, start, side="right") - 1 + d0
        pair = np.unique(idx.astype(np.int64) * (doc_offsets.shape[0]) + doc)
        p_of = pair // doc_offsets.shape[0]
        d_of = pair % doc_offsets.shape[0]
        bounds = np.searchsorted(p_of, np.arange(n_phrases + 1))
        for p in np.flatnonzero(np.diff(bounds)):
            parts[p].append(d_of[bounds[p]:bounds[p + 1]])
    docs = [np.concatenate(ps) if ps else np.zeros(0, dtype=np.int64) for ps in parts]
    return docs, occurrences


def naive_phrase_documents(tokens, doc_offsets, phrases) -> tuple[list[np.ndarray], np.ndarray]:
    """Plain twin of :func:`scan_phrase_documents`: every start position of every phrase, naively."""
    toks = [int(t) for t in np.asarray(tokens)]
    off = [int(o) for o in np.asarray(doc_offsets)]
    docs, occ = [], []
    for p in phrases:
        p = list(p)
        found, count = [], 0
        for d in range(len(off) - 1):
            doc = toks[off[d]:off[d + 1]]
            hits = sum(1 for i in range(len(doc) - len(p) + 1) if doc[i:i + len(p)] == p)
            count += hits
            if hits:
                found.append(d)
        docs.append(np.asarray(found, dtype=np.int64))
        occ.append(count)
    return docs, np.asarray(occ, dtype=np.int64)


def scan_phrase_documents_for(snapshot, result, doc_keys: list[str]) -> tuple[list[dict], list[np.ndarray]]:
    """The phrase documents and their document numbers, built from a corpus scan (the old
    ``phrase_documents_for``): same fields, same order."""
    vocab = snapshot.vocabulary
    phrases = result.phrases
    docs, occurrences = scan_phrase_documents(snapshot.tokens, snapshot.doc_offsets, [p.tokens for p in phrases])
    out = []
    for p, d, occ in zip(phrases, docs, occurrences.tolist()):
        assert d.size == p.df and occ == p.occurrences, p.tokens
        tokens = vocab.tokens(p.tokens)
        out.append(({
            "phrase_id": stable_phrase_id(tokens, None), "text": " ".join(tokens), "tokens": tokens,
            "length": p.length, "df": int(p.df), "occurrences": int(p.occurrences), "psi": int(p.psi),
            "example_ids": [doc_keys[i] for i in d[:EXAMPLE_IDS].tolist()],
            "doc_bitmap": encode_bitmap(bitmap_from_array(d)),
        }, d))
    out.sort(key=lambda pair: (-pair[0]["psi"], -pair[0]["length"], pair[0]["text"]))
    return [doc for doc, _ in out], [d for _, d in out]
