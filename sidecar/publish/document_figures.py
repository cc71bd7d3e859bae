"""The run report's per-document figures, summed: what the report needs of every document
without an array per document.

The coverage block of a run's report (covered share, clutter histogram, empty, fully covered
and uncovered documents, the mean covered fraction, the most cluttered documents) and the most
cluttered sites are functions of each document's covered tokens, length, number and site.
:func:`document_figures` sums them over any set of documents (a Dask run's shard on its worker,
the whole corpus on one node) into a :class:`DocumentFigures` of O(bins + top + sites) values,
and :meth:`DocumentFigures.merged` adds such summaries in any order and grouping: the result is
the same whichever way the documents were split, so one node and a Dask run publish the same
report.

The mean covered fraction is the one float that a sum over parts would round differently by
grouping. It is kept exact: each fraction ``c / n`` (a float64) is an integer multiple of a
power of two, and the summary keeps, per binary exponent, the integer sum of the mantissas. The
published mean is that exact sum divided by the number of documents, rounded once
(:meth:`DocumentFigures.mean_covered_fraction`): the correctly rounded mean of the float64
fractions, independent of how the documents are split.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

MANTISSA_BITS = 53  # float64: every finite value in [0.5, 1) * 2**e is M * 2**(e - 53), M < 2**53
_HALF = 27  # mantissas summed as two halves so that int64 sums never overflow


@dataclass
class DocumentFigures:
    """Sums over a set of documents (the report's inputs; no array per document).

    docs, tokens, covered_tokens:  documents, their tokens, covered tokens
    empty_docs:                    documents without a token
    fully_covered, uncovered:      non-empty documents covered entirely / not at all
    histogram:                     non-empty documents per bin of covered fraction (``bins`` bins)
    fraction_sums:                 exact sum of the non-empty documents' covered fractions:
                                   ``{binary exponent e: sum of mantissas M}``, value Σ M·2**(e−53)
    cluttered:                     the ``top`` most cluttered documents, ``(fraction, covered,
                                   tokens, doc)`` sorted by (−fraction, −covered, doc)
    sites:                         ``{site: [docs, tokens, covered]}``, or None without sites
    """

    top: int
    bins: int
    docs: int = 0
    tokens: int = 0
    covered_tokens: int = 0
    empty_docs: int = 0
    fully_covered: int = 0
    uncovered: int = 0
    histogram: list[int] = field(default_factory=list)
    fraction_sums: dict[int, int] = field(default_factory=dict)
    cluttered: list[tuple[float, int, int, int]] = field(default_factory=list)
    sites: dict[str, list[int]] | None = None

    def __post_init__(self):
        if not self.histogram:
            self.histogram = [0] * self.bins

    @property
    def nonempty_docs(self) -> int:
        return self.docs - self.empty_docs

    def mean_covered_fraction(self) -> float:
        """The mean of the non-empty documents' covered fractions, rounded once from the exact sum."""
        n = self.nonempty_docs
        if n == 0 or not self.fraction_sums:
            return 0.0
        low = min(self.fraction_sums) - MANTISSA_BITS
        total = sum(m << (e - MANTISSA_BITS - low) for e, m in self.fraction_sums.items())
        return total / (n << -low)  # int / int rounds once; low < 0: every fraction is <= 1

    @classmethod
    def merged(cls, parts: list[DocumentFigures], top: int, bins: int, with_sites: bool) -> DocumentFigures:
        """The figures of the union of ``parts`` (disjoint sets of documents)."""
        out = cls(top, bins, sites={} if with_sites else None)
        cluttered = []
        for p in parts:
            if p.top != top or p.bins != bins:
                raise ValueError(f"figures of top={p.top}, bins={p.bins} merged into top={top}, bins={bins}")
            out.docs += p.docs
            out.tokens += p.tokens
            out.covered_tokens += p.covered_tokens
            out.empty_docs += p.empty_docs
            out.fully_covered += p.fully_covered
            out.uncovered += p.uncovered
            out.histogram = [a + b for a, b in zip(out.histogram, p.histogram)]
            for e, m in p.fraction_sums.items():
                out.fraction_sums[e] = out.fraction_sums.get(e, 0) + m
            cluttered.extend(p.cluttered)
            if with_sites:
                for site, (d, t, c) in (p.sites or {}).items():
                    row = out.sites.setdefault(site, [0, 0, 0])
                    row[0] += d
                    row[1] += t
                    row[2] += c
        out.cluttered = sorted(cluttered, key=_clutter_order)[:top]
        return out

    # ------------------------------------------------------------------ the report
    def coverage_report(self) -> dict:
        """The coverage figures of the run report, keyed as
        :func:`bloomspan.engine.mining.report.coverage_report_from_counts` keys them (no phrases)."""
        bins = self.bins
        return {
            "tokens_mined": self.tokens,
            "docs_mined": self.docs,
            "covered_tokens": self.covered_tokens,
            "covered_share": self.covered_tokens / self.tokens if self.tokens else 0.0,
            "phrases": 0,
            "empty_docs": self.empty_docs,
            "docs_fully_covered": self.fully_covered,
            "docs_without_coverage": self.uncovered,
            "mean_doc_covered_fraction": self.mean_covered_fraction(),
            "clutter_histogram": [{"lo": k / bins, "hi": (k + 1) / bins, "docs": int(self.histogram[k])}
                                  for k in range(bins)],
            "top_phrases": [],
            "most_cluttered_docs": [{"doc": d, "covered_tokens": c, "tokens": n, "covered_fraction": f}
                                    for f, c, n, d in self.cluttered],
        }

    def site_clutter(self) -> list[dict]:
        """The most cluttered sites, as :func:`~.publication.site_clutter_from_counts` lists them."""
        rows = [{"site": s, "docs": d, "tokens": t, "covered_tokens": c, "covered_share": c / t}
                for s, (d, t, c) in (self.sites or {}).items() if t > 0]
        rows.sort(key=lambda r: (-r["covered_share"], -r["covered_tokens"], r["site"]))
        return rows[:self.top]

    # ------------------------------------------------------------------ the run folder
    def to_dict(self) -> dict:
        return {"top": self.top, "bins": self.bins, "docs": self.docs, "tokens": self.tokens,
                "covered_tokens": self.covered_tokens, "empty_docs": self.empty_docs,
                "fully_covered": self.fully_covered, "uncovered": self.uncovered, "histogram": self.histogram,
                "fraction_sums": [[e, m] for e, m in sorted(self.fraction_sums.items())],
                "cluttered": [list(row) for row in self.cluttered], "sites": self.sites}

    @classmethod
    def from_dict(cls, d: dict) -> DocumentFigures:
        return cls(top=d["top"], bins=d["bins"], docs=d["docs"], tokens=d["tokens"],
                   covered_tokens=d["covered_tokens"], empty_docs=d["empty_docs"], fully_covered=d["fully_covered"],
                   uncovered=d["uncovered"], histogram=list(d["histogram"]),
                   fraction_sums={int(e): int(m) for e, m in d["fraction_sums"]},
                   cluttered=[(float(f), int(c), int(n), int(doc)) for f, c, n, doc in d["cluttered"]],
                   sites=None if d["sites"] is None else {s: list(v) for s, v in d["sites"].items()})


def _clutter_order(row: tuple[float, int, int, int]):
    fraction, covered, _, doc = row
    return (-fraction, -covered, doc)


def exact_fraction_sums(fractions: np.ndarray) -> dict[int, int]:
    """``{e: Σ M}`` of float64 values ``M·2**(e−53)`` (``np.frexp``): their exact sum, by exponent."""
    mantissa, exponent = np.frexp(np.asarray(fractions, dtype=np.float64))
    m = np.ldexp(mantissa, MANTISSA_BITS).astype(np.int64)  # exact: 53-bit integers
    hi, lo = m >> _HALF, m & ((1 << _HALF) - 1)
    out: dict[int, int] = {}
    for e in np.unique(exponent[m != 0]).tolist():
        at = exponent == e
        out[int(e)] = (int(hi[at].sum()) << _HALF) + int(lo[at].sum())
    return out


def document_figures(covered: np.ndarray, lengths: np.ndarray, numbers: np.ndarray, sites: list[str | None] | None,
                     top: int, bins: int) -> DocumentFigures:
    """The figures of a set of documents: ``covered``, ``lengths`` and their global ``numbers``
    (int (d,) each, one entry per document), ``sites`` (one per document, None where it has
    none; None: no site field). ``top`` (>= 0) and ``bins`` (>= 1) as the report's."""
    if top < 0 or bins < 1:
        raise ValueError(f"top={top}, bins={bins}: the report's --top must be >= 0 and --bins >= 1")
    c = np.asarray(covered, dtype=np.int64)
    n = np.asarray(lengths, dtype=np.int64)
    numbers = np.asarray(numbers, dtype=np.int64)
    if not (c.shape == n.shape == numbers.shape) or np.any(c < 0) or np.any(c > n):
        raise ValueError(f"covered (shape {c.shape}) must be one count in 0..its length per document "
                         f"(lengths {n.shape}, numbers {numbers.shape})")
    nonempty = n > 0
    cn, nn, dn = c[nonempty], n[nonempty], numbers[nonempty]
    fraction = cn / nn if nn.size else np.zeros(0)
    which = np.minimum(cn * bins // np.maximum(nn, 1), bins - 1)  # a fraction of exactly k/bins: bin k
    touched = np.flatnonzero(cn > 0)
    order = touched[np.lexsort((dn[touched], -cn[touched], -fraction[touched]))][:top]
    out = DocumentFigures(top, bins, docs=int(n.size), tokens=int(n.sum()), covered_tokens=int(c.sum()),
                          empty_docs=int(n.size - nn.size), fully_covered=int(np.count_nonzero(cn == nn)),
                          uncovered=int(np.count_nonzero(cn == 0)),
                          histogram=np.bincount(which, minlength=bins).astype(np.int64).tolist(),
                          fraction_sums=exact_fraction_sums(fraction),
                          cluttered=[(float(fraction[k]), int(cn[k]), int(nn[k]), int(dn[k])) for k in order.tolist()])
    if sites is not None:
        if len(sites) != n.size:
            raise ValueError(f"sites: {len(sites)} values for {n.size} documents")
        out.sites = {}
        for site, length, cov in zip(sites, n.tolist(), c.tolist()):
            if site is not None:
                row = out.sites.setdefault(site, [0, 0, 0])
                row[0] += 1
                row[1] += length
                row[2] += cov
    return out
