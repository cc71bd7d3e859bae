"""bloomspan report / explain on a published run, library and CLI."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bloomspan.engine.tokenizer import tokenize
from bloomspan.sidecar.bitmaps import decode_bitmap
from bloomspan.sidecar.cli_cluster import cluster_cli
from bloomspan.sidecar.errors import DocumentNotFoundError, RunNotFoundError
from bloomspan.sidecar.mining_run import MineConfig, run_mining
from bloomspan.sidecar.operator_report import explain, render_explain, render_report, report
from sidecar_helpers import ENGINE, make_source, published, web_docs


@pytest.fixture
def mined(os_client, index_prefix, opensearch_url, tmp_path):
    docs = list(web_docs(200))
    make_source(os_client, f"{index_prefix}src", docs + [{"id": "blank", "text": " "}], shards=2)
    summary = run_mining(MineConfig(index=f"{index_prefix}src", url=opensearch_url, sigma=5, min_length=5,
                                    engine=ENGINE, template_index=f"{index_prefix}tpl", work_dir=str(tmp_path),
                                    lease_index=f"{index_prefix}lease", site_field="site"), client=os_client)
    return docs, summary


def test_report_numbers_and_text(os_client, index_prefix, mined):
    docs, summary = mined
    tpl = f"{index_prefix}tpl"
    rep = report(os_client, tpl, top=5)
    assert rep["run_id"] == summary.run_id and rep["covered_share"] == summary.covered_share
    assert (rep["docs_seen"], rep["docs_mined"], rep["docs_skipped"]) == (201, 200, 1)
    assert rep["skipped_by_reason"]["empty"] == 1
    assert sum(b["docs"] for b in rep["clutter_histogram"]) == 200
    pub = published(os_client, tpl)
    best = sorted(pub["phrases"].values(), key=lambda p: (-p["psi"], -p["length"], p["text"]))[:5]
    assert [h["text"] for h in rep["top_hogs"]] == [p["text"] for p in best]
    fractions = [d["covered_fraction"] for d in rep["most_cluttered_docs"]]
    assert fractions == sorted(fractions, reverse=True) and len(fractions) <= 5
    sites = {d["site"] for d in docs}
    assert rep["most_cluttered_sites"] and {s["site"] for s in rep["most_cluttered_sites"]} <= sites
    text = render_report(rep)
    assert f"{summary.covered_share:.2%}" in text and "top index hogs" in text and "most cluttered sites" in text


def test_explain_spans_are_the_phrases(os_client, index_prefix, mined):
    docs, _ = mined
    tpl = f"{index_prefix}tpl"
    pub = published(os_client, tpl)
    doc = max(docs, key=lambda d: sum(1 for p in pub["phrases"].values() if d["id"] in p["example_ids"]))
    exp = explain(os_client, tpl, doc["id"])
    assert exp["phrases"] and exp["index"] == f"{index_prefix}src"
    texts = {p["text"] for p in pub["phrases"].values()}
    for row in exp["phrases"]:
        assert row["text"] in texts
        for s, e in row["spans"]:
            assert " ".join(tokenize(doc["text"][s:e])) == row["text"]
    # exactly the phrases whose document bitmap holds this document
    member = pub["doc_ids"].index(doc["id"])
    listed = {p["text"] for p in pub["phrases"].values() if member in decode_bitmap(p["doc_bitmap"])}
    assert listed == {r["text"] for r in exp["phrases"]}
    assert exp["covered_tokens"] == sum(len(tokenize(doc["text"][s:e])) for s, e in exp["spans"])
    assert doc["id"] in render_explain(exp)
    with pytest.raises(DocumentNotFoundError):
        explain(os_client, tpl, "no-such-doc")


def test_missing_run_is_a_clear_error(os_client, index_prefix):
    with pytest.raises(RunNotFoundError, match="no published run"):
        report(os_client, f"{index_prefix}nothing")


def test_cli_report_explain_runs_rollback(os_client, index_prefix, opensearch_url, mined):
    tpl = f"{index_prefix}tpl"
    runner = CliRunner()
    base = ["--url", opensearch_url, "--template-index", tpl]
    r = runner.invoke(cluster_cli, ["report", *base, "--json"], catch_exceptions=False)
    assert r.exit_code == 0 and json.loads(r.output)["run_id"] == mined[1].run_id
    r = runner.invoke(cluster_cli, ["explain", *base, "--id", mined[0][0]["id"]], catch_exceptions=False)
    assert r.exit_code == 0 and "tokens covered" in r.output
    r = runner.invoke(cluster_cli, ["explain", *base, "--id", "nope"], catch_exceptions=False)
    assert r.exit_code == 1 and "not found" in r.output
    r = runner.invoke(cluster_cli, ["runs", *base], catch_exceptions=False)
    assert r.exit_code == 0 and f"* {mined[1].run_id}" in r.output
    r = runner.invoke(cluster_cli, ["rollback", *base], catch_exceptions=False)
    assert r.exit_code == 1 and "older" in r.output
