"""Coverage reduced from document shards equals the single mask's: the report (from the
shards' summed figures, nothing per document on the driver), the site clutter and the
published coverage bitmaps, byte for byte, with documents of a shard scattered anywhere in the
global order (as an index run numbers them) and with the chunked coverage of large corpora."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st
from pyroaring import BitMap

from bloomspan.engine.mining.coverage import coverage_mask
from bloomspan.engine.mining.report import coverage_report, coverage_report_from_counts
from bloomspan.sidecar.distributed import coverage as dcov
from bloomspan.sidecar.distributed.coverage import (
    CoverageReduction,
    chunk_part,
    coverage_sent,
    shard_coverage,
    union_chunk,
)
from bloomspan.sidecar.publish.bitmaps import coverage_bitmaps, encode_bitmap
from bloomspan.sidecar.publish.document_figures import DocumentFigures, document_figures
from bloomspan.sidecar.publish.publication import site_clutter


def _split(rng, lengths: np.ndarray, n_shards: int):
    """A corpus of documents ``lengths`` dealt to shards at random; per shard its global
    document numbers (ascending within the shard, as shards keep their read order)."""
    owner = rng.integers(0, n_shards, lengths.size)
    return [np.flatnonzero(owner == k) for k in range(n_shards)]


def _occurrences(rng, doc_offsets: np.ndarray, n: int):
    """Random occurrences (start, length) that stay inside their document."""
    lengths = np.diff(doc_offsets)
    docs = np.flatnonzero(lengths > 0)
    if docs.size == 0 or n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    d = rng.choice(docs, n)
    at = rng.integers(0, lengths[d])
    ln = 1 + rng.integers(0, lengths[d] - at)
    return doc_offsets[d] + at, ln


def _reduce(doc_offsets, starts, lens, shards_docs, with_bitmaps=True, sites=None, top=3, bins=4):
    """Run the document shards' coverage, their figures and the driver's reduction over a
    global corpus: (reduction, merged figures, the shards' coverages in shard order)."""
    n_tokens = int(doc_offsets[-1])
    red = CoverageReduction(len(shards_docs), n_tokens, with_bitmaps)
    figures, covers = [], {}
    doc_of = np.searchsorted(doc_offsets, starts, side="right") - 1
    for k in reversed(range(len(shards_docs))):  # any order
        gdocs = shards_docs[k]
        local_len = np.diff(doc_offsets)[gdocs]
        local_off = np.concatenate([[0], np.cumsum(local_len)]).astype(np.int64)
        where = np.full(doc_offsets.size - 1, -1, dtype=np.int64)
        where[gdocs] = np.arange(gdocs.size)
        mine = where[doc_of] >= 0
        local_starts = local_off[where[doc_of[mine]]] + (starts[mine] - doc_offsets[doc_of[mine]])
        # two growth shards' parts, as the pipeline sends them
        half = local_starts.size // 2
        parts = [(local_starts[:half], lens[mine][:half]), (local_starts[half:], lens[mine][half:])]
        cover = shard_coverage(local_off, parts, doc_offsets[gdocs] if with_bitmaps else None, n_tokens)
        red.add(k, coverage_sent(cover))
        covers[k] = cover
        figures.append(document_figures(cover.covered, local_len, gdocs,
                                        None if sites is None else [sites.get(int(d)) for d in gdocs], top, bins))
    return red, DocumentFigures.merged(figures, top, bins, with_sites=sites is not None), [covers[k] for k in sorted(covers)]


def _worker_chunks(covers, n_chunks: int) -> list[str]:
    """The published chunks as an index run's workers make them (CoverageChunks): per chunk the
    OR of the shards' parts, encoded."""
    return [encode_bitmap(BitMap.deserialize(union_chunk([chunk_part(c, k) for c in covers]))) for k in range(n_chunks)]


def _exact_mean(mask, doc_offsets) -> float:
    """The mean covered fraction of the non-empty documents, from their exact sum, rounded once."""
    fractions = [Fraction(float(mask[a:b].sum() / (b - a))) for a, b in zip(doc_offsets[:-1], doc_offsets[1:]) if b > a]
    return float(sum(fractions) / len(fractions)) if fractions else 0.0


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 40), n_shards=st.integers(1, 6),
       n_occ=st.integers(0, 60), top=st.integers(0, 8), bins=st.integers(1, 12))
