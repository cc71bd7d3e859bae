"""OpenSearch and Elasticsearch side by side, each a real node: the same `bloomspan mine` command
publishes exactly the same phrase set on both, runs roll back and report on Elasticsearch, and
the proxy in front of Elasticsearch cleans `_bulk` writes while the cluster's own per-item
responses (and its product header) reach the client.

The OpenSearch node is the suite's (``OPENSEARCH_URL``); the Elasticsearch node is
``ELASTICSEARCH_URL``, or one started with ``BLOOMSPAN_NODE=elasticsearch
deploy/local/opensearch.sh start`` (Elasticsearch 8.17.0 on port 9210 unless
``BLOOMSPAN_ES_VERSION``/``BLOOMSPAN_NODE_PORT`` say otherwise) and stopped afterwards.
"""
from __future__ import annotations

import json
import os
import subprocess
import urllib.request
import uuid

import pytest
from click.testing import CliRunner

from bench.published_run import published
from bloomspan.sidecar.cli.main import cli
from bloomspan.sidecar.cluster.connection import ClusterConfig
from bloomspan.sidecar.cluster.engine import ELASTICSEARCH, OPENSEARCH, engine_of
from bloomspan.sidecar.errors import ClusterUnavailableError
from bloomspan.sidecar.serve.service import create_app
from bloomspan.sidecar.serve.state import ServeConfig
from tests.conftest import SCRIPT, TEST_PREFIX, _in_ci
from tests.support.cluster_cleanup import remove_test_objects
from tests.support.service_thread import serve_in_thread
from tests.support.sidecar_helpers import make_source, web_docs

FOOTER = "all rights reserved by acme corporation"


