"""Earlier names of run documents and reports read as the current ones."""
from __future__ import annotations

from bloomspan.sidecar.publish.run_names import current_names, current_report


def test_earlier_names_become_current_and_nothing_else_changes():
    old = {"run_id": "r", "tokens_seen": 9, "docs_seen": 3, "report": {"n_docs": 2, "n_tokens": 9, "n_phrases": 1,
           "doc_covered_fraction_histogram": [], "top_hogs": [], "empty_docs": 0}, "stats": {"coverage_ratio": 0.5}}
    assert current_names(old) == {"run_id": "r", "tokens_mined": 9, "docs_seen": 3, "report": {
        "docs_mined": 2, "tokens_mined": 9, "phrases": 1, "clutter_histogram": [], "top_phrases": [],
        "empty_docs": 0}, "stats": {"covered_share": 0.5}}
    assert old["tokens_seen"] == 9  # the input is left as it was


def test_a_current_name_wins_over_an_earlier_copy():
    """report.json of `mine --jsonl` had both n_docs and documents; a current key is never overwritten."""
    assert current_report({"docs_mined": 5, "n_docs": 4, "phrases": 2, "n_phrases": 7}) == {"docs_mined": 5,
                                                                                         "phrases": 2}
    assert current_names(current_names({"tokens_seen": 1})) == {"tokens_mined": 1}


def test_a_summary_saved_by_the_previous_version_builds_todays_run_summary():
    from bloomspan.sidecar.publish.run_names import current_summary
    from bloomspan.sidecar.run.mining_run import RunSummary

    earlier = {"run_id": "r1", "physical_index": "tpl-r1", "template_index": "tpl", "kind": "full",
               "resumed": False, "docs_seen": 12, "docs_stored": 10, "docs_skipped": 2,
               "skipped_by_reason": {"missing": 2}, "tokens": 900, "covered_tokens": 90, "covered_share": 0.1,
               "phrases": 3, "documents": 10}
    summary = RunSummary(**current_summary(earlier))
    assert (summary.docs_mined, summary.tokens_mined, summary.docs_seen, summary.phrases) == (10, 900, 12, 3)
    assert current_summary(summary.as_dict()) == summary.as_dict()  # today's summary is left as it is
