"""Runs started by `bloomspan serve`: a refused run keeps the current one, and a scheduled run
follows the configuration of the run it replaces (--templates, site and URL fields)."""
from __future__ import annotations

import logging

from bloomspan.sidecar.publish.template_index import aliased_indices, current_run_doc
from bloomspan.sidecar.run.mining_run import MineConfig, run_mining
from bloomspan.sidecar.serve.mining_runs import mine_for_service, previous_params
from bloomspan.sidecar.serve.state import ServeConfig
from tests.support.sidecar_helpers import make_source, web_docs


def _serve_config(opensearch_url, index_prefix, tmp_path, **kw):
    settings = dict(upstream_url=opensearch_url, template_index=f"{index_prefix}tpl", mine_index=f"{index_prefix}src",
                    work_dir=str(tmp_path / "serve-work"), lease_index=f"{index_prefix}lease", sigma=5, min_length=5)
    return ServeConfig(**{**settings, **kw})


def test_a_scheduled_run_follows_the_templates_run_it_replaces(os_client, index_prefix, opensearch_url, tmp_path):
    src, tpl = f"{index_prefix}src", f"{index_prefix}tpl"
    docs = [{**d, "url": f"https://{d['site']}/docs/{d['id']}"} for d in web_docs(120)]
    make_source(os_client, src, docs, shards=1)
    first = run_mining(MineConfig.from_flags(index=src, url=opensearch_url, template_index=tpl, work_dir=str(tmp_path / "cli"),
                                  lease_index=f"{index_prefix}lease", sigma=5, min_length=5, engine="fhk",
                                  templates=True, site_field="site", url_field="url"), client=os_client)
    assert first.templates is not None
    config = _serve_config(opensearch_url, index_prefix, tmp_path, sigma=None, min_length=None)  # serve's defaults
    followed = previous_params(config, os_client)
    assert (followed["sigma"], followed["min_length"]) == (5, 5)
    assert (followed["templates"], followed["site_field"], followed["url_field"], followed["engine"]) == \
        (True, "site", "url", "fhk")
    summary = mine_for_service(config)
    assert summary["run_id"] != first.run_id and summary["templates"]["phrases"] == first.templates["phrases"]
    params = current_run_doc(os_client, tpl)["params"]
    assert (params["templates"], params["site_field"], params["url_field"]) == (True, "site", "url")
    assert (params["sigma"], params["min_length"]) == (5, 5)  # not serve's flag defaults


def test_a_refused_service_run_logs_one_line_and_keeps_the_current_run(os_client, index_prefix, opensearch_url,
                                                                       tmp_path, caplog):
    src, tpl = f"{index_prefix}src", f"{index_prefix}tpl"
    make_source(os_client, src, web_docs(60), shards=1)
    good = run_mining(MineConfig.from_flags(index=src, url=opensearch_url, template_index=tpl, work_dir=str(tmp_path / "cli"),
                                 lease_index=f"{index_prefix}lease", sigma=5, min_length=5), client=os_client)
    config = _serve_config(opensearch_url, index_prefix, tmp_path, mine_field="body")  # a typo
    with caplog.at_level(logging.INFO, logger="bloomspan.sidecar.serve.mining_runs"):
        summary = mine_for_service(config)
    assert summary["skipped"] and summary["refused"] and summary["reason"].startswith("--field body: 0 of 60")
    lines = [r for r in caplog.records if r.name == "bloomspan.sidecar.serve.mining_runs" and r.levelno >= logging.WARNING]
    assert len(lines) == 1 and "the current run stays" in lines[0].getMessage()
    assert aliased_indices(os_client, tpl) == [good.physical_index]
    too_high = _serve_config(opensearch_url, index_prefix, tmp_path, sigma=500)
    assert mine_for_service(too_high)["reason"].startswith("--sigma 500:")
    assert aliased_indices(os_client, tpl) == [good.physical_index]
