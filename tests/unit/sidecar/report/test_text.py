"""One terminal renderer for the file report and the cluster report."""
from __future__ import annotations

import numpy as np
from hypothesis import given, strategies as st

from bloomspan.engine.mining.phrases import Phrase
from bloomspan.engine.mining.report import coverage_report
from bloomspan.sidecar.report import text

HIST = [{"lo": 0.0, "hi": 0.5, "docs": 3}, {"lo": 0.5, "hi": 1.0, "docs": 1}]
COMMON = {"covered_tokens": 10, "tokens_mined": 40, "docs_mined": 4, "phrases": 1, "covered_share": 0.25,
          "mean_doc_covered_fraction": 0.25, "docs_fully_covered": 0, "docs_without_coverage": 2,
          "clutter_histogram": HIST}
FILE_REPORT = {**COMMON, "engine": "bloomspan", "sigma": 2, "min_length": 3}
CLUSTER_REPORT = {**COMMON, "template_index": "t", "physical_index": "t-1", "run_id": "1", "docs_seen": 5,
                  "docs_skipped": 1, "skipped_by_reason": {"missing": 1}, "source_index": "crawl", "field": "text",
                  "params": {"sigma": 2, "min_length": 3, "engine": "fhk"},
                  "most_cluttered_sites": [{"site": "a.example", "covered_share": 0.5, "docs": 2, "tokens": 20}]}


@given(st.floats(-2, 3, allow_nan=False), st.integers(1, 80))
def test_bar_is_width_long_and_filled_by_the_clipped_share(fraction, width):
    bar = text.share_bar(fraction, width)
    assert len(bar) == width and set(bar) <= {"#", "."}
    assert bar == "#" * bar.count("#") + "." * bar.count(".")  # filled part first
    assert bar.count("#") == int(round(max(0.0, min(1.0, fraction)) * width))


def test_both_reports_share_every_line_after_their_header():
    file_lines = text.render_report(FILE_REPORT).splitlines()
    cluster_lines = text.render_report(CLUSTER_REPORT).splitlines()
    assert file_lines[0] == "documents 4  tokens 40  phrases 1  (sigma=2 min_length=3 engine=bloomspan)"
    assert cluster_lines[:3] == ["template index t -> t-1 (run 1, finished None)",
                                 "source crawl field text: sigma=2 min_length=3 engine=fhk",
                                 "documents: 5 seen, 4 mined, 1 skipped {'missing': 1}"]
    assert file_lines[1:] == cluster_lines[3:-2]  # the same body; only the cluster run has sites
    assert cluster_lines[-2:] == ["most cluttered sites:", "   50.00%      2 docs        20 tokens  a.example"]
    for b in HIST:
        assert f" {text.share_bar(b['docs'] / 4)} {b['docs']:,}" in "\n".join(file_lines)


def test_the_engine_report_renders_with_names_and_top_lists():
    coverage = np.array([1, 1, 1, 0, 1, 1, 1, 0, 0, 0], dtype=bool)
    offsets = np.array([0, 4, 8, 10])
    rep = coverage_report(coverage, offsets, [Phrase((5, 6, 7), 2, 2)], top=5)
    for entry in rep["most_cluttered_docs"]:
        entry["id"] = f"doc-{entry['doc']}"
    lines = text.render_report({**rep, "sigma": 2}, top=1).splitlines()
    assert "top index hogs (length x df):" in lines and "most cluttered documents:" in lines
    assert lines[lines.index("most cluttered documents:") + 1] == "   75.00%      3/4      doc-0"
    assert lines[-1].endswith("doc-0")  # --top 1 keeps one entry per list

