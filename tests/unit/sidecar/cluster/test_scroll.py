"""Field extraction and keys of the scan: bad documents are classified, never raised."""
from __future__ import annotations

import pytest
from opensearchpy.exceptions import (
    AuthenticationException,
    ConnectionError as ClientConnectionError,
    ConnectionTimeout,
    NotFoundError,
    RequestError,
    TransportError,
)

from bloomspan.sidecar.cluster.scroll import (
    ScanUnit,
    doc_key,
    extract_text,
    lookup_field,
    parse_hits,
    recoverable,
    split_key,
    ts_fingerprint,
)
from bloomspan.sidecar.errors import ScanError
from bloomspan.sidecar.run.checkpoint import EMPTY, LISTED, MISSING, NOT_TEXT, STORED


@pytest.mark.parametrize("source, status, text", [
    ({"text": "Hello"}, STORED, "Hello"),
    ({"text": ["a b", "c"]}, STORED, "a b\nc"),
    ({}, MISSING, None),
    (None, MISSING, None),
    ({"text": None}, MISSING, None),
    ({"text": ""}, EMPTY, None),
    ({"text": " \n\t"}, EMPTY, None),
    ({"text": []}, EMPTY, None),
    ({"text": 42}, NOT_TEXT, None),
    ({"text": True}, NOT_TEXT, None),
    ({"text": {"inner": "x"}}, NOT_TEXT, None),
    ({"text": ["a", 3]}, NOT_TEXT, None),
])
def test_extract_text_classifies(source, status, text):
    assert extract_text(source, "text") == (status, text)


def test_lookup_field_dotted_and_flat():
    assert lookup_field({"body": {"text": "x"}}, "body.text") == "x"
    assert lookup_field({"body.text": "flat"}, "body.text") == "flat"
    assert extract_text({"body": {"other": 1}}, "body.text") == (MISSING, None)
    assert extract_text({"body": "str"}, "body.text") == (MISSING, None)


def test_keys_round_trip_for_one_and_many_indices():
    assert doc_key("idx", "a:b", False) == "a:b" and split_key("a:b", ["idx"]) == ("idx", "a:b")
    key = doc_key("idx-2", "a:b", True)
    assert key == "idx-2:a:b" and split_key(key, ["idx-1", "idx-2"]) == ("idx-2", "a:b")


def test_ts_fingerprint_is_stable_and_nonzero():
    assert ts_fingerprint(None) == 0 and ts_fingerprint([]) == 0
    a = ts_fingerprint(["2024-01-01T00:00:00.000Z"])
    assert a == ts_fingerprint(["2024-01-01T00:00:00.000Z"]) != 0
    assert a != ts_fingerprint(["2024-01-02T00:00:00.000Z"])


def test_parse_hits_meta_columns():
    hits = [{"_index": "i", "_id": "a", "_seq_no": 7, "_primary_term": 2, "_source": {"text": "x y"},
             "fields": {"ts": ["2024"]}},
            {"_index": "i", "_id": "b", "_seq_no": 9, "_primary_term": 2, "_source": {"text": 5}}]
    keys, texts, meta = parse_hits(hits, "text", "ts", False)
    assert keys == ["a", "b"] and texts == ["x y", None]
    assert meta[:, 0].tolist() == [7, 9] and meta[:, 3].tolist() == [STORED, NOT_TEXT]
    assert meta[0, 2] != 0 and meta[1, 2] == 0 and meta[:, 4].tolist() == [-1, -1]
    keys, texts, meta = parse_hits(hits, None, None, True)
    assert keys == ["i:a", "i:b"] and meta[:, 3].tolist() == [LISTED, LISTED] and texts == [None, None]
    assert parse_hits([], "text", None, False)[2].shape == (0, 5)


def test_scan_unit_slices_only_multi_shard_indices():
    assert ScanUnit("i", 0, 1).slice() is None
    assert ScanUnit("i", 2, 3).slice() == {"id": 2, "max": 3} and ScanUnit("i", 2, 3).name == "i/2"


def test_what_a_scan_waits_out_and_what_it_does_not():
    """A restarting or overloaded cluster, and lost contexts, are waited for; a refused
    request, bad credentials or a deleted source are not (they would fail again)."""
    waited = [ClientConnectionError("N/A", "refused", None), ConnectionTimeout("TIMEOUT", "slow", None),
              ConnectionResetError(), TransportError(503, "cluster_block_exception", {}),
              TransportError(429, "es_rejected_execution_exception", {}),
              NotFoundError(404, "search_context_missing_exception", {}), ScanError("src/0: 2 shard(s) failed")]
    not_waited = [RequestError(400, "parsing_exception", {}), AuthenticationException(401, "security_exception", {}),
                  NotFoundError(404, "index_not_found_exception", {}), ValueError("a bug")]
    assert all(recoverable(e) for e in waited)
    assert not any(recoverable(e) for e in not_waited)
