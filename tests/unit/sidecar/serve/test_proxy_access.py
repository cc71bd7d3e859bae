"""The proxy's access rules (sidecar/serve/proxy_access.py), as pure functions: protected indices in
every mode, the allow-list with the sidecar's credentials, and the bulk framing they read."""
from __future__ import annotations

import fnmatch
import itertools
import json

import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.sidecar.serve.bulk_proxy import IndexPatterns
from bloomspan.sidecar.serve.proxy_access import (
    AccessPolicy,
    bulk_items,
    expression_globs,
    globs_intersect,
    split_path,
    strip_comments,
)

TEMPLATE = "bloomspan-templates"
LEASE = "bloomspan-lease"


def policy(sidecar: bool) -> AccessPolicy:
    return AccessPolicy(IndexPatterns(("crawl-*",)), TEMPLATE, LEASE, sidecar_credentials=sidecar)


def check(sidecar: bool, method: str, path: str, body: bytes = b"", query: dict | None = None,
          content_type: str | None = "application/json"):
    return policy(sidecar).check(method, split_path(path), query or {}, content_type, body)


def ndjson(*objs) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


# ------------------------------------------------------------------ globs


def _brute_force_intersect(a: str, b: str) -> bool:
    for n in range(len(a) + len(b) + 1):
        for chars in itertools.product("ab", repeat=n):
            name = "".join(chars)
            if fnmatch.fnmatchcase(name, a) and fnmatch.fnmatchcase(name, b):
                return True
    return False


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab*", max_size=4), st.text(alphabet="ab*", max_size=4))
def test_globs_intersect_agrees_with_brute_force(a, b):
    assert globs_intersect(a, b) == _brute_force_intersect(a, b)


def test_expression_globs_read_lists_all_and_date_math():
    assert expression_globs("a,b*,-c") == ["a", "b*"]
    assert expression_globs("_all") == ["*"]
    assert expression_globs("<bloomspan-lease-{now/d{yyyy.MM}}>") == ["bloomspan-lease-*"]


def test_split_path_keeps_an_encoded_slash_inside_its_segment():
    assert split_path("/crawl-1/_doc/a%2Fb%20c?refresh=true") == ["crawl-1", "_doc", "a/b c"]


def test_strip_comments_leaves_strings_alone():
    text = '{"a": "/* not a comment */" /* c */, // rest\n"b": 1}'
    assert json.loads(strip_comments(text)) == {"a": "/* not a comment */", "b": 1}


# ------------------------------------------------------------------ protected indices, every mode


@pytest.mark.parametrize("sidecar", [False, True])
@pytest.mark.parametrize("method,path", [
    ("PUT", f"/{TEMPLATE}"), ("DELETE", f"/{TEMPLATE}-20260101t000000000-abcd"), ("DELETE", f"/{LEASE}"),
    ("PUT", f"/{LEASE}/_doc/lease"), ("POST", f"/{TEMPLATE}/_doc"), ("DELETE", "/_all"), ("DELETE", "/*"),
    ("DELETE", "/bloom*"), ("PUT", "/other/_alias/" + TEMPLATE), ("POST", f"/{TEMPLATE}-x/_clone/copy"),
    ("POST", "/src/_clone/" + TEMPLATE + "-fake"), ("PUT", f"/{TEMPLATE}-x/_settings"),
    ("POST", "/%3Cbloomspan-templates-%7Bnow%2Fd%7D%3E/_doc"), ("POST", f"/crawl-1,{LEASE}/_update_by_query"),
])
def test_writes_reaching_protected_indices_are_refused(sidecar, method, path):
    refusal = check(sidecar, method, path, b"{}")
    assert refusal is not None
    assert sidecar or refusal.rule == "protected_index"


@pytest.mark.parametrize("sidecar", [False, True])
def test_reads_of_protected_indices_stay_allowed(sidecar):
    assert check(sidecar, "GET", f"/{TEMPLATE}/_search") is None
    assert check(sidecar, "POST", f"/{TEMPLATE}/_search", b'{"query":{"match_all":{}}}') is None
    assert check(sidecar, "POST", f"/{LEASE}/_count", b"{}") is None


