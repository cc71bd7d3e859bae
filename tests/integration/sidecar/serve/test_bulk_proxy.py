"""The bulk proxy against the real node: crawlers using opensearch-py's helpers.bulk through
`bloomspan serve` get cleaned documents, the cluster's per-item errors unchanged, and a new
template run picked up mid-traffic without a failed request."""
from __future__ import annotations

import json
import threading
import time

import pytest
from opensearchpy import OpenSearch, helpers

from bloomspan.ingest.records.phrase_set import PhraseSet
from bloomspan.sidecar.serve import bulk_proxy, emerging_hook, proxy_access, service
from bloomspan.sidecar.serve.service import create_app
from bloomspan.sidecar.serve.state import CleanerHolder, ServeConfig
from tests.support.service_thread import serve_in_thread

FOOTER = "all rights reserved by acme corporation"
COOKIE = "we use cookies to improve your experience"


@pytest.fixture
def phrases_file(tmp_path):
    path = tmp_path / "phrases.jsonl"
    path.write_text("".join(json.dumps({"text": p, "tokens": p.split(), "length": len(p.split()), "df": 50}) + "\n"
                            for p in (FOOTER, COOKIE)))
    return str(path)


def test_bulk_through_proxy_lands_cleaned_and_errors_pass_verbatim(opensearch_url, os_client, index_prefix, phrases_file):
    index = f"{index_prefix}crawl"
    os_client.indices.create(index=index, body={"mappings": {"properties": {"n": {"type": "integer"}}}})
    config = ServeConfig(upstream_url=opensearch_url, clean_indices=(f"{index_prefix}crawl*",), phrases_path=phrases_file)
    app = create_app(config)
    with serve_in_thread(app) as (url, _loop):
        client = OpenSearch(hosts=[url], timeout=60)
        # pass-through of a read (GET / answers 405 on Elasticsearch 8's integ-test zip)
        assert client.transport.perform_request("GET", "/_nodes/_local")["nodes"]
        actions = [{"_index": index, "_id": str(i), "_source": {
            "text": f"Product {i} is great. We use cookies to improve your experience. All rights reserved by ACME Corporation.",
            "n": i}} for i in range(200)]
        ok, errors = helpers.bulk(client, actions, refresh=True, chunk_size=50)
        assert ok == 200 and not errors
        # A document the cluster rejects: its per-item error reaches the client as the cluster wrote it.
        bad = [{"_index": index, "_id": "bad", "_source": {"text": "x", "n": "not a number"}}]
        ok, errors = helpers.bulk(client, bad, raise_on_error=False)
        # (OpenSearch and Elasticsearch 7 name it mapper_parsing_exception, Elasticsearch 8
        # document_parsing_exception)
        assert ok == 0 and errors[0]["index"]["error"]["type"] in ("mapper_parsing_exception",
                                                                   "document_parsing_exception")
        client.index(index=index, id="single", body={"text": "Hello. All rights reserved by Acme Corporation", "n": 1},
                     refresh=True)
        metrics = client.transport.perform_request("GET", "/metrics")
    doc = os_client.get(index=index, id="7")["_source"]
    assert doc["text"] == "Product 7 is great."
    assert doc["n"] == 7 and 0 < doc["bloomspan"]["boilerplate_ratio"] < 1
    assert os_client.get(index=index, id="single")["_source"]["text"] == "Hello."
    assert os_client.count(index=index)["count"] == 201
    assert "bloomspan_proxy_documents_total" in str(metrics)


def test_template_published_mid_traffic_is_picked_up_without_failures(opensearch_url, os_client, index_prefix):
    """Hot reload: the holder swaps cleaners while bulk requests are in flight."""
    index = f"{index_prefix}crawl"
    os_client.indices.create(index=index)
    config = ServeConfig(upstream_url=opensearch_url, clean_indices=(f"{index_prefix}crawl*",),
                         phrases_path="unused-in-this-test.jsonl")
    holder = CleanerHolder(config)
    holder.install(PhraseSet.from_records([{"tokens": FOOTER.split()}]), run_id="run-1")
    holder.refresh = lambda: False  # this test swaps runs itself, mid-traffic
    app = create_app(config, holder=holder)
    failures: list = []
    with serve_in_thread(app) as (url, _loop):
        client = OpenSearch(hosts=[url], timeout=60)

        def traffic():
            for batch in range(20):
                actions = [{"_index": index, "_id": f"{batch}-{i}", "_source": {
                    "text": f"Item {batch} {i}. {COOKIE}. {FOOTER}."}} for i in range(25)]
                ok, errors = helpers.bulk(client, actions, raise_on_error=False)
                failures.extend(errors)
                time.sleep(0.02)

        t = threading.Thread(target=traffic)
        t.start()
        time.sleep(0.15)
        holder.install(PhraseSet.from_records([{"tokens": FOOTER.split()}, {"tokens": COOKIE.split()}]), run_id="run-2")
        t.join(120)
    assert not failures
    os_client.indices.refresh(index=index)
    assert os_client.count(index=index)["count"] == 500
    last = os_client.get(index=index, id="19-24")["_source"]["text"]
    assert last == "Item 19 24."
    first = os_client.get(index=index, id="0-0")["_source"]["text"]
    assert "acme" not in first.lower()


def _metric(text: str, name: str, label: str) -> float:
    line = next((x for x in text.splitlines() if x.startswith(name + "{") and label in x), None)
    return float(line.split()[-1]) if line else 0.0


TWO_MODE_PAGE = "Product {} is great. All rights reserved by ACME Corporation."


def _two_mode_indices(os_client, index_prefix: str) -> tuple[str, str]:
    """A strip index and a mark index, created on the node."""
    strip_index, mark_index = f"{index_prefix}crawl-s", f"{index_prefix}crawl-m"
    for index in (strip_index, mark_index):
        os_client.indices.create(index=index)
    return strip_index, mark_index


