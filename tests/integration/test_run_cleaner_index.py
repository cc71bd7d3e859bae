"""``bloomspan.cleaner_from_run(ALIAS, client=…)`` on the real node: the run `mine --index` published
cleans as the `mine --out` directory of the same pages does, by alias or physical index, and
through a framework step's ``from_run``; an alias that is not there is one error naming it."""
from __future__ import annotations

import pytest
from click.testing import CliRunner
from langchain_core.documents import Document

import bloomspan
from bloomspan.ingest.base.errors import IngestConfigError
from bloomspan.sidecar.cli.main import cli
from bloomspan.sidecar.integrations.langchain_transformer import BloomspanTransformer
from bloomspan.sidecar.publish.template_reader import current_run
from tests.support.boilerplate_pages import MIN_LENGTH, SIGMA, pages
from tests.support.sidecar_helpers import make_source


def test_a_published_run_cleans_by_alias_index_and_framework_step(opensearch_url, os_client, index_prefix, tmp_path):
    docs = pages(30)
    make_source(os_client, f"{index_prefix}crawl", [{"id": d["id"], "text": d["text"]} for d in docs], shards=1)
    tpl = f"{index_prefix}tpl"
    res = CliRunner().invoke(cli, [str(a) for a in (
        "mine", "--url", opensearch_url, "--index", f"{index_prefix}crawl", "--field", "text", "--template-index", tpl,
        "--lease-index", f"{index_prefix}lease", "--work-dir", tmp_path / "w", "--sigma", SIGMA,
        "--min-length", MIN_LENGTH, "--progress", "none")])
    assert res.exit_code == 0, res.output
    want = ["\n\n".join(d["paragraphs"]) for d in docs]
    for name in (tpl, current_run(os_client, tpl)):
        cleaner = bloomspan.cleaner_from_run(name, client=os_client)
        assert [r.doc["text"] for r in cleaner.clean_batch({"text": d["text"]} for d in docs)] == want
    step = BloomspanTransformer.from_run(tpl, client=os_client)
    assert [d.page_content for d in step.transform_documents([Document(page_content=d["text"]) for d in docs])] == want
    with pytest.raises(IngestConfigError, match=f"run='{index_prefix}absent': no such template alias or index"):
        bloomspan.Cleaner.from_run(f"{index_prefix}absent", client=os_client)