@pytest.mark.parametrize("sidecar", [False, True])
def test_a_bulk_item_for_a_protected_index_refuses_the_request_naming_the_item(sidecar):
    body = ndjson({"index": {"_index": "crawl-1", "_id": "1"}}, {"text": "x"},
                  {"delete": {"_index": LEASE, "_id": "lease"}})
    refusal = check(sidecar, "POST", "/_bulk", body)
    assert refusal.rule == "protected_index"
    assert "item 2" in refusal.reason and "line 3" in refusal.reason and LEASE in refusal.reason


@pytest.mark.parametrize("line", [
    b'{"index": {"_index": "bloomspan\\u002dlease"}}',  # an escape the node decodes
    b'{"index": {"_index": "bloomspan-lease" /* a comment the node accepts */}}',
    b'{"index": {"_index": "crawl-1"}} {"index": {"_index": "bloomspan-lease"}}',  # the node reads the first
    b'{"index": {"_index": "bloomspan-templates-x"}}',
])
def test_protected_names_are_found_the_way_the_node_reads_action_lines(line):
    body = line + b"\n{}\n"
    refusal = check(False, "POST", "/_bulk", body)
    first_object_only = line.count(b"{\"index\"") == 2
    if first_object_only:
        assert refusal is None  # the node ignores what follows the first object
    else:
        assert refusal is not None and refusal.rule == "protected_index"


def test_the_path_index_counts_for_items_without_their_own():
    body = ndjson({"index": {}}, {"text": "x"})
    assert check(False, "POST", f"/{LEASE}/_bulk", body).rule == "protected_index"
    assert check(False, "POST", "/crawl-1/_bulk", body) is None


def test_a_source_line_that_looks_like_an_action_is_not_an_action():
    body = ndjson({"index": {"_index": "crawl-1"}}, {"delete": {"_index": LEASE}})
    assert check(False, "POST", "/_bulk", body) is None


def test_alias_and_reindex_bodies_are_read_for_protected_names():
    repoint = json.dumps({"actions": [{"add": {"index": "evil", "alias": TEMPLATE}}]}).encode()
    assert check(False, "POST", "/_aliases", repoint).rule == "protected_index"
    remove_all = json.dumps({"actions": [{"remove": {"index": "*", "alias": "*"}}]}).encode()
    assert check(False, "POST", "/_aliases", remove_all).rule == "protected_index"
    harmless = json.dumps({"actions": [{"add": {"index": "crawl-1", "alias": "crawl"}}]}).encode()
    assert check(False, "POST", "/_aliases", harmless) is None
    reindex = json.dumps({"source": {"index": "crawl-1"}, "dest": {"index": LEASE}}).encode()
    assert check(False, "POST", "/_reindex", reindex).rule == "protected_index"


def test_writes_elsewhere_are_the_clusters_decision_with_client_credentials():
    for method, path in [("PUT", "/crawl-9"), ("DELETE", "/other"), ("PUT", "/_cluster/settings"),
                         ("POST", "/_aliases"), ("PUT", "/other/_mapping")]:
        assert check(False, method, path, b'{"actions": []}') is None, (method, path)


def test_a_write_body_in_the_query_string_or_a_binary_format_is_refused_in_every_mode():
    assert check(False, "POST", "/_aliases", query={"source": "{}"}).rule == "body_in_query"
    assert check(False, "POST", "/_bulk", b"\xfa\x01", content_type="application/smile").rule == "body_format"


# ------------------------------------------------------------------ the allow-list (sidecar credentials)


@pytest.mark.parametrize("method,path", [
    ("GET", "/other/_search"), ("HEAD", "/other"), ("POST", "/_search"), ("POST", "/other/_msearch"),
    ("POST", "/other/_count"), ("POST", "/_mget"), ("POST", "/other/_field_caps"), ("POST", "/other/_validate/query"),
    ("POST", "/other/_explain/1"), ("POST", "/_search/scroll"), ("DELETE", "/_search/scroll"),
    ("POST", "/other/_search/point_in_time"), ("DELETE", "/_search/point_in_time"), ("POST", "/_analyze"),
    ("PUT", "/crawl-1/_doc/1"), ("POST", "/crawl-1/_doc"), ("PUT", "/crawl-1/_create/1"),
    ("POST", "/crawl-1/_update/1"), ("DELETE", "/crawl-1/_doc/1"), ("POST", "/crawl-1/_refresh"),
])
def test_reads_and_document_writes_to_clean_indices_are_relayed(method, path):
    assert check(True, method, path, b"{}") is None


