"""Coverage report: how much of the corpus is repeated boilerplate, and where.

After mining, ``coverage`` (bool (W,)) marks every token inside an occurrence of a found
phrase (article, Part 6). From it:

* the covered share of the whole corpus: how much of the index is repeated fragments;
* per document, the covered fraction, as a histogram over fixed bins [0, 0.1), ...,
  [0.9, 1.0] and the number of documents covered entirely: pages that are almost all
  template;
* the phrases with the largest psi = length * df: the "index hogs";
* the most cluttered documents (highest covered fraction).

The report is a plain dict of ints, floats, strings and lists (JSON-serialisable); its keys
are the names of the run document and ``/metrics`` (``tokens_mined``, ``docs_mined``,
``phrases``, ``clutter_histogram``, ...: the table is in ``bloomspan.sidecar.publish.run_names``).
"""
from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

import numpy as np
from numba import njit

from bloomspan.engine.text.vocabulary import Vocabulary

from .phrases import Phrase, phrase_order_key


@njit(cache=True, nogil=True)
def _covered_per_doc(coverage, doc_offsets, out):
    """out[d] = number of True in coverage[doc_offsets[d]:doc_offsets[d+1]].

    coverage bool (W,); doc_offsets int64 (D+1,); out int64 (D,).
    """
    for d in range(doc_offsets.size - 1):
        c = 0
        for t in range(doc_offsets[d], doc_offsets[d + 1]):
            if coverage[t]:
                c += 1
        out[d] = c


def _check(coverage, doc_offsets) -> tuple[np.ndarray, np.ndarray]:
    coverage = np.asarray(coverage)
    doc_offsets = np.asarray(doc_offsets)
    if coverage.dtype != np.bool_ or coverage.ndim != 1:
        raise ValueError(f"coverage must be a 1-d bool array, got {coverage.dtype} {coverage.shape}")
    if doc_offsets.ndim != 1 or doc_offsets.size < 1 or not np.issubdtype(doc_offsets.dtype, np.integer):
        raise ValueError(f"doc_offsets must be a 1-d integer array (D+1,), got "
                         f"{doc_offsets.dtype} {doc_offsets.shape}")
    doc_offsets = doc_offsets.astype(np.int64, copy=False)
    if doc_offsets[0] != 0 or doc_offsets[-1] != coverage.size or np.any(np.diff(doc_offsets) < 0):
        raise ValueError(f"doc_offsets must rise from 0 to len(coverage)={coverage.size}; got "
                         f"first {int(doc_offsets[0])}, last {int(doc_offsets[-1])}")
    return np.ascontiguousarray(coverage), np.ascontiguousarray(doc_offsets)


def covered_per_doc(coverage: np.ndarray, doc_offsets: np.ndarray) -> np.ndarray:
    """int64 (D,): covered tokens of each document (numba kernel)."""
    coverage, doc_offsets = _check(coverage, doc_offsets)
    out = np.empty(doc_offsets.size - 1, dtype=np.int64)
    _covered_per_doc(coverage, doc_offsets, out)
    return out


def covered_per_doc_reference(coverage: np.ndarray, doc_offsets: np.ndarray) -> np.ndarray:
    """Numpy twin of :func:`covered_per_doc`."""
    coverage, doc_offsets = _check(coverage, doc_offsets)
    prefix = np.concatenate([[0], np.cumsum(coverage, dtype=np.int64)])
    return prefix[doc_offsets[1:]] - prefix[doc_offsets[:-1]]


def phrase_text(phrase: Phrase | Sequence[int], vocabulary: Vocabulary) -> str:
    """The phrase's tokens joined by single spaces (case and punctuation are gone)."""
    ids = phrase.tokens if isinstance(phrase, Phrase) else phrase
    return " ".join(vocabulary.token(int(i)) for i in ids)