@pytest.fixture(scope="module")
def elasticsearch_url():
    url = os.environ.get("ELASTICSEARCH_URL")
    started = False
    env = {**os.environ, "BLOOMSPAN_NODE": "elasticsearch"}
    if not url:
        status = subprocess.run([str(SCRIPT), "status"], capture_output=True, text=True, env=env)
        proc = subprocess.run([str(SCRIPT), "start"], capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            reason = f"BLOOMSPAN_NODE=elasticsearch {SCRIPT.name} start failed:\n{proc.stderr[-3000:]}"
            if _in_ci():
                pytest.fail(reason, pytrace=False)
            pytest.skip(reason)
        url = proc.stdout.strip().splitlines()[-1]
        started = status.returncode != 0
    yield url
    if started and os.environ.get("BLOOMSPAN_KEEP_NODE") != "1":
        subprocess.run([str(SCRIPT), "stop"], capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def es_client(elasticsearch_url):
    try:
        client = ClusterConfig(url=elasticsearch_url, timeout=60).checked_client()
    except ClusterUnavailableError as exc:
        pytest.fail(f"Elasticsearch at {elasticsearch_url} does not answer: {exc}", pytrace=False)
    assert engine_of(client).product == ELASTICSEARCH, f"{elasticsearch_url} is {engine_of(client).name}"
    return client


@pytest.fixture
def es_prefix(es_client):
    """A unique prefix for every index and template the test creates on Elasticsearch; removed after."""
    prefix = f"{TEST_PREFIX}{uuid.uuid4().hex[:10]}-"
    yield prefix
    remove_test_objects(es_client, prefix)


def _bloomspan(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _mine(url: str, prefix: str, work_dir, *extra: str) -> str:
    return _bloomspan("mine", "--url", url, "--index", f"{prefix}crawl", "--field", "text", "--sigma", "20",
                      "--min-length", "10", "--template-index", f"{prefix}tpl", "--lease-index", f"{prefix}lease",
                      "--work-dir", str(work_dir), "--progress", "none", *extra)


def test_mine_publishes_the_same_phrase_set_on_opensearch_and_elasticsearch(
        opensearch_url, os_client, index_prefix, elasticsearch_url, es_client, tmp_path):
    if engine_of(os_client).product != OPENSEARCH:
        pytest.skip(f"the reference node {opensearch_url} is {engine_of(os_client).name}, not OpenSearch")
    docs = web_docs(400)
    # One index name on both nodes, so the run documents name the same source.
    make_source(os_client, f"{index_prefix}crawl", docs, shards=2)
    make_source(es_client, f"{index_prefix}crawl", docs, shards=2)
    try:
        _mine(opensearch_url, index_prefix, tmp_path / "os")
        _mine(elasticsearch_url, index_prefix, tmp_path / "es")
        on_os = published(os_client, f"{index_prefix}tpl")
        on_es = published(es_client, f"{index_prefix}tpl")
    finally:
        es_client.indices.delete(index=f"{index_prefix}*", ignore_unavailable=True, expand_wildcards="all")
    assert len(on_os["phrases"]) >= 5
    assert on_es["phrases"] == on_os["phrases"]  # text, tokens, df, occurrences, psi, doc bitmaps
    assert on_es["doc_ids"] == on_os["doc_ids"]
    assert on_es["run"] == on_os["run"]
    assert on_es["report"] == on_os["report"]


def test_runs_roll_back_and_report_on_elasticsearch(elasticsearch_url, es_client, es_prefix, tmp_path):
    make_source(es_client, f"{es_prefix}crawl", web_docs(300), shards=3)
    _mine(elasticsearch_url, es_prefix, tmp_path / "w")
    first = published(es_client, f"{es_prefix}tpl")
    _mine(elasticsearch_url, es_prefix, tmp_path / "w", "--sigma", "10", "--full")
    assert len(published(es_client, f"{es_prefix}tpl")["phrases"]) > len(first["phrases"])
    runs = _bloomspan("runs", "--url", elasticsearch_url, "--template-index", f"{es_prefix}tpl")
    assert runs.count(" complete ") == 2
    _bloomspan("rollback", "--url", elasticsearch_url, "--template-index", f"{es_prefix}tpl")
    assert published(es_client, f"{es_prefix}tpl")["phrases"] == first["phrases"]
    report = _bloomspan("report", "--url", elasticsearch_url, "--template-index", f"{es_prefix}tpl")
    assert f"{len(first['phrases'])} phrases" in report or str(len(first["phrases"])) in report
    html = tmp_path / "report.html"
    _bloomspan("report", "--url", elasticsearch_url, "--template-index", f"{es_prefix}tpl", "--html", str(html))
    assert html.stat().st_size > 10_000


def _bulk(url: str, lines: list[dict]) -> tuple[int, dict, dict]:
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    request = urllib.request.Request(f"{url}/_bulk?refresh=true", data=body, method="POST",
                                     headers={"Content-Type": "application/x-ndjson"})
    try:
        with urllib.request.urlopen(request, timeout=60) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, json.loads(exc.read())


def _items(index: str, tag: str) -> list[dict]:
    text = "Kettle {n} boils fast. All rights reserved by ACME Corporation."
    return [{"index": {"_index": index, "_id": f"{tag}-ok"}}, {"text": text.format(n=1), "n": 1},
            {"create": {"_index": index, "_id": f"{tag}-ok"}}, {"text": text.format(n=2), "n": 2},  # 409
            {"index": {"_index": index, "_id": f"{tag}-bad"}}, {"text": text.format(n=3), "n": "three"},  # 400
            {"delete": {"_index": index, "_id": f"{tag}-missing"}},  # 404
            {"update": {"_index": index, "_id": f"{tag}-ok"}}, {"doc": {"n": 5}}]


def _shape(response: dict) -> list[tuple]:
    """Per item: action, status, error type, result (what must not differ through the proxy)."""
    out = []
    for item in response["items"]:
        (action, body), = item.items()
        out.append((action, body["status"], (body.get("error") or {}).get("type"), body.get("result")))
    return out


def test_proxy_cleans_bulk_writes_to_elasticsearch_with_its_own_item_responses(
        elasticsearch_url, es_client, es_prefix, tmp_path):
    index = f"{es_prefix}crawl"
    es_client.indices.create(index=index, body={"settings": {"number_of_replicas": 0},
                                                "mappings": {"properties": {"n": {"type": "integer"}}}})
    phrases = tmp_path / "phrases.jsonl"
    phrases.write_text(json.dumps({"text": FOOTER, "tokens": FOOTER.split(), "length": 6, "df": 50}) + "\n")
    direct_status, direct_headers, direct = _bulk(elasticsearch_url, _items(index, "direct"))
    config = ServeConfig(upstream_url=elasticsearch_url, clean_indices=(f"{es_prefix}crawl*",),
                         phrases_path=str(phrases))
    with serve_in_thread(create_app(config)) as (proxy_url, _loop):
        status, headers, proxied = _bulk(proxy_url, _items(index, "proxied"))
        with urllib.request.urlopen(f"{proxy_url}/_nodes/_local", timeout=60) as resp:  # pass-through
            nodes = json.loads(resp.read())
            nodes_product = resp.headers.get("X-Elastic-Product")
    assert status == direct_status == 200 and proxied["errors"] is direct["errors"] is True
    assert _shape(proxied) == _shape(direct) == [("index", 201, None, "created"), ("create", 409,
        "version_conflict_engine_exception", None), ("index", 400, "document_parsing_exception"
        if engine_of(es_client).version >= (8, 0, 0) else "mapper_parsing_exception", None),
        ("delete", 404, None, "not_found"), ("update", 200, None, "updated")]
    # Elasticsearch's clients refuse an answer without its product header: it passes through.
    assert headers.get("x-elastic-product") == direct_headers.get("x-elastic-product") == "Elasticsearch"
    assert nodes_product == "Elasticsearch" and nodes["nodes"]
    cleaned = es_client.get(index=index, id="proxied-ok")["_source"]
    assert cleaned["text"] == "Kettle 1 boils fast." and cleaned["n"] == 5
    assert 0 < cleaned["bloomspan"]["boilerplate_ratio"] < 1
    assert es_client.get(index=index, id="direct-ok")["_source"]["text"].endswith("ACME Corporation.")


def test_pipeline_names_the_ingest_processors_an_elasticsearch_node_lacks(elasticsearch_url, es_client, es_prefix,
                                                                          tmp_path):
    phrases = tmp_path / "phrases.jsonl"
    phrases.write_text(json.dumps({"text": FOOTER, "tokens": FOOTER.split(), "length": 6, "df": 50}) + "\n")
    result = CliRunner().invoke(cli, ["pipeline", "--url", elasticsearch_url, "--phrases", str(phrases),
                                       "--pipeline-id", f"{es_prefix}pipe"])
    engine = engine_of(es_client)
    if engine.missing_processors(["gsub", "script"]):  # the integ-test zip: no ingest-common, no lang-painless
        assert result.exit_code == 1
        assert result.output.startswith(f"Error: --url {elasticsearch_url}: {engine.name} lacks the ingest "
                                        "processor(s) ")
        assert "gsub" in result.output and len(result.output.strip().splitlines()) == 1
        assert es_client.ingest.get_pipeline(id=f"{es_prefix}pipe", ignore=[404]).get(f"{es_prefix}pipe") is None
    else:
        assert result.exit_code == 0, result.output
        es_client.ingest.delete_pipeline(id=f"{es_prefix}pipe")