@pytest.mark.parametrize("method,path", [
    ("PUT", "/crawl-9"), ("DELETE", "/crawl-1"), ("DELETE", "/other"), ("PUT", "/_cluster/settings"),
    ("POST", "/_aliases"), ("PUT", "/crawl-1/_mapping"), ("PUT", "/crawl-1/_settings"), ("PUT", "/_scripts/s"),
    ("PUT", "/_ingest/pipeline/p"), ("POST", "/crawl-*/_doc"), ("PUT", "/other/_doc/1"), ("DELETE", "/other/_doc/1"),
    ("POST", "/crawl-1/_delete_by_query"), ("POST", "/crawl-1/_update_by_query"), ("POST", "/_reindex"),
    ("GET", "/_plugins/_security/api/internalusers"), ("POST", "/crawl-1,crawl-2/_doc"), ("PUT", "/_index_template/t"),
])
def test_everything_else_is_refused_with_sidecar_credentials(method, path):
    refusal = check(True, method, path, b"{}")
    assert refusal is not None and refusal.rule == "not_allowed"
    assert method in refusal.reason and "--no-forward-credentials" in refusal.reason


def test_sidecar_bulk_needs_every_item_on_a_clean_index():
    good = ndjson({"index": {"_index": "crawl-1"}}, {"t": 1}, {"delete": {"_index": "crawl-2", "_id": "x"}},
                  {"update": {"_index": "crawl-1", "_id": "y"}}, {"doc": {"t": 2}})
    assert check(True, "POST", "/_bulk", good) is None
    outside = good + ndjson({"create": {"_index": "other", "_id": "z"}}, {"t": 3})
    refusal = check(True, "POST", "/_bulk", outside)
    assert refusal.rule == "not_allowed" and "item 4" in refusal.reason and "'other'" in refusal.reason
    assert check(True, "POST", "/_bulk", ndjson({"index": {"_index": 5}}, {})).rule == "not_allowed"
    assert check(True, "POST", "/_bulk", b'{"index": {"_index": "crawl-1"\n{}\n').rule == "not_allowed"
    assert check(True, "POST", "/_bulk", ndjson({"index": {}}, {})).rule == "not_allowed"
    assert check(True, "POST", "/other/_bulk", ndjson({"index": {"_index": "crawl-1"}}, {})).rule == "not_allowed"


def test_bulk_items_follow_the_node_framing():
    body = b'\n{"index":{"_index":"a"}}\n\n{"delete":{"_index":"b"}}\r\n{"create":{}}\n{"x":1}'
    items = list(bulk_items(body, "dflt"))
    # The blank line after the index action is its (empty) source; the delete has none.
    assert [(i.line, i.verbs, i.indices) for i in items] == [(2, ("index",), ("a",)), (4, ("delete",), ("b",)),
                                                             (5, ("create",), ("dflt",))]


def test_deep_nesting_in_an_action_line_is_unparsed_not_a_crash():
    body = b"[" * 100_000 + b"\n{}\n"
    (item,) = list(bulk_items(body, None))
    assert not item.parsed
    assert check(False, "POST", "/_bulk", body) is None  # the node rejects it; nothing protected named
    assert check(True, "POST", "/_bulk", body).rule == "not_allowed"


# ------------------------------------------------------------------ the same rule for every method


@pytest.mark.parametrize("path", ["/_flush", "/_refresh", "/crawl-1/_flush", "/_flush/synced", "/crawl-*/_refresh"])
def test_get_refresh_and_flush_are_writes_like_their_post(path):
    for method in ("GET", "POST"):
        refusal = check(True, method, path)
        assert refusal is not None and refusal.rule == "not_allowed", (method, path)
        assert "--no-forward-credentials" in refusal.reason


