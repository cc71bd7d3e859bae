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


def test_sets_never_tuned_on_get_a_table_of_their_own(tmp_path):
    """Tuned-on sets first, the never-tuned ones in a second table: each short enough for the page."""
    import json

    from bench.quality_summary import summary_section

    names = {"quality-eval-unseen": "unseen sites (looked at while fixing: tuning now)",
             "quality-eval-third-unseen": "third unseen sites (never tuned on)"}
    for stem, title in names.items():
        record = _record([["mine + clean, defaults", "80.0 %", "90.0 %", "1.00 %"]], [["a", "100", "1", "1.00 %", ""]])
        record["body"][0]["text"] = [f"### {title}: 10 documents, 100 tokens, 1 sites"]
        record.update(name=stem, topic="Template quality", title=title, command="c", context="")
        (tmp_path / f"{stem}.json").write_text(json.dumps(record))
    text = summary_section(tmp_path, [])
    tables = [t for t in text.split("\n\n") if t.startswith("| set |")]
    assert len(tables) == 2
    assert "tuning now" in tables[0] and "never tuned on" not in tables[0]
    assert "never tuned on" in tables[1] and "tuning now" not in tables[1]
