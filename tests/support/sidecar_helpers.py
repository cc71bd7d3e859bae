"""Shared helpers of the sidecar's cluster tests: small generated crawls and an alias reader
that checks it only ever sees complete sets (reading back what a run published, to compare
two runs, is :mod:`bench.published_run`, which the benches share)."""
from __future__ import annotations

import functools
import threading
import time

from opensearchpy import helpers

# Tests that compare two runs use the exact suffix-array engine: the sidecar must publish
# identical output for identical corpora, and the oracle keeps a comparison failure about
# the sidecar (BloomSpan's exactness is the engine suite's job).
ENGINE = "fhk"


CRAWL_DOCS = 400


@functools.lru_cache(maxsize=1)
def _crawl() -> tuple:
    from bloomspan.corpora.web import generate_web

    return tuple({"id": d["id"], "text": d["text"], "site": d["site"]}
                 for d in generate_web(CRAWL_DOCS, seed=3, n_sites=10))


def web_docs(n: int) -> tuple:
    """The first ``n`` (<= 400) pages of one generated crawl (id, text, site), made once per session."""
    assert n <= CRAWL_DOCS
    return _crawl()[:n]


def make_source(client, index: str, docs, shards: int = 2, mappings: dict | None = None) -> None:
    """Create ``index`` and bulk-index ``docs`` (dicts with ``id``), refreshed."""
    body = {"settings": {"number_of_shards": shards, "number_of_replicas": 0}}
    if mappings:
        body["mappings"] = mappings
    client.indices.create(index=index, body=body)
    ok, errors = helpers.bulk(client, ({"_index": index, "_id": d["id"],
                                        "_source": {k: v for k, v in d.items() if k != "id"}} for d in docs),
                              refresh=True)
    assert ok == len(docs) and not errors


def crawler_changes(client, src, docs, ts: bool):
    """Adds (copies of template-heavy pages), updates (new text, text removed, text added
    to a page that had none), deletes; one bulk, refreshed."""
    actions = []
    stamp = {"updated_at": "2030-01-01T00:00:00Z"} if ts else {}
    for k, d in enumerate(docs[:25]):  # 25 new pages, reusing the template text of old ones
        actions.append({"_index": src, "_id": f"new-{k:03d}", "_source": {"text": d["text"] + f" extra {k}",
                                                                          "site": d["site"], **stamp}})
    for d in docs[100:130]:  # 30 updates: body rewritten
        actions.append({"_index": src, "_id": d["id"], "_source": {"text": d["text"][: len(d["text"]) // 2],
                                                                   "site": d["site"], **stamp}})
    actions.append({"_index": src, "_id": docs[131]["id"], "_source": {"site": "x", **stamp}})  # text removed
    actions.append({"_index": src, "_id": "was-empty", "_source": {"text": docs[5]["text"], **stamp}})  # gains text
    for d in docs[200:240]:  # 40 deletes
        actions.append({"_op_type": "delete", "_index": src, "_id": d["id"]})
    ok, errors = helpers.bulk(client, actions, refresh=True)
    assert not errors


def template_records(client, alias: str) -> dict:
    """The detector's records a run published behind ``alias`` (by id, without the run id)."""
    out = {}
    for hit in helpers.scan(client, index=alias, query={"query": {"match_all": {}}}):
        src = dict(hit["_source"])
        src.pop("run_id", None)
        if src["kind"] not in ("phrase", "docmap", "run", "coverage"):
            out[hit["_id"]] = src
    return out


class AliasReader(threading.Thread):
    """Polls ``alias`` with ONE search per look (so one alias resolution) and records any
    view that is not a complete run: several run ids, no run document, or a phrase count
    different from the run document's."""

    def __init__(self, client, alias: str, period: float = 0.02):
        super().__init__(daemon=True)
        self.client, self.alias, self.period = client, alias, period
        self.stop = threading.Event()
        self.looks = 0
        self.complete_views = 0
        self.runs_seen: set[str] = set()
        self.violations: list = []

    def run(self) -> None:
        body = {"size": 0, "aggs": {
            "runs": {"terms": {"field": "run_id", "size": 10}},
            "phrases": {"filter": {"term": {"kind": "phrase"}}},
            "run": {"filter": {"term": {"kind": "run"}},
                    "aggs": {"doc": {"top_hits": {"size": 1, "_source": ["phrases", "run_id"]}}}}}}
        while not self.stop.is_set():
            resp = self.client.search(index=self.alias, body=body, ignore=[404])
            if resp.get("status") != 404 and "aggregations" in resp:
                self.looks += 1
                aggs = resp["aggregations"]
                runs = [b["key"] for b in aggs["runs"]["buckets"]]
                hits = aggs["run"]["doc"]["hits"]["hits"]
                if len(runs) != 1 or len(hits) != 1 or hits[0]["_source"]["phrases"] != aggs["phrases"]["doc_count"]:
                    self.violations.append({"runs": runs, "run_docs": len(hits),
                                            "phrases": aggs["phrases"]["doc_count"]})
                else:
                    self.complete_views += 1
                    self.runs_seen.add(runs[0])
            time.sleep(self.period)

    def __enter__(self) -> AliasReader:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.join(timeout=10)


class IndicesCallRaises:
    """The real client, except that ``indices.<method>`` raises RuntimeError("driver died")
    when ``when(**kwargs)`` is true (default: always): a driver killed at that call."""

    def __init__(self, client, method: str, when=lambda **kw: True):
        self._c = client
        self.indices = _RaisingIndices(client.indices, method, when)

    def __getattr__(self, name):
        return getattr(self._c, name)


class _RaisingIndices:
    def __init__(self, indices, method: str, when):
        self._i, self._method, self._when = indices, method, when

    def __getattr__(self, name):
        real = getattr(self._i, name)
        if name != self._method:
            return real

        def call(*a, **kw):
            if self._when(**kw):
                raise RuntimeError("driver died")
            return real(*a, **kw)

        return call
