"""Line-shape records on a live node: `mine` with sites publishes them in the template index,
the cleaning set read back holds them, and the cleaner covers exactly what the run reported."""
from __future__ import annotations

import pytest
from opensearchpy import helpers

from bloomspan.corpora.web import generate_web
from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
from bloomspan.sidecar.publish.template_reader import current_run, load_cleaning_set
from bloomspan.sidecar.run.mining_run import MineConfig, run_mining
from tests.support.navigation_pages import texinfo_site
from tests.support.sidecar_helpers import make_source

pytestmark = pytest.mark.integration


def test_line_shapes_travel_through_the_template_index(os_client, index_prefix, opensearch_url, tmp_path):
    pages = [{k: d[k] for k in ("id", "text", "site", "url")} for d in texinfo_site(40, 1) + texinfo_site(30, 2, "b.ex")]
    web = [{k: d[k] for k in ("id", "text", "site", "url")} for d in generate_web(100, seed=2, n_sites=2)]
    docs = pages + web
    src, tpl = f"{index_prefix}src", f"{index_prefix}tpl"
    make_source(os_client, src, docs, shards=1)
    config = MineConfig.from_flags(index=src, url=opensearch_url, template_index=tpl, work_dir=str(tmp_path),
                        lease_index=f"{index_prefix}lease", site_field="site", url_field="url", templates=True)
    summary = run_mining(config, client=os_client)
    physical = current_run(os_client, tpl)
    shapes = [h["_source"] for h in helpers.scan(os_client, index=physical, query={"query": {"term": {"kind": "line_shape"}}})]
    assert {s["scope"] for s in shapes} >= {"manual.example", "b.ex"}
    assert all(s["skeleton"]["kind"] == "line_shape" and s["skeleton"]["version"] == 1 for s in shapes)

    phrase_set, templates = load_cleaning_set(os_client, physical)
    assert templates is not None and len(templates.line_shapes) == len(shapes)
    cleaner = Cleaner(phrase_set, CleanerConfig(fields=("text",), scope_field="site", url_field="url", id_field="id",
                                                mode="mark", match="phrases"), templates=templates)
    results = cleaner.clean_batch(docs)
    assert all(r.ok for r in results)
    assert sum(r.covered_tokens for r in results) == summary.templates["covered_tokens"]
    stripped = Cleaner(phrase_set, CleanerConfig(fields=("text",), scope_field="site", url_field="url"),
                       templates=templates).clean(pages[3]).doc["text"]
    assert "Previous" not in stripped and pages[3]["text"].split("\n")[2] in stripped
