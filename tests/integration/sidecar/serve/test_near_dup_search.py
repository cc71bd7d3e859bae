"""Near-duplicate collapse of search results on the real node, over a generated crawl with
planted near-duplicates (truth.near_duplicate_of): precision/recall of the collapsed pairs,
fingerprints of boilerplate-stripped text against raw text, the library function and the
HTTP route of `bloomspan serve`."""
from __future__ import annotations

import base64
import itertools
import json
import random
from collections import defaultdict

import pytest
import requests
from opensearchpy import helpers

from bloomspan.corpora import generate_web, write_jsonl
from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.sketches.chunk_fingerprint import fingerprint_b64
from bloomspan.engine.text.tokenizer import tokenize
from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
from bloomspan.ingest.companions.near_duplicates import pairs_from_groups, precision_recall
from bloomspan.ingest.records.phrase_set import PhraseSet
from bloomspan.mappings import load
from bloomspan.sidecar.run.jsonl_mining import mine_jsonl
from bloomspan.sidecar.serve.near_dup_search import add_search_routes, client_for_request, search_collapsed
from bloomspan.sidecar.serve.service import create_app
from bloomspan.sidecar.serve.state import ServeConfig
from tests.support.service_thread import serve_in_thread

N_DOCS, SEED, THRESHOLD = 2000, 11, 0.4


def truth_pairs(docs) -> set[frozenset]:
    """Every pair inside a planted group (an original and its near-duplicates)."""
    groups = defaultdict(list)
    for d in docs:
        groups[d["truth"]["near_duplicate_of"] or d["id"]].append(d["id"])
    return {frozenset(p) for g in groups.values() for p in itertools.combinations(g, 2)}


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """The crawl and, per document, the source to index: raw and stripped fingerprints."""
    tmp = tmp_path_factory.mktemp("crawl")
    docs = list(generate_web(N_DOCS, SEED))
    write_jsonl(iter(docs), str(tmp / "crawl.jsonl"))
    mine_jsonl(str(tmp / "crawl.jsonl"), "text", MiningConfig(sigma=20, min_length=10, engine="fhk"), str(tmp / "mined"))
    phrases = PhraseSet.from_jsonl(tmp / "mined" / "phrases.jsonl")
    cleaner = Cleaner(phrases, CleanerConfig(fields=("text",), mode="mark", fingerprint=True, id_field="id"))
    sources = []
    for d, res in zip(docs, cleaner.clean_batch(docs)):
        assert res.ok
        sources.append({"text": d["text"], "site": d["site"], "page_type": d["page_type"],
                        "dup_of": d["truth"]["near_duplicate_of"], "fp_raw": fingerprint_b64(d["text"]),
                        "bloomspan": {"fingerprint": res.doc["bloomspan"]["fingerprint"]}})
    return docs, sources


@pytest.fixture
def crawl(os_client, index_prefix, prepared):
    docs, sources = prepared
    index = f"{index_prefix}crawl"
    mappings = load("documents")["template"]["mappings"]
    mappings["properties"].update({"text": {"type": "text"}, "site": {"type": "keyword"},
                                   "fp_raw": {"type": "binary"}, "dup_of": {"type": "keyword"}})
    os_client.indices.create(index=index, body={"settings": {"number_of_shards": 1, "number_of_replicas": 0},
                                                "mappings": mappings})
    ok, errors = helpers.bulk(os_client, ({"_index": index, "_id": d["id"], "_source": s} for d, s in zip(docs, sources)),
                              refresh=True, chunk_size=250)
    assert ok == N_DOCS and not errors
    return index, docs


def queries(docs, n_background=20) -> list[dict]:
    """A query from 10 content words of every planted original, and background queries."""
    rng = random.Random(3)
    by_id = {d["id"]: d for d in docs}
    roots = sorted({d["truth"]["near_duplicate_of"] for d in docs if d["truth"]["near_duplicate_of"]})
    picks = [by_id[r] for r in roots] + rng.sample([d for d in docs if d["page_type"] == "article"], n_background)
    out = []
    for d in picks:
        toks = tokenize(d["text"])
        out.append({"query": {"match": {"text": " ".join(rng.sample(toks, min(10, len(toks))))}}})
    return out


def evaluate(client, index, docs, fingerprint_field):
    truth = truth_pairs(docs)
    site = {d["id"]: d["site"] for d in docs}
    predicted, relevant, collapse_ms = set(), set(), []
    for body in queries(docs):
        res = search_collapsed(client, index, body, k=80, threshold=THRESHOLD, fingerprint_field=fingerprint_field)
        groups = [[h["_id"]] + [m["_id"] for m in h["collapsed"]] for h in res["hits"]["hits"]]
        ids = {i for g in groups for i in g}
        predicted |= pairs_from_groups(groups)
        relevant |= {p for p in truth if p <= ids}
        collapse_ms.append(res["bloomspan"]["collapse_ms"])
    pr = precision_recall(predicted, relevant)
    same_site_false = sum(1 for p in predicted - relevant if len({site[i] for i in p}) == 1)
    return pr, same_site_false, collapse_ms


