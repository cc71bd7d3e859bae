"""`bloomspan mine --templates` on a live node: the detector's records are published with the
run, read back for cleaning, and clean the mined pages exactly as the run covered them."""
from __future__ import annotations

import numpy as np
import pytest
from opensearchpy import helpers

from bloomspan.corpora.web import generate_web
from bloomspan.engine.text.tokenizer import tokenize
from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
from bloomspan.sidecar.publish.template_reader import current_run, load_cleaning_set, load_phrase_set
from bloomspan.sidecar.report.operator_report import explain, render_explain, report
from bloomspan.sidecar.report.text import render_report
from bloomspan.sidecar.run.mining_run import MineConfig, run_mining
from bloomspan.sidecar.serve.service import create_app
from bloomspan.sidecar.serve.state import ServeConfig
from tests.support.service_thread import serve_in_thread
from tests.support.sidecar_helpers import make_source

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def crawl():
    return [{"id": d["id"], "text": d["text"], "site": d["site"], "url": d["url"]}
            for d in generate_web(300, seed=11, n_sites=4)]


def test_mine_templates_publishes_records_that_clean_like_the_run(os_client, index_prefix, opensearch_url,
                                                                  tmp_path, crawl):
    src, tpl = f"{index_prefix}src", f"{index_prefix}tpl"
    make_source(os_client, src, crawl, shards=2)
    config = MineConfig.from_flags(index=src, url=opensearch_url, template_index=tpl, work_dir=str(tmp_path),
                        lease_index=f"{index_prefix}lease", site_field="site", url_field="url", templates=True)
    summary = run_mining(config, client=os_client)
    t = summary.templates
    assert t is not None and t["phrases"] > 0 and t["skeletons"] > 0
    assert summary.covered_tokens < t["covered_tokens"] <= summary.tokens_mined  # templates add to exact phrases

    physical = current_run(os_client, tpl)
    kinds = {}
    for hit in helpers.scan(os_client, index=physical, query={"query": {"match_all": {}}}):
        kinds[hit["_source"]["kind"]] = kinds.get(hit["_source"]["kind"], 0) + 1
    assert kinds["template"] == t["phrases"] and kinds["skeleton"] == t["skeletons"]
    assert kinds["template_config"] == 1 and kinds["phrase"] == summary.phrases
    run = os_client.get(index=physical, id="run")["_source"]
    assert run["templates"]["covered_tokens"] == t["covered_tokens"] and run["params"]["templates"] is True
    rep = report(os_client, tpl)
    assert rep["templates"]["skeletons"] == t["skeletons"] and "detector" not in rep["templates"]
    assert f"{t['skeletons']:,} page skeletons" in render_report(rep)

    # The published records, applied by the cleaner to the mined pages with whole phrases, cover
    # exactly what the run covered (the run's exact phrases count only where ingest applies them,
    # on pages of sites without records, as in the skeleton walk on both sides).
    phrase_set, templates = load_cleaning_set(os_client, physical)
    assert templates is not None and len(templates.skeletons) == t["skeletons"]
    assert {p.min_length for p in phrase_set if p.id.startswith("p")} == {10}  # from the run document
    covered = {}
    for match in ("phrases", "windows"):
        cleaner = Cleaner(phrase_set, CleanerConfig(fields=("text",), scope_field="site", url_field="url",
                                                    id_field="id", mode="mark", match=match), templates=templates)
        results = cleaner.clean_batch(crawl)
        assert all(r.ok for r in results)
        covered[match] = sum(r.covered_tokens for r in results)
    assert covered["phrases"] == t["covered_tokens"]
    # every site of this crawl has detector records, so the run's exact phrases (whose windows
    # would add coverage) apply on none of its pages: windows can only add the detector's own
    assert covered["windows"] >= covered["phrases"]
    assert sum(r.n_tokens for r in results) == summary.tokens_mined == sum(len(tokenize(d["text"])) for d in crawl)

    exp = explain(os_client, tpl, crawl[7]["id"])  # the cleaner above saw the same page and scopes
    assert exp["templates"]["scopes"][0] == crawl[7]["site"]
    assert exp["templates"]["covered_tokens"] == results[7].covered_tokens >= exp["covered_tokens"]
    assert "template detector's records" in render_explain(exp)
    # A plain reader of the same index still gets the exact phrases only.
    assert len(load_phrase_set(os_client, physical)) == summary.phrases

    # The proxy serving that template index cleans a crawler's writes with the site's templates.
    page = crawl[5]
    want = cleaner.clean(page)
    dest = f"{index_prefix}clean"
    app = create_app(ServeConfig(upstream_url=opensearch_url, clean_indices=(dest,), template_index=tpl,
                                 scope_field="site", url_field="url", require_template=True))
    with serve_in_thread(app) as (url, _loop):
        from opensearchpy import OpenSearch

        OpenSearch(hosts=[url], timeout=60).index(index=dest, id="p", refresh=True,
                                                  body={k: v for k, v in page.items() if k != "id"})
    got = os_client.get(index=dest, id="p")["_source"]
    assert got["text"] != page["text"] and len(got["text"]) < len(page["text"])
    stripped = Cleaner(phrase_set, CleanerConfig(fields=("text",), scope_field="site", url_field="url"),
                       templates=templates).clean(page).doc["text"]
    assert got["text"] == stripped and want.covered_tokens > 0


def test_templates_without_site_use_the_url_host_and_old_snapshots_ask_for_full(os_client, index_prefix,
                                                                                opensearch_url, tmp_path, crawl):
    src, tpl = f"{index_prefix}src", f"{index_prefix}tpl"
    make_source(os_client, src, crawl[:120], shards=1)
    base = dict(index=src, url=opensearch_url, template_index=tpl, work_dir=str(tmp_path),
                lease_index=f"{index_prefix}lease", url_field="url", templates=True,
                template_config_path={"skeleton": {"site_echo_length": 6}})
    summary = run_mining(MineConfig.from_flags(**base), client=os_client)
    assert summary.templates["skeletons"] >= 1
    run = os_client.get(index=current_run(os_client, tpl), id="run")["_source"]
    assert run["templates"]["documents_with_site"] == 120
    assert run["params"]["template_config"]["skeleton"]["site_echo_length"] == 6
    assert run["templates"]["detector"]["config"]["skeleton"]["site_echo_length"] == 6
    # an incremental run after a change keeps line boundaries through the snapshot
    os_client.index(index=src, id=crawl[0]["id"], body={**{k: v for k, v in crawl[0].items() if k != "id"},
                                                        "text": crawl[0]["text"] + "\nOne more line"}, refresh=True)
    again = run_mining(MineConfig.from_flags(**base), client=os_client)
    assert again.kind == "incremental" and again.templates["skeletons"] == summary.templates["skeletons"]
    assert np.isclose(again.templates["covered_share"], summary.templates["covered_share"], atol=0.01)
