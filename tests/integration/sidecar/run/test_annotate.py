"""--annotate: ratios and spans on the source documents, rank_feature down-weighting, optimistic
concurrency against crawler writes, and no false "changed" documents afterwards."""
from __future__ import annotations

from opensearchpy import helpers

from bench.published_run import published
from bloomspan.engine.text.tokenizer import tokenize
from bloomspan.sidecar.publish.document_annotation import MIN_RATIO
from bloomspan.sidecar.report.operator_report import explain
from bloomspan.sidecar.run.mining_run import MineConfig, run_mining
from tests.support.sidecar_helpers import ENGINE, make_source, web_docs


def _config(prefix, url, work, **kw):
    return MineConfig.from_flags(index=f"{prefix}src", url=url, sigma=5, min_length=5, engine=ENGINE,
                      template_index=f"{prefix}tpl", work_dir=str(work), lease_index=f"{prefix}lease",
                      annotate=True, bulk_docs=50, **kw)


def test_annotations_match_the_published_phrases(os_client, index_prefix, opensearch_url, tmp_path, cluster_engine):
    docs = list(web_docs(200))
    src = f"{index_prefix}src"
    make_source(os_client, src, docs + [{"id": "no-text", "site": "x"}], shards=2)
    summary = run_mining(_config(index_prefix, opensearch_url, tmp_path), client=os_client)
    assert summary.annotate == {"updated": 200, "noop": 0, "failed_by_reason": {}}
    phrases = [p["tokens"] for p in published(os_client, f"{index_prefix}tpl")["phrases"].values()]
    got = {h["_id"]: h["_source"] for h in helpers.scan(os_client, index=src, query={"query": {"match_all": {}}})}
    assert "bloomspan" not in got["no-text"]
    ratios = []
    for d in docs:
        b = got[d["id"]]["bloomspan"]
        toks = tokenize(d["text"])
        covered = [False] * len(toks)
        for p in phrases:
            for i in range(len(toks) - len(p) + 1):
                if toks[i:i + len(p)] == p:
                    covered[i:i + len(p)] = [True] * len(p)
        ratio = sum(covered) / len(toks)
        assert abs(b["boilerplate_ratio"] - max(ratio, MIN_RATIO)) < 1e-9, d["id"]
        assert b["run_id"] == summary.run_id
        assert sum(len(tokenize(d["text"][s:e])) for s, e in b["spans"]) == sum(covered)
        ratios.append((b["boilerplate_ratio"], d["id"]))
        if d["id"] == docs[7]["id"]:
            exp = explain(os_client, f"{index_prefix}tpl", d["id"])
            assert exp["spans"] == b["spans"] and abs(exp["covered_share"] - ratio) < 1e-9
    # rank_feature with positive_score_impact=false: the least cluttered page ranks first
    # (a node without mapper-extras, Elasticsearch 8's integ-test zip, has no rank_feature)
    if cluster_engine.has_rank_feature:
        res = os_client.search(index=src, body={"size": 200, "query": {"bool": {
            "filter": {"exists": {"field": "text"}},
            "should": {"rank_feature": {"field": "bloomspan.boilerplate_ratio", "saturation": {"pivot": 0.1}}}}}})
        ranked = [got[h["_id"]]["bloomspan"]["boilerplate_ratio"] for h in res["hits"]["hits"]]
        # score falls as the ratio rises (a fixed pivot: the default one is estimated per shard,
        # so scores of two shards are not comparable); Lucene keeps 9 significant bits of a
        # feature, so ratios closer than ~0.4% may swap
        assert len(ranked) == 200 and all(a <= b * 1.004 for a, b in zip(ranked, ranked[1:]))
        assert ranked[0] == min(ratios)[0] and ranked[-1] >= max(ratios)[0] / 1.004

    # our own writes are recorded: the next run reuses every document
    again = run_mining(_config(index_prefix, opensearch_url, tmp_path), client=os_client)
    assert again.kind == "incremental" and again.incremental["changed"] == 0
    assert again.incremental["reused"] == 201


def test_document_changed_after_reading_is_not_annotated(os_client, index_prefix, opensearch_url, tmp_path):
    docs = list(web_docs(60))
    src = f"{index_prefix}src"
    make_source(os_client, src, docs, shards=1)
    victim = docs[3]["id"]

    class CrawlerRace:
        """The real client; right before the first annotation bulk, the crawler rewrites a page."""

        def __init__(self, client):
            self._c, self.raced = client, False

        def __getattr__(self, name):
            return getattr(self._c, name)

        def bulk(self, *a, **kw):
            if not self.raced and b'"update"' in (kw.get("body") if isinstance(kw.get("body"), bytes)
                                                 else str(kw.get("body")).encode()):
                self.raced = True
                self._c.index(index=src, id=victim, body={"text": "rewritten by the crawler"})
            return self._c.bulk(*a, **kw)

    client = CrawlerRace(os_client)
    summary = run_mining(_config(index_prefix, opensearch_url, tmp_path), client=client)
    assert client.raced and summary.annotate["failed_by_reason"] == {"conflict": 1}
    assert "bloomspan" not in os_client.get(index=src, id=victim)["_source"]
    nxt = run_mining(_config(index_prefix, opensearch_url, tmp_path), client=os_client)
    assert nxt.incremental["changed"] == 1  # the rewritten page is read again
    assert os_client.get(index=src, id=victim)["_source"]["bloomspan"]["run_id"] == nxt.run_id