def test_get_refresh_of_a_clean_index_is_relayed_as_post_is_and_protected_ones_never():
    assert check(True, "GET", "/crawl-1/_refresh") is None and check(True, "POST", "/crawl-1/_refresh") is None
    for sidecar in (False, True):
        for method in ("GET", "POST"):
            refusal = check(sidecar, method, f"/{LEASE}/_refresh")
            assert refusal is not None and refusal.rule == "protected_index", (sidecar, method)
    assert check(True, "GET", "/_stats/refresh") is None and check(True, "HEAD", "/crawl-1/_refresh") is None


# ------------------------------------------------------------------ aliases and data streams


def _resolved(**kw):
    from bloomspan.sidecar.serve.target_resolution import Resolution

    return Resolution(**kw)


def test_an_alias_that_matches_clean_index_is_checked_by_the_indices_behind_it():
    to_lease = _resolved(aliases={"crawl-live": (LEASE,)})
    body = json.dumps({"holder": "me"}).encode()
    for sidecar in (False, True):
        refusal = policy(sidecar).check("PUT", split_path("/crawl-live/_doc/1"), {}, "application/json", body, to_lease)
        assert refusal is not None and refusal.rule == "protected_index" and LEASE in refusal.reason, sidecar
        bulk = ndjson({"index": {"_index": "crawl-live", "_id": "1"}}, {"holder": "me"})
        refusal = policy(sidecar).check("POST", ["_bulk"], {}, "application/x-ndjson", bulk, to_lease)
        assert refusal is not None and "item 1" in refusal.reason and LEASE in refusal.reason, sidecar
    elsewhere = _resolved(aliases={"crawl-live": ("crawl-2026", "accounts")})
    refusal = policy(True).check("PUT", split_path("/crawl-live/_doc/1"), {}, "application/json", body, elsewhere)
    assert refusal is not None and refusal.rule == "not_allowed"
    assert policy(False).check("PUT", split_path("/crawl-live/_doc/1"), {}, "application/json", body, elsewhere) is None
    inside = _resolved(aliases={"crawl-live": ("crawl-2026",)})
    assert policy(True).check("PUT", split_path("/crawl-live/_doc/1"), {}, "application/json", body, inside) is None


def test_a_data_stream_is_checked_by_its_backing_indices():
    body = ndjson({"create": {"_index": "crawl-ds"}}, {"@timestamp": "2026-01-01", "text": "x"})
    fine = _resolved(data_streams={"crawl-ds": (".ds-crawl-ds-000001",)})
    assert policy(True).check("POST", ["_bulk"], {}, "application/x-ndjson", body, fine) is None
    bad = _resolved(data_streams={"crawl-ds": (f"{TEMPLATE}-x",)})
    refusal = policy(True).check("POST", ["_bulk"], {}, "application/x-ndjson", body, bad)
    assert refusal is not None and refusal.rule == "protected_index"


def test_names_to_resolve_are_the_concrete_write_targets():
    p = policy(True)
    bulk = ndjson({"index": {"_index": "crawl-a"}}, {"t": 1}, {"delete": {"_index": "b*", "_id": "1"}},
                  {"index": {"_id": "2"}}, {"t": 2})
    assert p.names_to_resolve("POST", ["crawl-x", "_bulk"], bulk) == ["crawl-a", "crawl-x"]
    assert p.names_to_resolve("PUT", split_path("/a,b*,<c-{now/d}>/_doc/1"), b"{}") == ["a"]
    assert p.names_to_resolve("GET", ["crawl-a", "_search"], b"") == []
    assert p.names_to_resolve("POST", ["crawl-a", "_search"], b"{}") == []
    assert p.names_to_resolve("GET", ["crawl-a", "_refresh"], b"") == ["crawl-a"]


def test_a_failed_resolution_refuses_writes_with_sidecar_credentials_only():
    failed = _resolved(failed="the cluster answered 403")
    body = b'{"text": "x"}'
    refusal = policy(True).check("PUT", split_path("/crawl-1/_doc/1"), {}, "application/json", body, failed)
    assert refusal is not None and refusal.rule == "unresolved" and "403" in refusal.reason
    assert policy(False).check("PUT", split_path("/crawl-1/_doc/1"), {}, "application/json", body, failed) is None
    assert policy(True).check("GET", split_path("/crawl-1/_doc/1"), {}, None, b"", failed) is None