def coverage_report(coverage: np.ndarray, doc_offsets: np.ndarray, phrases: Iterable[Phrase],
                    vocabulary: Vocabulary | None = None, top: int = 20, bins: int = 10) -> dict:
    """Summarise a coverage mask (see module docstring).

    coverage: bool (W,); doc_offsets: int64 (D+1,); phrases: the mined phrases (any order);
    vocabulary: adds each top phrase's ``text`` when given; top: length of the two top
    lists; bins: equal-width bins of the per-document covered fraction over [0, 1] (the
    last bin includes 1.0). Empty documents have no fraction: they are counted in
    ``empty_docs`` and left out of the histogram and the fraction statistics.
    """
    _check_top_bins(top, bins)
    coverage, doc_offsets = _check(coverage, doc_offsets)
    return coverage_report_from_counts(covered_per_doc(coverage, doc_offsets), doc_offsets, phrases, vocabulary,
                                       top=top, bins=bins)


def _check_top_bins(top, bins) -> None:
    if not isinstance(top, int) or top < 0:
        raise ValueError(f"top={top!r}: must be an int >= 0")
    if not isinstance(bins, int) or bins < 1:
        raise ValueError(f"bins={bins!r}: must be an int >= 1")


def coverage_report_from_counts(covered: np.ndarray, doc_offsets: np.ndarray, phrases: Iterable[Phrase],
                                vocabulary: Vocabulary | None = None, top: int = 20, bins: int = 10) -> dict:
    """:func:`coverage_report` from the covered tokens of each document (int (D,), what
    :func:`covered_per_doc` returns) instead of the mask: a run whose mask is spread over
    several processes sums its per-document counts, and no process needs the mask."""
    _check_top_bins(top, bins)
    covered = np.asarray(covered, dtype=np.int64)
    doc_offsets = np.asarray(doc_offsets, dtype=np.int64)
    lengths = np.diff(doc_offsets)
    if covered.shape != lengths.shape or np.any(covered < 0) or np.any(covered > lengths):
        raise ValueError(f"covered must be one count per document (D={lengths.size}) in 0..its length, got "
                         f"shape {covered.shape}")
    phrases = list(phrases)
    n_tokens = int(doc_offsets[-1])
    n_docs = int(doc_offsets.size - 1)
    nonempty = np.flatnonzero(lengths > 0)
    c, n = covered[nonempty], lengths[nonempty]
    # Integer arithmetic puts a fraction of exactly k/bins into bin k.
    which = np.minimum(c * bins // np.maximum(n, 1), bins - 1)
    counts = np.bincount(which, minlength=bins)
    fraction = c / n if n.size else np.zeros(0)
    total_covered = int(covered.sum())

    hogs = []
    for rank, p in enumerate(heapq.nsmallest(top, phrases, key=phrase_order_key), start=1):
        item = {"rank": rank, "tokens": [int(t) for t in p.tokens], "length": p.length,
                "df": int(p.df), "occurrences": int(p.occurrences), "psi": int(p.psi),
                "psi_share": p.psi / n_tokens if n_tokens else 0.0}
        if vocabulary is not None:
            item["text"] = phrase_text(p, vocabulary)
        hogs.append(item)

    touched = np.flatnonzero(c > 0)
    order = touched[np.lexsort((nonempty[touched], -c[touched], -fraction[touched]))][:top]
    cluttered = [{"doc": int(nonempty[k]), "covered_tokens": int(c[k]), "tokens": int(n[k]),
                  "covered_fraction": float(fraction[k])} for k in order]

    return {
        "tokens_mined": n_tokens,
        "docs_mined": n_docs,
        "covered_tokens": total_covered,
        "covered_share": total_covered / n_tokens if n_tokens else 0.0,
        "phrases": len(phrases),
        "empty_docs": int(n_docs - nonempty.size),
        "docs_fully_covered": int(np.count_nonzero(c == n)),
        "docs_without_coverage": int(np.count_nonzero(c == 0)),
        "mean_doc_covered_fraction": float(fraction.mean()) if fraction.size else 0.0,
        "clutter_histogram": [
            {"lo": k / bins, "hi": (k + 1) / bins, "docs": int(counts[k])} for k in range(bins)],
        "top_phrases": hogs,
        "most_cluttered_docs": cluttered,
    }
