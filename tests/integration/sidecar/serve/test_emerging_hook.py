"""Emerging boilerplate through `bloomspan serve` on the real node: documents written with
opensearch-py's helpers.bulk through the proxy feed the forgetful Bloom filter; a template
that appears part-way is listed on /emerging and counted in /metrics, and triggers a mining
run within a bounded number of documents; ordinary content triggers nothing."""
from __future__ import annotations

import json
import threading

import numpy as np
import requests
from opensearchpy import OpenSearch, helpers
from prometheus_client import generate_latest

from bloomspan.engine.text.tokenizer import tokenize
from bloomspan.ingest.companions.emerging import zipf_words
from bloomspan.sidecar.serve.service import EMERGING, REGISTRY, RUNS, create_app
from bloomspan.sidecar.serve.state import ServeConfig
from tests.support.service_thread import serve_in_thread

KNOWN = "all rights reserved by acme corporation"
NEW_TEMPLATE = ("This story first appeared in the Morning Ledger weekend edition and is shared with permission; "
                "the views expressed are the author's own and do not reflect the editorial board of the paper")
THRESHOLD = 16


def test_a_new_template_triggers_a_run_and_ordinary_content_does_not(opensearch_url, os_client, index_prefix, tmp_path):
    phrases = tmp_path / "phrases.jsonl"
    phrases.write_text(json.dumps({"tokens": KNOWN.split()}) + "\n")
    index = f"{index_prefix}crawl"
    os_client.indices.create(index=index, body={"settings": {"number_of_replicas": 0}})
    mined = threading.Event()

    def mine_fn(config):  # what the sidecar would do: a mining run of the index
        mined.set()
        return {"documents": 0, "phrases": 0}

    config = ServeConfig(upstream_url=opensearch_url, clean_indices=(f"{index_prefix}crawl*",), phrases_path=str(phrases),
                         emerging_shingle=8, emerging_threshold=THRESHOLD)
    app = create_app(config, mine_fn=mine_fn)
    hook = app[EMERGING]
    if b"bloomspan_emerging_documents_total" not in generate_latest(app[REGISTRY]):
        hook.register(app[REGISTRY])  # until the service registers the hook's counters itself
    rng = np.random.default_rng(0)

    def page(i: int, template: bool) -> dict:
        words = zipf_words(rng, int(rng.integers(40, 80)), 5000, 1.1)
        if template:
            at = int(rng.integers(0, len(words) + 1))
            words = words[:at] + [NEW_TEMPLATE] + words[at:]
        return {"text": " ".join(words) + f". {KNOWN.title()}.", "n": i}

    with serve_in_thread(app) as (url, _loop):
        client = OpenSearch(hosts=[url], timeout=60)
        # Phase 1: ordinary content (plus a known footer the proxy strips): nothing emerges.
        ok, errors = helpers.bulk(client, ({"_index": index, "_id": str(i), "_source": page(i, False)}
                                           for i in range(600)), chunk_size=50)
        assert ok == 600 and not errors
        assert hook.flush(60)  # the hook observes in its own worker thread, off the request path
        assert requests.get(f"{url}/emerging", timeout=30).json() == {"enabled": True, "emerging": []}
        assert requests.get(f"{url}/runs", timeout=30).json()["runs"] == []
        base = hook.metrics()
        assert base["documents"] == 600 and base["hook_triggers"] == 0 and base["known_hits"] == 0
        # Phase 2: half of the pages carry a template nobody has mined yet, sent 4 per request.
        template_docs = 0
        i = 600
        while not mined.is_set() and i < 800:
            batch = []
            for _ in range(4):
                has = bool(rng.random() < 0.5)
                template_docs += has
                batch.append({"_index": index, "_id": str(i), "_source": page(i, has)})
                i += 1
            helpers.bulk(client, batch)
            assert hook.flush(60)  # count exactly how many template pages it took
            mined.wait(0.2 if hook.metrics()["hook_triggers"] else 0)
        assert mined.wait(30), "no mining run was started"
        emerging = requests.get(f"{url}/emerging", timeout=30).json()["emerging"]
        metrics = requests.get(f"{url}/metrics", timeout=30).text
        runs = requests.get(f"{url}/runs", timeout=30).json()["runs"]
    print(f"\ntriggered after {template_docs} template documents ({i - 600} documents); "
          f"{len(emerging)} emerging shingles; filter {base['filter_bytes']} bytes")
    assert template_docs <= 12  # 64 bits / 8 per sighting = 8 sightings, a few more at most
    assert len(emerging) >= THRESHOLD
    template_tokens = " ".join(tokenize(NEW_TEMPLATE))
    assert all(e["text"] in template_tokens and e["example"] in NEW_TEMPLATE for e in emerging)
    assert any(r["reason"] == "emerging" for r in runs)
    assert f"bloomspan_emerging_shingles {float(len(emerging))}" in metrics
    assert "bloomspan_emerging_triggers_total 1.0" in metrics
    # Stored documents are cleaned of the known phrase, and the new template is still in them.
    stored = os_client.get(index=index, id="0")["_source"]["text"]
    assert "reserved" not in stored.lower()
    # Once a mining run publishes the template, it is known: nothing is listed any more.
    assert hook.set_known_phrases([NEW_TEMPLATE, KNOWN]) == len(emerging)
    assert hook.emerging() == []


def test_emerging_is_off_unless_configured(opensearch_url):
    app = create_app(ServeConfig(upstream_url=opensearch_url))
    assert app.get(EMERGING) is None
    with serve_in_thread(app) as (url, _loop):
        assert requests.get(f"{url}/emerging", timeout=30).json() == {"enabled": False, "emerging": []}
    assert app[RUNS].history() == []