def test_stripped_fingerprints_find_planted_duplicates_with_fewer_same_site_false_pairs(os_client, crawl):
    index, docs = crawl
    raw, raw_same_site, _ = evaluate(os_client, index, docs, "fp_raw")
    clean, clean_same_site, ms = evaluate(os_client, index, docs, "bloomspan.fingerprint")
    print(f"\nraw:      {raw} same-site false pairs={raw_same_site}"
          f"\nstripped: {clean} same-site false pairs={clean_same_site}"
          f"\ncollapse of top 80: median {sorted(ms)[len(ms) // 2]:.2f} ms, max {max(ms):.2f} ms")
    assert clean.tp + clean.fn >= 15  # the planted pairs do show up in the results
    assert clean.recall >= 0.8
    assert clean_same_site < raw_same_site  # stripping boilerplate removes false near-duplicates
    assert clean.precision >= raw.precision


def test_response_shape_and_source_filtering(os_client, crawl):
    index, docs = crawl
    dup = next(d for d in docs if d["truth"]["near_duplicate_of"])
    body = {"query": {"ids": {"values": [dup["id"], dup["truth"]["near_duplicate_of"]]}}, "_source": ["site"],
            "size": 3, "from": 7}
    res = search_collapsed(os_client, index, body, k=10, threshold=0.3)
    assert res["hits"]["total"]["value"] == 2 and res["bloomspan"]["considered"] == 2
    assert res["bloomspan"]["groups"] == 1 and res["bloomspan"]["collapsed"] == 1
    (rep,) = res["hits"]["hits"]
    (member,) = rep["collapsed"]
    assert {rep["_id"], member["_id"]} == {dup["id"], dup["truth"]["near_duplicate_of"]}
    assert rep["_source"] == {"site": dup["site"]} and member["_source"] == {"site": dup["site"]}  # fingerprint removed
    assert 0.3 <= member["similarity"] <= 1.0
    full = search_collapsed(os_client, index, {"query": {"ids": {"values": [dup["id"]]}}}, k=5)
    assert base64.b64decode(full["hits"]["hits"][0]["_source"]["bloomspan"]["fingerprint"])  # kept: all of _source asked
    nothing = search_collapsed(os_client, index, {"query": {"ids": {"values": [dup["id"]]}}, "_source": False})
    assert "_source" not in nothing["hits"]["hits"][0] or not nothing["hits"]["hits"][0]["_source"]
    missing = search_collapsed(os_client, index, {"query": {"ids": {"values": [dup["id"]]}}},
                               fingerprint_field="no.such.field")
    assert missing["bloomspan"]["missing_fingerprint"] == 1 and missing["bloomspan"]["groups"] == 1


def test_http_route_on_the_serve_app(opensearch_url, os_client, crawl):
    index, docs = crawl
    config = ServeConfig(upstream_url=opensearch_url)
    app = create_app(config)
    add_search_routes(app, client_for_request(config))
    body = queries(docs)[0]
    with serve_in_thread(app) as (url, _loop):
        r = requests.post(f"{url}/_bloomspan/search/{index}?k=80&threshold={THRESHOLD}", json=body, timeout=60)
        assert r.status_code == 200, r.text
        got = r.json()
        bad = requests.post(f"{url}/_bloomspan/search/{index}?threshold=2", json=body, timeout=60)
        missing = requests.post(f"{url}/_bloomspan/search/bstest-no-such-index", json=body, timeout=60)
        garbage = requests.post(f"{url}/_bloomspan/search/{index}", data=b"{nope",
                                headers={"Content-Type": "application/json"}, timeout=60)
        proxied = requests.get(f"{url}/{index}/_count", timeout=60)  # the proxy still answers everything else
    want = search_collapsed(os_client, index, body, k=80, threshold=THRESHOLD)
    assert [h["_id"] for h in got["hits"]["hits"]] == [h["_id"] for h in want["hits"]["hits"]]
    assert [[m["_id"] for m in h["collapsed"]] for h in got["hits"]["hits"]] == \
           [[m["_id"] for m in h["collapsed"]] for h in want["hits"]["hits"]]
    assert got["bloomspan"]["considered"] == 80
    assert bad.status_code == 400 and "threshold" in bad.json()["error"]["reason"]
    assert missing.status_code == 404 and json.dumps(missing.json()).find("index_not_found") >= 0
    assert garbage.status_code == 400
    assert proxied.status_code == 200 and proxied.json()["count"] == N_DOCS
