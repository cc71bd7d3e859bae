"""Coverage report: per-document counts (kernel vs twin), histogram bins, top lists."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.mining.phrases import Phrase
from bloomspan.engine.mining.report import coverage_report, covered_per_doc, covered_per_doc_reference, phrase_text
from bloomspan.engine.text.vocabulary import Vocabulary


def _corpus(doc_masks):
    coverage = np.array([b for m in doc_masks for b in m], dtype=bool)
    off = np.concatenate([[0], np.cumsum([len(m) for m in doc_masks])]).astype(np.int64)
    return coverage, off


docs_strategy = st.lists(st.lists(st.booleans(), max_size=12), max_size=10)


@settings(derandomize=True, max_examples=60, deadline=None)
@given(docs_strategy)
def test_covered_per_doc_kernel_equals_twin(doc_masks):
    coverage, off = _corpus(doc_masks)
    expected = [sum(m) for m in doc_masks]
    assert covered_per_doc(coverage, off).tolist() == expected
    assert covered_per_doc_reference(coverage, off).tolist() == expected


@settings(derandomize=True, max_examples=60, deadline=None)
@given(docs_strategy, st.integers(1, 7), st.integers(0, 4))
def test_report_invariants(doc_masks, bins, top):
    coverage, off = _corpus(doc_masks)
    rep = coverage_report(coverage, off, [], top=top, bins=bins)
    json.dumps(rep)
    nonempty = [m for m in doc_masks if m]
    assert rep["covered_tokens"] == int(coverage.sum()) and rep["docs_mined"] == len(doc_masks)
    assert rep["empty_docs"] == len(doc_masks) - len(nonempty)
    hist = rep["clutter_histogram"]
    assert len(hist) == bins and sum(h["docs"] for h in hist) == len(nonempty)
    for m in nonempty:  # each document lands in the bin whose [lo, hi) holds its fraction
        k = min(sum(m) * bins // len(m), bins - 1)
        assert hist[k]["lo"] <= sum(m) / len(m) <= hist[k]["hi"]
    assert rep["docs_fully_covered"] == sum(all(m) for m in nonempty)
    assert rep["docs_without_coverage"] == sum(not any(m) for m in nonempty)
    cl = rep["most_cluttered_docs"]
    assert len(cl) == min(top, sum(any(m) for m in nonempty))
    keys = [(-c["covered_fraction"], -c["covered_tokens"], c["doc"]) for c in cl]
    assert keys == sorted(keys)
    for c in cl:
        m = doc_masks[c["doc"]]
        assert c["covered_tokens"] == sum(m) and c["tokens"] == len(m)


def test_report_example():
    v = Vocabulary()
    v.ids_of(["click", "here", "to", "subscribe", "cookie", "policy"], add_new=True)
    # 10-token doc with 3 covered (fraction exactly 0.3: bin 3), a fully covered doc,
    # an empty doc, an uncovered doc.
    coverage, off = _corpus([[1, 1, 1, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1], [], [0, 0]])
    phrases = [Phrase((4, 5), df=3, occurrences=3), Phrase((0, 1, 2, 3), df=2, occurrences=2),
               Phrase((2, 3), df=4, occurrences=5), Phrase((1, 2), df=2, occurrences=2)]
    rep = coverage_report(coverage, off, phrases, vocabulary=v, top=3)
    assert json.loads(json.dumps(rep)) == rep
    assert rep["tokens_mined"] == 16 and rep["covered_tokens"] == 7 and rep["covered_share"] == 7 / 16
    assert rep["phrases"] == 4 and rep["empty_docs"] == 1
    assert rep["docs_fully_covered"] == 1 and rep["docs_without_coverage"] == 1
    assert [h["docs"] for h in rep["clutter_histogram"]] == [1, 0, 0, 1, 0, 0, 0, 0, 0, 1]
    assert rep["clutter_histogram"][3] == {"lo": 0.3, "hi": 0.4, "docs": 1}
    assert rep["mean_doc_covered_fraction"] == pytest.approx((0.3 + 1 + 0) / 3)
    # psi 8 (length 4 before length 2), then psi 8 of (2, 3), then psi 6
    assert [(p["text"], p["psi"]) for p in rep["top_phrases"]] == [
        ("click here to subscribe", 8), ("to subscribe", 8), ("cookie policy", 6)]
    assert rep["top_phrases"][0]["rank"] == 1 and rep["top_phrases"][0]["psi_share"] == 0.5
    assert [(c["doc"], c["covered_fraction"]) for c in rep["most_cluttered_docs"]] == [(1, 1.0), (0, 0.3)]
    assert "text" not in coverage_report(coverage, off, phrases)["top_phrases"][0]


def test_empty_corpus():
    rep = coverage_report(np.zeros(0, dtype=bool), np.zeros(1, dtype=np.int64), [])
    assert rep["covered_share"] == 0.0 and rep["docs_mined"] == 0 and rep["most_cluttered_docs"] == []
    assert sum(h["docs"] for h in rep["clutter_histogram"]) == 0


def test_phrase_text():
    v = Vocabulary()
    v.ids_of(["i\u0307stanbul", "2024"], add_new=True)
    assert phrase_text(Phrase((1, 0, 1), df=2, occurrences=2), v) == "2024 i\u0307stanbul 2024"
    assert phrase_text([0], v) == "i\u0307stanbul"


@pytest.mark.parametrize("kwargs, message", [
    (dict(coverage=np.zeros(3, dtype=np.uint8)), "bool"),
    (dict(doc_offsets=np.array([0, 2])), "len\\(coverage\\)=3"),
    (dict(doc_offsets=np.array([0, 2, 1, 3])), "rise"),
    (dict(top=-1), "top=-1"),
    (dict(bins=0), "bins=0"),
])
def test_validation(kwargs, message):
    args = dict(coverage=np.zeros(3, dtype=bool), doc_offsets=np.array([0, 3]), phrases=[])
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        coverage_report(**args)
