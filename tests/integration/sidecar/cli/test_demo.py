"""`bloomspan demo` (what `make demo` runs), small, against the real node."""
from __future__ import annotations

import pytest

from bloomspan.sidecar.cli.demo import DemoConfig, run_demo
from bloomspan.sidecar.cluster.connection import ClusterConfig

pytestmark = pytest.mark.integration


def test_demo_mines_publishes_and_cleans_a_new_page(os_client, opensearch_url, index_prefix, tmp_path):
    lines: list[str] = []
    config = DemoConfig(cluster=ClusterConfig(url=opensearch_url), docs=400, index=f"{index_prefix}crawl", template_index=f"{index_prefix}tpl",
                        lease_index=f"{index_prefix}lease", work_dir=str(tmp_path))
    out = run_demo(config, lines.append)
    text = "\n".join(lines)
    assert out["docs_mined"] == 400 and out["phrases"] > 0 and "template detector (--templates)" in text
    assert out["template_covered_share"] > out["covered_share"] > 0
    assert out["page_ratio_with_templates"] >= out["page_ratio"] and out["page_ratio_with_templates"] > 0
    assert "demo finished" in text
