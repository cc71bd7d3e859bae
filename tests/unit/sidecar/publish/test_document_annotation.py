"""Annotation values: covered char spans and the rank_feature-safe ratio."""
from __future__ import annotations

import numpy as np

from bloomspan.engine.text.tokenizer import token_spans, tokenize
from bloomspan.sidecar.publish.document_annotation import MIN_RATIO, covered_char_spans, document_update


def test_spans_cover_runs_from_first_to_last_character():
    text = "Home | Shop. Great kettle! © 2024 Acme, all rights."
    tokens, starts, ends = token_spans(text)
    covered = np.array([t in {"home", "shop", "2024", "acme", "all", "rights"} for t in tokens])
    spans = covered_char_spans(covered, starts, ends)
    assert [text[s:e] for s, e in spans] == ["Home | Shop", "2024 Acme, all rights"]
    for s, e in spans:
        assert all(covered[i] for i, t in enumerate(tokens) if s <= starts[i] < e)
        assert tokenize(text[s:e]) == [t for i, t in enumerate(tokens) if s <= starts[i] < e]


def test_no_coverage_and_full_coverage():
    _, s, e = token_spans("a b c")
    assert covered_char_spans(np.zeros(3, dtype=bool), s, e) == []
    assert covered_char_spans(np.ones(3, dtype=bool), s, e) == [[0, 5]]
    assert covered_char_spans(np.zeros(0, dtype=bool), s[:0], e[:0]) == []


def test_ratio_is_never_zero_for_rank_feature():
    _, s, e = token_spans("a b c d")
    clean = document_update(np.zeros(4, dtype=bool), s, e, "r1")
    assert clean["boilerplate_ratio"] == MIN_RATIO and clean["spans"] == [] and clean["run_id"] == "r1"
    half = document_update(np.array([1, 1, 0, 0], dtype=bool), s, e, "r1")
    assert half["boilerplate_ratio"] == 0.5 and half["spans"] == [[0, 3]]
    assert document_update(np.zeros(0, dtype=bool), s[:0], e[:0], "r1")["boilerplate_ratio"] == MIN_RATIO


def test_a_summary_folds_counts_and_keeps_five_examples():
    from bloomspan.sidecar.publish.document_annotation import EXAMPLES, AnnotateSummary

    total = AnnotateSummary()
    for k in range(3):
        total.add(AnnotateSummary(updated=2, noop=1, failed_by_reason={"conflict": 1, f"r{k}": 2},
                                  examples=[{"_id": f"{k}-{j}"} for j in range(3)]))
    assert (total.updated, total.noop) == (6, 3)
    assert total.failed_by_reason == {"conflict": 3, "r0": 2, "r1": 2, "r2": 2}
    assert [e["_id"] for e in total.examples] == ["0-0", "0-1", "0-2", "1-0", "1-1"][:EXAMPLES]