# the OR of the shards' bitmaps held a run container where the mask's held an array of the same
# size (9 members in 4 runs): the published bytes differed with the same members
@example(seed=2019, n_docs=31, n_shards=2, n_occ=4, top=0, bins=1)
def test_reduced_report_and_bitmaps_equal_the_mask(seed, n_docs, n_shards, n_occ, top, bins):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 30, n_docs)  # empty documents included
    doc_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    starts, lens = _occurrences(rng, doc_offsets, n_occ)
    mask = coverage_mask(int(doc_offsets[-1]), starts, lens)
    sites = {d: f"s{d % 3}" for d in range(n_docs) if d % 4}
    red, figures, covers = _reduce(doc_offsets, starts, lens, _split(rng, lengths, n_shards), sites=sites, top=top,
                                   bins=bins)
    got = figures.coverage_report()
    want = coverage_report(mask, doc_offsets, [], top=top, bins=bins)
    # the mean is the exact one rounded once (numpy's pairwise sum may differ in the last bit)
    assert got.pop("mean_doc_covered_fraction") == _exact_mean(mask, doc_offsets)
    assert want.pop("mean_doc_covered_fraction") == pytest.approx(_exact_mean(mask, doc_offsets), rel=1e-12)
    assert got == want
    assert red.covered_tokens == int(mask.sum()) == figures.covered_tokens
    assert [encode_bitmap(b) for b in red.bitmaps()] == [encode_bitmap(b) for b in coverage_bitmaps(mask)]
    assert _worker_chunks(covers, 1) == [encode_bitmap(b) for b in coverage_bitmaps(mask)]
    assert figures.site_clutter() == site_clutter(sites, mask, doc_offsets, top)


def test_the_figures_do_not_depend_on_how_the_documents_are_split():
    """Every grouping of the documents into shards gives the same figures, the mean's bits included."""
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 300, 5000)
    covered = (rng.random(5000) * lengths).astype(np.int64)
    numbers = np.arange(5000)
    sites = [f"s{d % 7}" if d % 5 else None for d in range(5000)]
    whole = document_figures(covered, lengths, numbers, sites, 20, 10)
    for n_shards in (2, 7, 50):
        owner = rng.integers(0, n_shards, 5000)
        parts = [document_figures(covered[owner == k], lengths[owner == k], numbers[owner == k],
                                  [sites[d] for d in np.flatnonzero(owner == k)], 20, 10) for k in range(n_shards)]
        merged = DocumentFigures.merged(parts[::-1], 20, 10, with_sites=True)
        assert merged.coverage_report() == whole.coverage_report()
        assert merged.site_clutter() == whole.site_clutter()
    nonempty = lengths > 0
    fractions = covered[nonempty] / lengths[nonempty]
    assert whole.mean_covered_fraction() == float(sum(map(Fraction, fractions.tolist())) / int(nonempty.sum()))
    assert DocumentFigures.from_dict(whole.to_dict()) == whole


def test_chunked_coverage_of_large_corpora(monkeypatch):
    """Beyond COVERAGE_CHUNK_TOKENS the published coverage is chunks of chunk-relative
    positions; a shard's covered positions land in the chunks of their global position."""
    monkeypatch.setattr(dcov, "COVERAGE_CHUNK_TOKENS", 64)
    rng = np.random.default_rng(7)
    lengths = rng.integers(0, 40, 30)
    doc_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    starts, lens = _occurrences(rng, doc_offsets, 40)
    mask = coverage_mask(int(doc_offsets[-1]), starts, lens)
    red, _, covers = _reduce(doc_offsets, starts, lens, _split(rng, lengths, 4))
    expected = coverage_bitmaps(mask, 64)
    assert len(expected) > 5
    assert [encode_bitmap(b) for b in red.bitmaps()] == [encode_bitmap(b) for b in expected]
    assert _worker_chunks(covers, len(expected)) == [encode_bitmap(b) for b in expected]


def test_json_lines_reduction_sends_no_bitmaps_and_refuses_to_publish_them():
    doc_offsets = np.array([0, 5, 9], dtype=np.int64)
    red, figures, _ = _reduce(doc_offsets, np.array([1, 6]), np.array([3, 2]), [np.array([1]), np.array([0])],
                           with_bitmaps=False)
    assert red.covered_tokens == 5
    assert [(d["doc"], d["covered_tokens"]) for d in figures.coverage_report()["most_cluttered_docs"]] == [(0, 3), (1, 2)]
    with pytest.raises(ValueError, match="without bitmaps"):
        red.bitmaps()


def test_a_missing_or_repeated_shard_is_an_error():
    red = CoverageReduction(2, 4, True)
    part = coverage_sent(shard_coverage(np.array([0, 2]), [], np.array([0]), 4))
    red.add(0, part)
    with pytest.raises(ValueError, match="twice"):
        red.add(0, part)
    with pytest.raises(ValueError, match="1 shard"):
        red.bitmaps()


def test_counts_out_of_range_are_refused():
    with pytest.raises(ValueError, match="one count per document"):
        coverage_report_from_counts(np.array([3]), np.array([0, 2]), [])