def _two_mode_body(strip_index: str, mark_index: str) -> str:
    """Six pages alternating between the two indices, then one item whose ``_index`` is a number."""
    lines = []
    for i in range(6):
        lines.append({"index": {"_index": strip_index if i % 2 else mark_index, "_id": str(i)}})
        lines.append({"text": TWO_MODE_PAGE.format(i)})
    lines += [{"index": {"_index": 5, "_id": "bad"}}, {"text": "x"}]  # counted once as non_string_index
    return "".join(json.dumps(x) + "\n" for x in lines)


def test_one_body_with_two_modes_is_rewritten_once_and_counted_once(opensearch_url, os_client, index_prefix):
    """Items for a strip index and a mark index in one request: each gets its own mode's cleaner
    in one pass, and every item is counted exactly once (before, the body was rewritten once per
    mode and the double counts patched afterwards)."""
    strip_index, mark_index = _two_mode_indices(os_client, index_prefix)
    config = ServeConfig(upstream_url=opensearch_url, clean_indices=(f"{index_prefix}crawl-s*", f"{index_prefix}crawl-m*"),
                         phrases_path="unused-in-this-test.jsonl")
    holder = CleanerHolder(config)
    phrases = PhraseSet.from_records([{"tokens": FOOTER.split()}])
    holder._swap({"strip": holder._build(phrases, mode="strip"), "mark": holder._build(phrases, mode="mark")},
                 {f"{index_prefix}crawl-m*": "mark"}, phrases, "run-two-modes")
    holder.refresh = lambda: False
    app = create_app(config, holder=holder)
    body = _two_mode_body(strip_index, mark_index)
    with serve_in_thread(app) as (url, _loop):
        client = OpenSearch(hosts=[url], timeout=60)
        answer = client.bulk(body=body, refresh=True)
        metrics = client.transport.perform_request("GET", "/metrics")
    assert [next(iter(item.values()))["status"] for item in answer["items"]][:6] == [201] * 6
    for i in range(6):
        doc = os_client.get(index=strip_index if i % 2 else mark_index, id=str(i))["_source"]
        if i % 2:
            assert doc["text"] == f"Product {i} is great."
        else:
            assert doc["text"] == TWO_MODE_PAGE.format(i) and doc["bloomspan"]["boilerplate_ratio"] > 0
    assert _metric(metrics, "bloomspan_proxy_documents_total", 'outcome="cleaned"') == 6
    assert _metric(metrics, "bloomspan_proxy_documents_total", 'outcome="passed_through"') == 1
    assert _metric(metrics, "bloomspan_proxy_documents_uncleaned_total", 'reason="non_string_index"') == 1


def _counting(monkeypatch, owner, name: str) -> list:
    """Wrap ``owner.name`` so that every call is recorded (the call still runs); the list of calls."""
    calls: list = []
    real = getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_a_two_mode_body_is_read_once_by_every_reader(opensearch_url, os_client, index_prefix, monkeypatch):
    """One reading of the body serves the access rules, the target choice, both modes' rewrite
    and the emerging hook: the action lines are parsed once, each cleaned source once, each
    mode's documents are cleaned in one batch, the hook reads no source again, and every item
    is counted once."""
    strip_index, mark_index = _two_mode_indices(os_client, index_prefix)
    config = ServeConfig(upstream_url=opensearch_url, clean_indices=(f"{index_prefix}crawl-s*", f"{index_prefix}crawl-m*"),
                         phrases_path="unused-in-this-test.jsonl", emerging_shingle=8, emerging_threshold=1000)
    holder = CleanerHolder(config)
    phrases = PhraseSet.from_records([{"tokens": FOOTER.split()}])
    cleaners = {mode: holder._build(phrases, mode=mode) for mode in ("strip", "mark")}
    batches = {mode: _counting(monkeypatch, cleaner, "clean_batch") for mode, cleaner in cleaners.items()}
    holder._swap(cleaners, {f"{index_prefix}crawl-m*": "mark"}, phrases, "run-two-modes")
    holder.refresh = lambda: False
    app = create_app(config, holder=holder)
    action_reads = _counting(monkeypatch, service, "parse_bulk")
    other_action_reads = [_counting(monkeypatch, module, "parse_bulk") for module in (proxy_access, emerging_hook)]
    source_reads = _counting(monkeypatch, bulk_proxy, "_parse_source")
    hook_source_reads = _counting(monkeypatch, emerging_hook.EmergingHook, "_source")
    body = _two_mode_body(strip_index, mark_index)
    with serve_in_thread(app) as (url, _loop):
        client = OpenSearch(hosts=[url], timeout=60)
        answer = client.bulk(body=body, refresh=True)
        assert app[service.EMERGING].flush(60)
        metrics = client.transport.perform_request("GET", "/metrics")
    assert [next(iter(item.values()))["status"] for item in answer["items"]][:6] == [201] * 6
    assert len(action_reads) == 1 and other_action_reads == [[], []]
    assert len(source_reads) == 6 and hook_source_reads == []
    assert [len(batches["strip"]), len(batches["mark"])] == [1, 1]
    assert [len(batches["strip"][0][0]), len(batches["mark"][0][0])] == [3, 3]
    assert app[service.EMERGING].metrics()["hook_documents_observed"] == 6
    assert _metric(metrics, "bloomspan_proxy_documents_total", 'outcome="cleaned"') == 6
    assert _metric(metrics, "bloomspan_proxy_documents_total", 'outcome="passed_through"') == 1
    assert _metric(metrics, "bloomspan_proxy_documents_uncleaned_total", 'reason="non_string_index"') == 1
