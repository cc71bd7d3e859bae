"""The report's horizontal bar charts come from one function."""
from __future__ import annotations

import re

from bloomspan.sidecar.report.figures import bar_chart_svg, sites_svg, top_phrases_svg


def _bars(svg: str, name: str) -> list[str]:
    return re.findall(rf'<g id="{name}-bar-(\d+)"', svg)


def test_one_bar_per_value_in_order_with_its_labels():
    svg = bar_chart_svg("demo", "a demo", [3.0, 2.0, 1.0], ["alpha", "beta", "gamma"], ["3", "2", "1"],
                        color="#000000", xlabel="how many")
    assert _bars(svg, "demo") == ["0", "1", "2"] and 'data-figure="demo"' in svg
    for text in ("alpha", "beta", "gamma", "how many"):
        assert f">{text}<" in svg or text in svg


def test_the_phrase_and_site_charts_are_that_chart():
    rows = [{"text": f"phrase number {k}", "psi": 100 - k} for k in range(20)]
    assert len(_bars(top_phrases_svg(rows), "psi")) == 12  # at most n bars
    sites = [{"site": "a.example", "covered_share": 0.4, "docs": 3}, {"site": "b.example", "covered_share": 0.1,
                                                                     "docs": 1}]
    svg = sites_svg(sites)
    assert _bars(svg, "site") == ["0", "1"] and "40.0% of 3 docs" in svg and "%" in svg
