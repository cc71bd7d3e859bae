"""An incremental `mine --index --dask` run (each slice listed, only its new and changed
documents fetched, the rest from the slice's last read on the workers' disk) publishes
what a from-scratch Dask run publishes after adds, updates and deletes: phrases, template
records, bitmaps, doc map, coverage, report, and the annotations on the documents."""
from __future__ import annotations

import pytest
from opensearchpy import helpers

from bench.published_run import published
from bloomspan.sidecar.distributed.cluster import DaskConfig
from bloomspan.sidecar.run.mining_run import MineConfig, run_mining
from tests.support.dask_helpers import ExternalCluster, local_cluster
from tests.support.sidecar_helpers import crawler_changes, make_source, template_records, web_docs

N = 300


@pytest.fixture(scope="module")
def cluster():
    with local_cluster(2) as c:
        yield c


def _config(prefix, url, work, tpl, **kw):
    return MineConfig.from_flags(index=f"{prefix}src", url=url, sigma=5, min_length=5, site_field="site",
                      template_index=f"{prefix}{tpl}", work_dir=str(work), lease_index=f"{prefix}lease",
                      batch_size=40, **kw)


def _source(os_client, index_prefix, ts: bool) -> list[dict]:
    docs = list(web_docs(N))
    stamp = {"updated_at": "2024-01-01T00:00:00Z"} if ts else {}
    mappings = {"properties": {"updated_at": {"type": "date"}}} if ts else None
    make_source(os_client, f"{index_prefix}src", [{**d, **stamp} for d in docs] +
                [{"id": "was-empty", "text": "", **stamp}], shards=3, mappings=mappings)
    return docs


def _annotations(client, index: str) -> dict:
    """Each source document's ``bloomspan`` fields, without the run id."""
    out = {}
    for hit in helpers.scan(client, index=index, query={"query": {"match_all": {}}}):
        fields = dict(hit["_source"].get("bloomspan") or {})
        fields.pop("run_id", None)
        out[hit["_id"]] = fields
    return out


def _assert_same_publication(os_client, index_prefix, inc, scratch) -> None:
    for name in ("docs_seen", "docs_mined", "docs_skipped", "skipped_by_reason", "tokens_mined", "covered_tokens",
                 "phrases"):
        assert getattr(inc, name) == getattr(scratch, name), name
    got, want = published(os_client, f"{index_prefix}inc"), published(os_client, f"{index_prefix}scratch")
    assert got["phrases"] == want["phrases"] and len(want["phrases"]) > 3
    assert got["doc_ids"] == want["doc_ids"]
    assert got["run"] == want["run"]  # counts, coverage bitmap, doc-id chunks
    assert got["report"] == want["report"]
    records = template_records(os_client, f"{index_prefix}scratch")
    assert len(records) > 3 and template_records(os_client, f"{index_prefix}inc") == records


@pytest.mark.parametrize("ts", [False, True], ids=["seq_no", "timestamp"])
def test_an_incremental_dask_run_publishes_what_a_from_scratch_run_publishes(cluster, os_client, index_prefix,
                                                                            opensearch_url, tmp_path, ts):
    docs = _source(os_client, index_prefix, ts)
    dask = DaskConfig(cluster.scheduler_address)
    kw = {"timestamp_field": "updated_at"} if ts else {}
    work = tmp_path / "inc"
    first = run_mining(_config(index_prefix, opensearch_url, work, "inc", **kw), dask=dask, client=os_client)
    assert first.kind == "full" and first.docs_seen == N + 1

    same = run_mining(_config(index_prefix, opensearch_url, work, "inc", **kw), dask=dask, client=os_client)
    assert same.kind == "incremental"
    assert same.incremental == {"listed": N + 1, "reused": N + 1, "new": 0, "changed": 0, "deleted": 0}

    crawler_changes(os_client, f"{index_prefix}src", docs, ts)
    inc = run_mining(_config(index_prefix, opensearch_url, work, "inc", **kw), dask=dask, client=os_client)
    assert inc.kind == "incremental"
    assert inc.incremental == {"listed": N + 1 + 25 - 40, "reused": N + 1 - 40 - 32, "new": 25, "changed": 32,
                               "deleted": 40}
    scratch = run_mining(_config(index_prefix, opensearch_url, tmp_path / "scratch", "scratch", full=True, **kw),
                         dask=dask, client=os_client)
    assert scratch.kind == "full"
    _assert_same_publication(os_client, index_prefix, inc, scratch)
    assert inc.skipped_by_reason == {"missing": 1, "empty": 0, "not_text": 0}


def test_an_incremental_run_that_annotates_on_an_external_scheduler_and_workers(os_client, index_prefix,
                                                                               opensearch_url, tmp_path):
    """The external ``dask scheduler`` + ``dask worker`` pair, with ``--annotate``: the
    incremental run writes the annotations a from-scratch run writes."""
    docs = _source(os_client, index_prefix, ts=False)
    work = tmp_path / "inc"
    with ExternalCluster(2) as ext:
        dask = DaskConfig(ext.address)
        run_mining(_config(index_prefix, opensearch_url, work, "inc", annotate=True), dask=dask, client=os_client)
        crawler_changes(os_client, f"{index_prefix}src", docs, ts=False)
        inc = run_mining(_config(index_prefix, opensearch_url, work, "inc", annotate=True), dask=dask,
                         client=os_client)
        # our own annotation writes are not changes: only the crawler's documents are fetched
        assert inc.kind == "incremental"
        assert inc.incremental == {"listed": N + 1 + 25 - 40, "reused": N + 1 - 40 - 32, "new": 25, "changed": 32,
                                   "deleted": 40}
        after_inc = _annotations(os_client, f"{index_prefix}src")
        scratch = run_mining(_config(index_prefix, opensearch_url, tmp_path / "scratch", "scratch", full=True,
                                     annotate=True), dask=dask, client=os_client)
    _assert_same_publication(os_client, index_prefix, inc, scratch)
    assert sum(1 for a in after_inc.values() if a) > N // 2
    assert _annotations(os_client, f"{index_prefix}src") == after_inc
