"""`bloomspan serve` end to end on the real node: health, a mining run triggered over HTTP that
publishes the template index, the run history, metrics, and the proxy picking up the new
template by itself (hot reload) to clean later writes."""
from __future__ import annotations

import json
import time
import urllib.request

from opensearchpy import OpenSearch, helpers

from bloomspan.corpora import generate_web
from bloomspan.sidecar.serve.service import create_app
from bloomspan.sidecar.serve.state import ServeConfig
from tests.support.service_thread import serve_in_thread


def _get(url: str) -> tuple[int, dict | str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            body = resp.read().decode()
            status = resp.status
    except urllib.error.HTTPError as exc:
        body, status = exc.read().decode(), exc.code
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body


def _post(url: str) -> tuple[int, dict]:
    req = urllib.request.Request(url, method="POST", data=b"")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_serve_mines_on_demand_publishes_and_hot_reloads(opensearch_url, os_client, index_prefix, tmp_path):
    source = f"{index_prefix}crawl"
    docs = list(generate_web(300, seed=5))
    helpers.bulk(os_client, ({"_index": source, "_id": d["id"], "_source": {"text": d["text"], "site": d["site"]}}
                             for d in docs), refresh=True)
    config = ServeConfig(upstream_url=opensearch_url, template_index=f"{index_prefix}tpl", mine_index=source,
                         sigma=10, min_length=8, work_dir=str(tmp_path / "work"), lease_index=f"{index_prefix}lease",
                         clean_indices=(f"{index_prefix}new*",), reload_seconds=0.3)
    with serve_in_thread(create_app(config)) as (url, _loop):
        assert _get(url + "/healthz") == (200, {"status": "ok"})
        status, ready = _get(url + "/readyz")
        assert status == 200 and ready["template_run"] is None
        status, body = _post(url + "/runs")
        assert status == 202 and body["accepted"]
        assert _post(url + "/runs")[0] == 409  # one run at a time
        deadline = time.time() + 240
        while time.time() < deadline:
            runs = _get(url + "/runs")[1]
            if runs["runs"][0]["status"] != "running":
                break
            time.sleep(0.5)
        assert runs["runs"][0]["status"] == "succeeded", runs
        assert runs["published"] and runs["published"][0]["current"]
        summary = runs["runs"][0]["summary"]
        assert summary["docs_mined"] == 300 and summary["phrases"] > 0
        # The watcher notices the alias moved and installs a cleaner from it.
        while time.time() < deadline and _get(url + "/readyz")[1]["template_run"] is None:
            time.sleep(0.2)
        ready = _get(url + "/readyz")[1]
        assert ready["template_run"].startswith(f"{index_prefix}tpl-") and ready["phrases"] == summary["phrases"]
        metrics = _get(url + "/metrics")[1]
        assert 'bloomspan_mining_runs_total{status="succeeded"} 1.0' in metrics
        assert "bloomspan_last_run_phrases" in metrics
        # New pages through the proxy land without the site's template text.
        client = OpenSearch(hosts=[url], timeout=60)
        page = docs[0]
        helpers.bulk(client, [{"_index": f"{index_prefix}new", "_id": "p", "_source": {"text": page["text"]}}], refresh=True)
    stored = os_client.get(index=f"{index_prefix}new", id="p")["_source"]
    assert len(stored["text"]) < len(page["text"]) and stored["bloomspan"]["boilerplate_ratio"] > 0
