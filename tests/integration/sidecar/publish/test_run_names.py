"""A run published by an earlier version (tokens_seen, n_docs, doc_covered_fraction_histogram,
engine stats tokens/documents/coverage_ratio) still lists, reports and renders, under the
current names."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bloomspan.mappings import load
from bloomspan.sidecar.cli.main import cli
from bloomspan.sidecar.publish.template_index import current_run_doc, list_runs
from bloomspan.sidecar.report.model import cluster_report_model
from bloomspan.sidecar.report.operator_report import report
from bloomspan.sidecar.report.text import render_report

pytestmark = pytest.mark.integration

RUN_ID = "20240105t101010123-abcd"
HIST = [{"lo": k / 10, "hi": (k + 1) / 10, "docs": 1 if k in (0, 9) else 0} for k in range(10)]
OLD_RUN = {  # the run document as the version before the rename wrote it
    "kind": "run", "run_id": RUN_ID, "status": "published", "source_index": "crawl", "field": "text",
    "started_at": "2024-01-05T10:10:00.000+00:00", "finished_at": "2024-01-05T10:10:10.000+00:00",
    "published_at": "2024-01-05T10:10:10.123+00:00",
    "docs_seen": 3, "docs_skipped": 1, "tokens_seen": 40, "covered_tokens": 12, "covered_share": 0.3, "phrases": 1,
    "params": {"sigma": 2, "min_length": 3, "engine": "bloomspan"},
    "report": {"n_tokens": 40, "n_docs": 2, "n_phrases": 1, "covered_tokens": 12, "covered_share": 0.3,
               "empty_docs": 0, "docs_fully_covered": 1, "docs_without_coverage": 1,
               "mean_doc_covered_fraction": 0.5, "doc_covered_fraction_histogram": HIST,
               "top_phrases": [], "most_cluttered_docs": [{"doc": 0, "id": "a", "covered_tokens": 12,
                                                           "tokens": 12, "covered_fraction": 1.0}],
               "skipped_by_reason": {"missing": 1}},
    "stats": {"tokens": 40, "documents": 2, "coverage_ratio": 0.3, "seconds_total": 0.01},
    "doc_id_chunks": 0, "coverage_chunks": 0,
}
PHRASE = {"kind": "phrase", "run_id": RUN_ID, "phrase_id": "p1", "text": "all rights reserved",
          "tokens": ["all", "rights", "reserved"], "length": 3, "df": 2, "occurrences": 4, "psi": 6,
          "example_ids": ["a"]}


@pytest.fixture
def old_run(os_client, index_prefix):
    alias = f"{index_prefix}tpl"
    physical = f"{alias}-{RUN_ID}"
    body = load("template-index")["template"]
    body["mappings"]["properties"]["tokens_seen"] = {"type": "long"}  # what the earlier mapping had
    del body["mappings"]["properties"]["tokens_mined"]
    os_client.indices.create(index=physical, body=body)
    os_client.index(index=physical, id="run", body=OLD_RUN)
    os_client.index(index=physical, id="p1", body=PHRASE)
    os_client.indices.refresh(index=physical)
    os_client.indices.put_settings(index=physical, body={"index.blocks.write": True})
    os_client.indices.put_alias(index=physical, name=alias)
    return alias


def test_an_old_run_document_reads_under_the_current_names(os_client, old_run):
    run = current_run_doc(os_client, old_run)
    assert run["tokens_mined"] == 40 and "tokens_seen" not in run
    assert run["report"]["docs_mined"] == 2 and run["report"]["tokens_mined"] == 40
    assert run["report"]["phrases"] == 1 and run["report"]["clutter_histogram"] == HIST
    assert run["stats"] == {"tokens_mined": 40, "docs_mined": 2, "covered_share": 0.3, "seconds_total": 0.01}
    [row] = list_runs(os_client, old_run)
    assert (row["run_id"], row["tokens_mined"], row["docs_seen"], row["current"]) == (RUN_ID, 40, 3, True)


def test_an_old_run_reports_and_renders(os_client, old_run):
    rep = report(os_client, old_run, top=5)
    assert (rep["docs_seen"], rep["docs_mined"], rep["docs_skipped"], rep["tokens_mined"]) == (3, 2, 1, 40)
    assert rep["clutter_histogram"] == HIST and [p["text"] for p in rep["top_phrases"]] == ["all rights reserved"]
    assert rep["top_phrases"][0]["psi_share"] == 6 / 40
    text = render_report(rep)
    assert "documents: 3 seen, 2 mined, 1 skipped" in text and "12 of 40 tokens = 30.00%" in text
    model = cluster_report_model(os_client, old_run, examples=0)
    assert model["quantities"]["tokens_mined"] == 40 and model["quantities"]["docs_mined"] == 2
    assert model["clutter_histogram"] == HIST


def test_the_cli_lists_and_reports_an_old_run(os_client, old_run, opensearch_url):
    res = CliRunner().invoke(cli, ["runs", "--url", opensearch_url, "--template-index", old_run, "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)[0]["tokens_mined"] == 40
    res = CliRunner().invoke(cli, ["report", "--url", opensearch_url, "--template-index", old_run])
    assert res.exit_code == 0 and "2 mined" in res.output, res.output
