"""bloomspan report / explain on a published run, library and CLI."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bench.published_run import published
from bloomspan.engine.text.tokenizer import tokenize
from bloomspan.sidecar.cli.cluster import cluster_cli
from bloomspan.sidecar.errors import DocumentNotFoundError, RunNotFoundError
from bloomspan.sidecar.publish.bitmaps import decode_bitmap
from bloomspan.sidecar.report.operator_report import explain, render_explain, report
from bloomspan.sidecar.report.text import render_report
from bloomspan.sidecar.run.mining_run import MineConfig, run_mining
from tests.support.sidecar_helpers import ENGINE, make_source, web_docs


@pytest.fixture
def mined(os_client, index_prefix, opensearch_url, tmp_path):
    docs = list(web_docs(200))
    make_source(os_client, f"{index_prefix}src", docs + [{"id": "blank", "text": " "}], shards=2)
    summary = run_mining(MineConfig.from_flags(index=f"{index_prefix}src", url=opensearch_url, sigma=5, min_length=5,
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
    assert [h["text"] for h in rep["top_phrases"]] == [p["text"] for p in best]
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


# ---------------------------------------------------------------------- the HTML report
@pytest.fixture
def two_runs(os_client, index_prefix, opensearch_url, tmp_path):
    """A site-scoped run with the template detector, then a second run after the crawl grew."""
    from opensearchpy import helpers

    from tests.support.sidecar_helpers import make_source as _make

    docs = [dict(d, url=f"https://{d['site']}/p/{d['id']}") for d in web_docs(400)]
    _make(os_client, f"{index_prefix}src", docs[:250], shards=2)
    config = dict(index=f"{index_prefix}src", url=opensearch_url, sigma=5, min_length=5, engine=ENGINE,
                  template_index=f"{index_prefix}tpl", work_dir=str(tmp_path), lease_index=f"{index_prefix}lease",
                  site_field="site", url_field="url", templates=True, keep_runs=3)
    first = run_mining(MineConfig.from_flags(**config), client=os_client)
    helpers.bulk(os_client, ({"_index": f"{index_prefix}src", "_id": d["id"],
                              "_source": {k: v for k, v in d.items() if k != "id"}} for d in docs[250:]), refresh=True)
    second = run_mining(MineConfig.from_flags(**config), client=os_client)
    return first, second


def test_html_report_of_the_cluster_run(os_client, index_prefix, opensearch_url, two_runs, tmp_path):
    import re

    from bloomspan.sidecar.report.html import render_html
    from bloomspan.sidecar.report.model import cluster_report_model

    first, second = two_runs
    tpl = f"{index_prefix}tpl"
    model = cluster_report_model(os_client, tpl)
    assert [r["run_id"] for r in model["runs"]] == [first.run_id, second.run_id]
    assert [r["covered_share"] for r in model["runs"]] == [first.covered_share, second.covered_share]
    assert model["runs"][-1]["current"] and not model["runs"][0]["current"]
    assert all(r["template_covered_share"] is not None for r in model["runs"])
    rep = report(os_client, tpl, top=20)
    assert model["quantities"]["covered_share"] == rep["covered_share"] == second.covered_share
    assert model["sites"] == rep["most_cluttered_sites"] and model["sites"]
    kinds = {r["kind"] for r in model["phrases"]}
    assert "phrase" in kinds and kinds - {"phrase"}  # the template detector's records are listed too
    assert model["phrases_total"] > rep["phrases"]
    assert all(r["example_ids"] for r in model["phrases"] if r["kind"] == "phrase")
    assert 1 <= len(model["examples"]) <= 3
    for ex in model["examples"]:
        exp = explain(os_client, tpl, ex["id"])
        assert ex["covered_tokens"] == exp["covered_tokens"] and ex["spans"] == [
            [s, min(e, len(ex["text"]))] for s, e in exp["spans"] if s < len(ex["text"])]
    page = render_html(model)
    assert len(re.findall(r'<g id="runs-point-\d+"', page)) == 2
    assert len(re.findall(r'<g id="site-bar-\d+"', page)) == min(12, len(model["sites"]))
    out = tmp_path / "report.html"
    r = CliRunner().invoke(cluster_cli, ["report", "--url", opensearch_url, "--template-index", tpl, "--html", str(out)],
                           catch_exceptions=False)
    assert r.exit_code == 0 and "2 run(s)" in r.output
    assert out.read_text(encoding="utf-8").count('<g id="hist-bar-') == 10


def test_serve_shows_the_report_without_a_token(os_client, index_prefix, opensearch_url, two_runs, tmp_path):
    import urllib.error
    import urllib.request

    from bloomspan.sidecar.publish.template_index import rollback
    from bloomspan.sidecar.serve.service import create_app
    from bloomspan.sidecar.serve.state import ServeConfig
    from tests.support.service_thread import serve_in_thread

    tpl = f"{index_prefix}tpl"

    def get(url):
        try:
            with urllib.request.urlopen(url, timeout=120) as resp:
                return resp.status, resp.headers, resp.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers, exc.read().decode()

    config = ServeConfig(upstream_url=opensearch_url, template_index=tpl, work_dir=str(tmp_path / "w"),
                         lease_index=f"{index_prefix}lease")
    with serve_in_thread(create_app(config)) as (url, _loop):
        status, headers, page = get(url + "/report")
        assert status == 200 and headers["Content-Type"].startswith("text/html")
        assert "default-src 'none'" in headers["Content-Security-Policy"]
        assert two_runs[1].run_id in page and page.count('<g id="runs-point-') == 2
        assert get(url + "/report")[2] == page  # same run: the kept page
        rollback(os_client, tpl)
        status, _, again = get(url + "/report")
        assert status == 200 and f"run {two_runs[0].run_id}" in again  # the alias moved: rendered anew
    bare = ServeConfig(upstream_url=opensearch_url, template_index=f"{index_prefix}none",
                       work_dir=str(tmp_path / "w2"), lease_index=f"{index_prefix}lease")
    with serve_in_thread(create_app(bare)) as (url, _loop):
        status, _, body = get(url + "/report")
        assert status == 404 and json.loads(body)["error"]["type"] == "bloomspan_no_run"
