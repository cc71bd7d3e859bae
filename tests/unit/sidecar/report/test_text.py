"""The terminal report's share bar, shared by the file report and the cluster report."""
from __future__ import annotations

from hypothesis import given, strategies as st

from bloomspan.sidecar.report import operator_report, text


@given(st.floats(-2, 3, allow_nan=False), st.integers(1, 80))
def test_bar_is_width_long_and_filled_by_the_clipped_share(fraction, width):
    bar = text.share_bar(fraction, width)
    assert len(bar) == width and set(bar) <= {"#", "."}
    assert bar == "#" * bar.count("#") + "." * bar.count(".")  # filled part first
    assert bar.count("#") == int(round(max(0.0, min(1.0, fraction)) * width))


def test_both_reports_draw_the_same_bar():
    hist = [{"lo": 0.0, "hi": 0.5, "docs": 3}, {"lo": 0.5, "hi": 1.0, "docs": 1}]
    file_report = text.render_report({"n_docs": 4, "n_tokens": 40, "n_phrases": 1, "covered_tokens": 10,
                                      "covered_share": 0.25, "mean_doc_covered_fraction": 0.25,
                                      "docs_fully_covered": 0, "docs_without_coverage": 2,
                                      "doc_covered_fraction_histogram": hist})
    cluster_report = operator_report.render_report({
        "template_index": "t", "physical_index": "t-1", "run_id": "1", "docs_seen": 4, "docs_mined": 4,
        "docs_skipped": 0, "skipped_by_reason": {}, "covered_tokens": 10, "tokens": 40, "covered_share": 0.25,
        "phrases": 1, "docs_fully_covered": 0, "docs_without_coverage": 2, "mean_doc_covered_fraction": 0.25,
        "clutter_histogram": hist})
    for b in hist:
        bar = text.share_bar(b["docs"] / 4)
        assert f" {bar} {b['docs']:,}" in file_report and f" {bar} {b['docs']:,}" in cluster_report
