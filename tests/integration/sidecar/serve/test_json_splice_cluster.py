"""The spliced bulk body against the real node: per-item statuses as if the client had sent its
body directly, stored sources byte-exact outside the cleaned fields (a keyword query for
"1.10" finds the page), and strict-mapping indices still accept stripped documents."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
from bloomspan.ingest.records.phrase_set import PhraseSet
from bloomspan.sidecar.serve.bulk_proxy import IndexPatterns, rewrite_bulk

FOOTER = "all rights reserved by acme corporation"
DIRTY = "Great shoes. All rights reserved by ACME Corporation."
MAPPING = {"properties": {"price": {"type": "keyword"}, "text": {"type": "text"}}}


def _cleaner(mode="strip"):
    ps = PhraseSet.from_records([{"tokens": FOOTER.split()}])
    return Cleaner(ps, CleanerConfig(fields=("text",), mode=mode, skip_missing=True, id_field=None))


def _post(url: str, body: bytes) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/x-ndjson"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _item_outcomes(payload: bytes) -> list[tuple[str, int, str | None]]:
    items = json.loads(payload)["items"]
    return [(verb, r["status"], (r.get("error") or {}).get("type")) for item in items for verb, r in item.items()]


def _raw_source(opensearch_url: str, index: str, doc_id: str) -> str:
    """The stored source as the node returns it: GET _doc copies the stored bytes (filter_path
    would re-serialise them)."""
    with urllib.request.urlopen(f"{opensearch_url}/{index}/_doc/{doc_id}", timeout=30) as r:
        text = r.read().decode()
    return text[text.index('"_source":') + len('"_source":'):-1]


def test_spliced_bulk_gets_the_clusters_own_per_item_answers(opensearch_url, os_client, index_prefix):
    direct, proxied = f"{index_prefix}crawl-direct", f"{index_prefix}crawl-proxy"
    for index in (direct, proxied):
        os_client.indices.create(index=index, body={"mappings": MAPPING})
    deep = b'{"o":' * 5000 + b"1" + b"}" * 5000
    body = (b'\xef\xbb\xbf{"index":{"_id":"a"}}\r\n{ "price" : 1.10, "n": 1E+2, "t": "caf\\u00e9", "text": "%s" }\r\n'
            b'{"index":{"_id":"dup"}}\n{"text": "x", "text": "%s"}\n'
            b'\n'
            b'{"create":{"_id":"surrogate"}}\n{"note": "\\ud800", "text": "%s"}\n'
            b'{"index":{"_id":"trailing"}}\n{"text": "%s"} {"more": 1}\n'
            b'{"index":{"_id":"deep"}}\n%s\n'
            b'{"delete":{"_id":"missing"}}\n'
            b'{"index":{"_id":"b"}}\n\xef\xbb\xbf{"price": "1.10", "text": "%s"}\n'
            % (DIRTY.encode(), DIRTY.encode(), DIRTY.encode(), DIRTY.encode(), deep, DIRTY.encode()))
    rewritten, stats = rewrite_bulk(body, _cleaner(), IndexPatterns((proxied,)), proxied)
    status_direct, answer_direct = _post(f"{opensearch_url}/{direct}/_bulk?refresh=true", body)
    status_proxied, answer_proxied = _post(f"{opensearch_url}/{proxied}/_bulk?refresh=true", rewritten)
    assert status_direct == status_proxied == 200
    assert _item_outcomes(answer_proxied) == _item_outcomes(answer_direct)
    assert stats.cleaned == 3 and stats.uncleaned_by_reason == {"duplicate_keys": 1, "invalid_json": 1, "too_deep": 1}
    # Stored as the client sent it, except the cleaned text and the added metadata.
    stored = _raw_source(opensearch_url, proxied, "a")
    assert stored.startswith('{ "price" : 1.10, "n": 1E+2, "t": "caf\\u00e9", "text": "Great shoes.","bloomspan":{')
    assert '"note": "\\ud800"' in _raw_source(opensearch_url, proxied, "surrogate")
    # OpenSearch reads past a BOM that opens a source but stores it (the proxy, like the node,
    # keeps what the client sent), so search responses holding it are not JSON: no _source here.
    assert _raw_source(opensearch_url, proxied, "b").startswith('\ufeff{"price": "1.10", "text": "Great shoes."')
    hits = os_client.search(index=proxied, body={"query": {"term": {"price": "1.10"}}, "_source": False})["hits"]["hits"]
    assert sorted(h["_id"] for h in hits) == ["a", "b"]


def test_strict_index_takes_stripped_documents_when_no_field_is_added(opensearch_url, os_client, index_prefix):
    index = f"{index_prefix}crawl-strict"
    os_client.indices.create(index=index, body={"mappings": {"dynamic": "strict", **MAPPING}})
    body = b'{"index":{"_id":"s"}}\n{"price": "2.50", "text": "%s"}\n' % DIRTY.encode()
    patterns = IndexPatterns((index,))
    adds_fields, _ = rewrite_bulk(body, _cleaner(), patterns, index)
    status, answer = _post(f"{opensearch_url}/{index}/_bulk?refresh=true", adds_fields)
    assert _item_outcomes(answer) == [("index", 400, "strict_dynamic_mapping_exception")]
    in_place, stats = rewrite_bulk(body, _cleaner(), patterns, index, accepts_new_fields=lambda name: name != index)
    status, answer = _post(f"{opensearch_url}/{index}/_bulk?refresh=true", in_place)
    assert status == 200 and _item_outcomes(answer) == [("index", 201, None)]
    assert os_client.get(index=index, id="s")["_source"] == {"price": "2.50", "text": "Great shoes."}
    # mark and downweight only add fields: such an item goes through as sent, the cluster decides.
    as_sent, stats = rewrite_bulk(body, _cleaner("downweight"), patterns, index, accepts_new_fields=lambda name: False)
    assert as_sent == body and stats.uncleaned_by_reason == {"strict_mapping": 1}
