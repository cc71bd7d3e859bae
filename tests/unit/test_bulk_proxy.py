"""The proxy's body rewriting: only index/create items for configured indices are cleaned,
everything else is forwarded byte for byte, and no document is ever dropped."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.ingest.cleaner import Cleaner, CleanerConfig
from bloomspan.ingest.phrase_set import PhraseSet
from bloomspan.sidecar.bulk_proxy import IndexPatterns, rewrite_bulk, rewrite_single

FOOTER = "all rights reserved by acme corporation"


@pytest.fixture(scope="module")
def cleaner():
    ps = PhraseSet.from_records([{"tokens": FOOTER.split()}, {"tokens": ["accept", "all", "cookies", "now"]}])
    return Cleaner(ps, CleanerConfig(fields=("text",), mode="strip", skip_missing=True, id_field=None, max_ratio=0.9))


def _ndjson(*objs) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


PATTERNS = IndexPatterns(("crawl-*",))


def test_cleans_index_and_create_items_for_matching_indices(cleaner):
    body = _ndjson({"index": {"_index": "crawl-1", "_id": "a"}},
                   {"text": "Great shoes. All rights reserved by ACME Corporation.", "n": 1},
                   {"create": {"_index": "crawl-2"}},
                   {"text": "Accept all cookies now! Content here."})
    out, stats = rewrite_bulk(body, cleaner, PATTERNS)
    lines = out.split(b"\n")
    assert json.loads(lines[0]) == {"index": {"_index": "crawl-1", "_id": "a"}}
    first = json.loads(lines[1])
    assert "acme" not in first["text"].lower() and first["text"].startswith("Great shoes.")
    assert first["n"] == 1 and first["bloomspan"]["boilerplate_ratio"] > 0
    assert "cookies" not in json.loads(lines[3])["text"].lower()
    assert stats.items == 2 and stats.cleaned == 2 and stats.errors == 0


def test_other_indices_updates_deletes_pass_byte_for_byte(cleaner):
    body = (b'{"index":{"_index":"logs-1"}}\n{"text":"All rights reserved by Acme Corporation"}\n'
            b'{"delete":{"_index":"crawl-1","_id":"x"}}\n'
            b'{"update":{"_index":"crawl-1","_id":"y"}}\n{"doc":{"text":"All rights reserved by Acme Corporation"}}\n')
    out, stats = rewrite_bulk(body, cleaner, PATTERNS)
    assert out == body
    assert stats.items == 0


def test_default_index_from_url_path(cleaner):
    body = _ndjson({"index": {}}, {"text": "x. All rights reserved by Acme Corporation"})
    out, stats = rewrite_bulk(body, cleaner, PATTERNS, default_index="crawl-9")
    assert stats.cleaned == 1 and b"acme" not in out.lower()


def test_bad_documents_are_forwarded_unchanged_never_dropped(cleaner):
    body = (b'{"index":{"_index":"crawl-1","_id":"1"}}\n{"text": {"nested": "All rights reserved by acme corporation"}}\n'
            b'{"index":{"_index":"crawl-1","_id":"2"}}\n{not json at all\n'
            b'{"index":{"_index":"crawl-1","_id":"3"}}\n{"text": 42}\n')
    out, stats = rewrite_bulk(body, cleaner, PATTERNS)
    assert out == body
    assert stats.items == 3 and stats.errors == 2 and stats.passed_through == 1


def test_unparseable_action_line_forwards_rest_verbatim(cleaner):
    body = b'garbage\n{"text":"All rights reserved by acme corporation"}\n'
    out, stats = rewrite_bulk(body, cleaner, PATTERNS)
    assert out == body


def test_over_ratio_is_routed_when_configured(cleaner):
    body = _ndjson({"index": {"_index": "crawl-1", "_id": "a"}}, {"text": "All rights reserved by Acme Corporation"})
    out, stats = rewrite_bulk(body, cleaner, PATTERNS, route_index="{index}-boilerplate")
    assert json.loads(out.split(b"\n")[0])["index"]["_index"] == "crawl-1-boilerplate"
    assert stats.routed == 1
    out, stats = rewrite_bulk(body, cleaner, PATTERNS)
    assert json.loads(out.split(b"\n")[0])["index"]["_index"] == "crawl-1"
    assert stats.over_ratio_kept == 1


def test_single_document(cleaner):
    body = json.dumps({"text": "Hello world. Accept all cookies now"}).encode()
    out, stats, over = rewrite_single(body, cleaner, "crawl-1", PATTERNS, "id1")
    assert "cookies" not in json.loads(out)["text"].lower() and not over
    same, stats, _ = rewrite_single(body, cleaner, "other", PATTERNS, "id1")
    assert same is body


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["crawl-1", "other"]), st.sampled_from(["index", "create", "delete"]),
                          st.text(alphabet="ab Acme corporation.,", max_size=40)), max_size=8))
def test_item_count_and_order_preserved(cleaner, items):
    objs = []
    for idx, verb, text in items:
        objs.append({verb: {"_index": idx}})
        if verb != "delete":
            objs.append({"text": text})
    body = _ndjson(*objs)
    out, _ = rewrite_bulk(body, cleaner, PATTERNS)
    actions_in = [json.loads(l) for l in body.split(b"\n") if l and ('"_index"' in l.decode())]
    actions_out = [json.loads(l) for l in out.split(b"\n") if l and ('"_index"' in l.decode())]
    assert actions_in == actions_out
    assert out.count(b"\n") == body.count(b"\n")
