"""Re-mining after crawler updates publishes exactly what a from-scratch run publishes."""
from __future__ import annotations

import pytest

from bench.published_run import published
from bloomspan.sidecar.run.mining_run import MineConfig, run_mining
from tests.support.sidecar_helpers import ENGINE, crawler_changes, make_source, web_docs

N = 300


def _config(prefix, url, work, tpl, **kw):
    return MineConfig.from_flags(index=f"{prefix}src", url=url, sigma=5, min_length=5, engine=ENGINE,
                      template_index=f"{prefix}{tpl}", work_dir=str(work), lease_index=f"{prefix}lease",
                      batch_size=40, **kw)


@pytest.mark.parametrize("ts", [False, True], ids=["seq_no", "timestamp"])
def test_incremental_equals_from_scratch(os_client, index_prefix, opensearch_url, tmp_path, ts):
    docs = list(web_docs(N))
    src = f"{index_prefix}src"
    stamp = {"updated_at": "2024-01-01T00:00:00Z"} if ts else {}
    mappings = {"properties": {"updated_at": {"type": "date"}}} if ts else None
    make_source(os_client, src, [{**d, **stamp} for d in docs] + [{"id": "was-empty", "text": "", **stamp}],
                shards=3, mappings=mappings)
    kw = {"timestamp_field": "updated_at"} if ts else {}
    first = run_mining(_config(index_prefix, opensearch_url, tmp_path / "inc", "inc", **kw), client=os_client)
    assert first.kind == "full" and first.docs_seen == N + 1

    # nothing changed: everything reused, nothing fetched
    same = run_mining(_config(index_prefix, opensearch_url, tmp_path / "inc", "inc", **kw), client=os_client)
    assert same.kind == "incremental" and same.incremental["reused"] == N + 1
    assert same.incremental["new"] == same.incremental["changed"] == same.incremental["deleted"] == 0

    crawler_changes(os_client, src, docs, ts)
    inc = run_mining(_config(index_prefix, opensearch_url, tmp_path / "inc", "inc", **kw), client=os_client)
    assert inc.kind == "incremental"
    assert inc.incremental == {"listed": N + 1 + 25 - 40, "reused": N + 1 - 40 - 32, "new": 25, "changed": 32,
                               "deleted": 40}
    scratch = run_mining(_config(index_prefix, opensearch_url, tmp_path / "scratch", "scratch", full=True, **kw),
                         client=os_client)
    assert scratch.kind == "full"
    for field in ("docs_seen", "docs_mined", "docs_skipped", "skipped_by_reason", "tokens_mined", "covered_tokens",
                  "phrases"):
        assert getattr(inc, field) == getattr(scratch, field), field
    got, want = published(os_client, f"{index_prefix}inc"), published(os_client, f"{index_prefix}scratch")
    assert got["phrases"] == want["phrases"]
    assert got["doc_ids"] == want["doc_ids"]
    assert got["run"] == want["run"]
    assert got["report"] == want["report"]
    assert inc.skipped_by_reason == {"missing": 1, "empty": 0, "not_text": 0}


def test_full_run_when_the_source_settings_change(os_client, index_prefix, opensearch_url, tmp_path):
    make_source(os_client, f"{index_prefix}src", list(web_docs(60)), shards=1,
                mappings={"properties": {"updated_at": {"type": "date"}}})
    a = run_mining(_config(index_prefix, opensearch_url, tmp_path, "t"), client=os_client)
    b = run_mining(_config(index_prefix, opensearch_url, tmp_path, "t", site_field="site"), client=os_client)
    assert (a.kind, b.kind) == ("full", "incremental")  # site_field does not change the corpus
    c = run_mining(_config(index_prefix, opensearch_url, tmp_path, "t", timestamp_field="updated_at"),
                   client=os_client)
    assert c.kind == "full"  # another version mode: the snapshot is not comparable


def test_unmapped_timestamp_field_is_a_config_error(os_client, index_prefix, opensearch_url, tmp_path):
    from bloomspan.sidecar.errors import ClusterConfigError

    make_source(os_client, f"{index_prefix}src", list(web_docs(5)), shards=1)
    with pytest.raises(ClusterConfigError) as info:
        run_mining(_config(index_prefix, opensearch_url, tmp_path, "t", timestamp_field="crawled_at"),
                   client=os_client)
    assert info.value.field == "timestamp_field" and f"{index_prefix}src" in str(info.value)
