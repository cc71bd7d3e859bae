"""bench/quality_summary.py reads the default path's row of each site set from quality-eval results."""
from __future__ import annotations

import pytest

from bench.quality_summary import set_rows


def _record(rows_by_method, audit):
    method = {"table": {"header": ["method", "found", "all", "damaged"], "align": ["---"] * 4,
                        "rows": rows_by_method}}
    damage = {"table": {"header": ["site", "content tokens", "removed", "share", "by rule"], "align": ["---"] * 5,
                        "rows": audit}}
    return {"name": "quality-eval-x", "date": "2026-12-04 01:00", "commit": "abc1234", "body": [
        {"text": ["### unseen sites (looked at while fixing: tuning now): 1,511 documents, 3,103 tokens, 2 sites"]},
        method, {"text": ["### damage audit, unseen sites: the content tokens removed"]}, damage]}


def test_the_default_path_row_and_the_worst_site_of_the_audit():
    record = _record([["exact MCFP", "50.0 %", "60.0 %", "0.00 %"], ["mine + clean, defaults", "83.5 %", "92.0 %",
                                                                      "1.65 %"]],
                     [["a", "100", "2", "2.00 %", ""], ["b", "100", "0", "0.50 %", ""]])
    assert set_rows(record) == [["unseen sites (looked at while fixing: tuning now)", "2026-12-04 01:00 · abc1234",
                                 "1,511", "2", "83.5 %", "92.0 %", "1.65 %", "2.00 % (a)", "1 of 2"]]


def test_a_set_without_the_default_path_is_an_error_naming_it():
    with pytest.raises(ValueError, match="quality-eval-x: the method table of .* has no 'mine \\+ clean, defaults'"):
        set_rows(_record([["exact MCFP", "50.0 %", "60.0 %", "0.00 %"]], []))
