"""Adversarial proxy suite: the same request straight to the real node and through a real
`bloomspan serve` app must give the same answer and store the same bytes.

Each comparison case sends one request (a) directly to the node, into an index whose name
ends in ``-direct``, and (b) through the proxy, into the twin index ending in ``-proxy``
(the only pattern the proxy cleans). Then it compares:

* the HTTP status;
* for ``_bulk``: the ``errors`` flag and, item by item, the action, status, ``result``,
  error type and ``_id`` where the request gave one (not ``_seq_no`` or timings);
* for other JSON answers: the error type, or ``result``/``found``/``_id``/hit count;
* the stored ``_source`` of every document the case names (or the cluster generated), as
  raw text, member by member: identical except the ``bloomspan`` object and the cleaned
  ``text`` field of a document that held the boilerplate phrase (which must then be gone).

The phrase set holds one real boilerplate phrase; some documents contain it, some do not.
Proxy-only cases check what has no direct twin: refusals of protected indices (every
mode) and of non-allowed requests with the sidecar's credentials (403 JSON, nothing
written), an outage (503 JSON), and the body limit. One app per mode and one pair of
shared indices serve the whole module; every index is named ``bstest-adv-<run>-...`` and
deleted at the end.
"""
from __future__ import annotations

import gzip
import http.client
import json
import socket
import uuid
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest

from bloomspan.sidecar.serve.service import create_app
from bloomspan.sidecar.serve.state import ServeConfig
from tests.support.service_thread import serve_in_thread

RUN = uuid.uuid4().hex[:10]
PREFIX = f"bstest-adv-{RUN}"
TEMPLATE = f"{PREFIX}-tpl"
LEASE = f"{PREFIX}-lease"
PIPELINE = f"{PREFIX}-pipe"
PHRASE = "all rights reserved by acme corporation"
FOOT = "All rights reserved by ACME Corporation."
NEAR_LIMIT = 1 << 20  # the body limit of the small-limit app
NDJSON = {"Content-Type": "application/x-ndjson"}
JSON_CT = {"Content-Type": "application/json"}


# ----------------------------------------------------------------------------- transport


@dataclass
class Reply:
    status: int
    headers: dict
    body: bytes

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            return None


def send(base: str, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
         chunked: bool = False, gzip_body: bool = False) -> Reply:
    """One raw HTTP request (http.client: the bytes, framing and headers exactly as given)."""
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=300)
    headers = dict(headers or {})
    if gzip_body and body is not None:
        body = gzip.compress(body)
        headers["Content-Encoding"] = "gzip"
    try:
        if chunked and body is not None:
            half = len(body) // 2
            conn.request(method, path, body=iter([body[:half], body[half:]]), headers=headers, encode_chunked=True)
        else:
            conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


def send_declared_length_only(base: str, path: str, length: int) -> int:
    """Status of a request that declares ``length`` bytes but sends only the start of them."""
    parts = urlsplit(base)
    with socket.create_connection((parts.hostname, parts.port), timeout=60) as s:
        s.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\n"
                  f"Content-Length: {length}\r\n\r\n".encode() + b"x" * 1000)
        head = s.recv(4096)
    return int(head.split(b" ", 2)[1])


# ----------------------------------------------------------------------------- raw source comparison


def top_members(raw: str) -> list[tuple[str, str]]:
    """``(key, member text stripped)`` of the top-level members of a raw JSON object."""
    start = raw.index("{") + 1
    depth, in_string, escaped, begin, texts = 0, False, False, start, []
    for j in range(start, len(raw)):
        c = raw[j]
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
            continue
        if c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            if depth == 0:
                texts.append(raw[begin:j])
                break
            depth -= 1
        elif c == "," and depth == 0:
            texts.append(raw[begin:j])
            begin = j + 1
    decoder = json.JSONDecoder()
    members = []
    for text in texts:
        text = text.strip()
        if text:
            members.append((decoder.raw_decode(text)[0], text))
    return members


def raw_source(reply: Reply) -> str | None:
    """The stored ``_source`` of a GET _doc answer, as the raw text the node returned."""
    if reply.status != 200:
        return None
    text = reply.body.decode("utf-8", "surrogatepass")
    return text[text.index(',"_source":') + len(',"_source":'):-1]


def has_phrase(member_text: str) -> bool:
    try:
        value = json.loads(member_text.split(":", 1)[1])
    except ValueError:
        return PHRASE in member_text.lower()
    return PHRASE in json.dumps(value, ensure_ascii=False).lower()


def assert_same_source(direct: str | None, proxied: str | None, where: str, cleaned_by_proxy: bool = True) -> None:
    """``cleaned_by_proxy`` False: a document the proxy must forward as sent (an update, a
    value it cannot handle): every member, the text included, must be the client's bytes."""
    assert (direct is None) == (proxied is None), f"{where}: stored on one side only"
    if direct is None:
        return
    d_members, p_members = top_members(direct), top_members(proxied)
    if not cleaned_by_proxy:
        assert p_members == d_members, f"{where}: forwarded-as-sent source differs\n direct: {direct[:600]}\n proxy:  {proxied[:600]}"
        return
    cleaned = {k for k, text in d_members if k == "text" and has_phrase(text)}
    expected = [(k, t) for k, t in d_members if k != "bloomspan" and k not in cleaned]
    got = [(k, t) for k, t in p_members if k != "bloomspan" and k not in cleaned]
    assert got == expected, f"{where}: source differs beyond the cleaned fields\n direct: {direct[:600]}\n proxy:  {proxied[:600]}"
    for key in cleaned:
        p_text = dict(p_members).get(key)
        assert p_text is None or not has_phrase(p_text), f"{where}: {key} still holds the boilerplate"
    d_own = dict(d_members).get("bloomspan")
    if d_own is not None and d_own.split(":", 1)[1].strip().startswith("{"):
        p_own = dict(p_members)["bloomspan"]
        d_keys = top_members(d_own.split(":", 1)[1])
        p_keys = dict(top_members(p_own.split(":", 1)[1]))
        for key, text in d_keys:
            assert p_keys.get(key) == text, f"{where}: the user's bloomspan.{key} was not kept"


# ----------------------------------------------------------------------------- cases


@dataclass
class Case:
    name: str
    method: str
    path: str  # @I@ / @J@: the case's index / second index; direct and proxy names substituted
    body: bytes | None = None
    headers: dict = field(default_factory=lambda: dict(NDJSON))
    ids: tuple[str, ...] = ()  # documents whose stored source is compared
    mappings: dict | None = None  # the case gets its own index pair created with these mappings
    before: tuple = ()  # (method, path, body) sent to both indices directly first
    chunked: bool = False
    gzip_body: bool = False
    own_index: bool = False  # the case's own index pair, created by its first write


def nd(*lines) -> bytes:
    return b"".join((ln if isinstance(ln, bytes) else json.dumps(ln).encode()) + b"\n" for ln in lines)


def ix(verb: str, _id: str | None = None, **meta) -> dict:
    meta = {"_index": "@I@", **meta}
    if _id is not None:
        meta["_id"] = _id
    return {verb: meta}


def doc(text: str, **fields) -> dict:
    return {"text": text, **fields}


BOILER = f"Fresh news today. {FOOT}"
CLEAN = "Fresh news today, nothing repeated here."
BIG_TEXT = ("word " * 3_500_000) + FOOT  # ~17.5 MB: over the rewriter's per-item limit

CASES: list[Case] = [
    Case("bulk_boilerplate", "POST", "/_bulk", nd(ix("index", "b1"), doc(BOILER)), ids=("b1",)),
    Case("bulk_no_boilerplate", "POST", "/_bulk", nd(ix("index", "b2"), doc(CLEAN)), ids=("b2",)),
    Case("number_decimal", "POST", "/_bulk", nd(ix("index", "n1"), b'{"text": "' + BOILER.encode() + b'", "price": 1.10}'), ids=("n1",)),
    Case("number_exponent", "POST", "/_bulk", nd(ix("index", "n2"), b'{"n": 1E+2, "m": 1e-7, "text": "' + BOILER.encode() + b'"}'), ids=("n2",)),
    Case("number_negative_zero", "POST", "/_bulk", nd(ix("index", "n3"), b'{"z": -0.0, "text": "' + CLEAN.encode() + b'"}'), ids=("n3",)),
    Case("number_big_int", "POST", "/_bulk", nd(ix("index", "n4"), b'{"big": 9007199254740993, "text": "' + BOILER.encode() + b'"}'), ids=("n4",)),
    Case("number_beyond_long", "POST", "/_bulk", nd(ix("index", "n5"), b'{"huge_n": 123456789012345678901234567890, "text": "' + BOILER.encode() + b'"}'), ids=("n5",)),
    Case("key_order", "POST", "/_bulk", nd(ix("index", "k1"), b'{"z": 1, "text": "' + BOILER.encode() + b'", "a": {"y": 2, "b": 3}}'), ids=("k1",)),
    Case("unicode_escapes", "POST", "/_bulk", nd(ix("index", "u1"), b'{"title": "caf\\u00e9 \\ud83d\\ude00 \\/", "text": "Caf\\u00e9 news. ' + FOOT.encode() + b'"}'), ids=("u1",)),
    Case("unicode_raw_utf8", "POST", "/_bulk", nd(ix("index", "u2"), doc(f"Überschrift – 日本語. {FOOT}", title="é")), ids=("u2",)),
    Case("whitespace_inside", "POST", "/_bulk", nd(ix("index", "w1"), b'{ "text" :  "Tabs\\tand  spaces.  ' + FOOT.encode() + b'"  ,  "t2" : "a\\tb\\n c"   }'), ids=("w1",)),
    Case("duplicate_keys", "POST", "/_bulk", nd(ix("index", "d1"), b'{"text": "' + BOILER.encode() + b'", "text": "second"}'), ids=("d1",)),
    Case("duplicate_keys_nested", "POST", "/_bulk", nd(ix("index", "d2"), b'{"text": "' + BOILER.encode() + b'", "o": {"k": 1, "k": 2}}'), ids=("d2",)),
    Case("user_bloomspan_object", "POST", "/_bulk", nd(ix("index", "ub1"), b'{"text": "' + BOILER.encode() + b'", "bloomspan": {"owner": "me", "score": 1.50}}'), ids=("ub1",)),
    Case("user_bloomspan_not_object", "POST", "/_bulk", nd(ix("index", "ub2"), b'{"text": "' + BOILER.encode() + b'", "bloomspan": "mine"}'), ids=("ub2",), own_index=True),
    Case("text_object", "POST", "/_bulk", nd(ix("index", "t1"), {"text": {"inner": BOILER}}), ids=("t1",), own_index=True),
    Case("text_array", "POST", "/_bulk", nd(ix("index", "t2"), {"text": ["first", BOILER]}), ids=("t2",)),
    Case("text_null", "POST", "/_bulk", nd(ix("index", "t3"), {"text": None, "other": 1}), ids=("t3",)),
    Case("text_number", "POST", "/_bulk", nd(ix("index", "t4"), {"text": 5}), ids=("t4",)),
    Case("text_missing", "POST", "/_bulk", nd(ix("index", "t5"), {"title": BOILER}), ids=("t5",)),
    Case("phrase_outside_cleaned_field", "POST", "/_bulk", nd(ix("index", "t6"), doc(CLEAN, title=BOILER)), ids=("t6",)),
    Case("phrase_mixed_case", "POST", "/_bulk", nd(ix("index", "t7"), doc(f"News. {FOOT.upper()}")), ids=("t7",)),
    Case("empty_source_object", "POST", "/_bulk", nd(ix("index", "e1"), b"{}"), ids=("e1",)),
    Case("source_not_object", "POST", "/_bulk", nd(ix("index", "e2"), b"[1, 2]", ix("index", "e3"), doc(BOILER)), ids=("e2", "e3")),
    Case("malformed_action_line", "POST", "/_bulk", nd(ix("index", "m1"), doc(BOILER), b'{"index": {"_index": "@I@"', doc(BOILER)), ids=("m1",)),
    Case("malformed_source_line", "POST", "/_bulk", nd(ix("index", "m2"), b'{"text": "unterminated', ix("index", "m3"), doc(BOILER)), ids=("m2", "m3")),
    Case("truncated_last_source", "POST", "/_bulk", nd(ix("index", "m4"), doc(BOILER), ix("index", "m5")) + b'{"text": "' + BOILER.encode()[:20] + b"\n", ids=("m4", "m5")),
    Case("empty_lines_between_items", "POST", "/_bulk", b"\n\n" + nd(ix("index", "m6"), doc(BOILER)) + b"\n\n" + nd(ix("index", "m7"), doc(CLEAN)), ids=("m6", "m7")),
    Case("missing_final_newline", "POST", "/_bulk", nd(ix("index", "m8"), doc(BOILER))[:-1], ids=("m8",)),
    Case("crlf_line_endings", "POST", "/_bulk", nd(ix("index", "c1"), doc(BOILER), ix("index", "c2"), doc(CLEAN)).replace(b"\n", b"\r\n"), ids=("c1", "c2")),
    Case("utf8_bom_at_start", "POST", "/_bulk", b"\xef\xbb\xbf" + nd(ix("index", "bom1"), doc(BOILER)), ids=("bom1",)),
    Case("utf8_bom_on_source", "POST", "/_bulk", nd(ix("index", "bom2")) + b"\xef\xbb\xbf" + nd(doc(BOILER)), ids=("bom2",)),
    Case("invalid_utf8", "POST", "/_bulk", nd(ix("index", "iu1"), b'{"text": "bad \xff\xfe byte. ' + FOOT.encode() + b'"}', ix("index", "iu2"), doc(BOILER)), ids=("iu1", "iu2")),
    Case("lone_surrogate_other_field", "POST", "/_bulk", nd(ix("index", "s1"), b'{"title": "\\ud800", "text": "' + BOILER.encode() + b'"}'), ids=("s1",)),
    Case("lone_surrogate_in_text", "POST", "/_bulk", nd(ix("index", "s2"), b'{"text": "x \\udc00 ' + BOILER.encode() + b'"}', ix("index", "s3"), doc(BOILER)), ids=("s2", "s3")),
    Case("deep_nesting_100000", "POST", "/_bulk", nd(ix("index", "dn1"), b'{"text": "' + BOILER.encode() + b'", "deep": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", ix("index", "dn2"), doc(BOILER)), ids=("dn1", "dn2")),
    Case("deep_nesting_action_line", "POST", "/_bulk", nd(b"[" * 100_000 + b"]" * 100_000, doc(BOILER))),
    Case("index_is_a_number", "POST", "/_bulk", nd({"index": {"_index": 5, "_id": "x5", "require_alias": True}}, doc(BOILER), ix("index", "x6"), doc(BOILER)), ids=("x6",)),
    Case("id_is_a_number", "POST", "/_bulk", nd({"index": {"_index": "@I@", "_id": 7}}, doc(BOILER)), ids=("7",)),
    Case("id_special_characters", "PUT", "/@I@/_doc/a%2Fb%20c%3F%23", json.dumps(doc(BOILER)).encode(), JSON_CT, ids=("a%2Fb%20c%3F%23",)),
    Case("unknown_action", "POST", "/_bulk", nd({"upsert": {"_index": "@I@", "_id": "ua"}}, doc(BOILER))),
    Case("action_with_trailing_object", "POST", "/_bulk", nd(b'{"index": {"_index": "@I@", "_id": "tr1"}} {"delete": {}}', doc(BOILER)), ids=("tr1",)),
    Case("action_with_comment", "POST", "/_bulk", nd(b'{"index": {"_index": "@I@", "_id": "cm1"} /* a comment */}', doc(BOILER)), ids=("cm1",)),
    Case("auto_generated_ids", "POST", "/_bulk", nd(ix("index"), doc(BOILER), ix("create"), doc(CLEAN))),
    Case("update_doc", "POST", "/_bulk", nd(ix("update", "up1"), {"doc": {"text": BOILER, "n": 2}}), ids=("up1",),
         before=(("PUT", "/@I@/_doc/up1?refresh=true", json.dumps(doc(CLEAN, n=1)).encode()),)),
    Case("update_doc_as_upsert", "POST", "/_bulk", nd(ix("update", "up2"), {"doc": doc(BOILER), "doc_as_upsert": True}), ids=("up2",)),
    Case("update_upsert_script", "POST", "/_bulk", nd(ix("update", "up3"), {"script": {"source": "ctx._source.n = 1", "lang": "painless"}, "upsert": doc(BOILER, n=0)}), ids=("up3",)),
    Case("update_missing_document", "POST", "/_bulk", nd(ix("update", "up4"), {"doc": doc(BOILER)}), ids=("up4",)),
    Case("delete_items", "POST", "/_bulk", nd(ix("delete", "del1"), ix("delete", "del-missing")), ids=("del1",),
         before=(("PUT", "/@I@/_doc/del1?refresh=true", json.dumps(doc(BOILER)).encode()),)),
    Case("create_conflict", "POST", "/_bulk", nd(ix("create", "cc1"), doc(BOILER), ix("create", "cc1"), doc(CLEAN)), ids=("cc1",)),
    Case("routing", "POST", "/_bulk", nd(ix("index", "r1", routing="user-7"), doc(BOILER)), ids=("r1",)),
    Case("index_in_path", "POST", "/@I@/_bulk", nd({"index": {"_id": "p1"}}, doc(BOILER), {"create": {"_id": "p2"}}, doc(CLEAN)), ids=("p1", "p2")),
    Case("item_overrides_path_index", "POST", "/@J@/_bulk", nd(ix("index", "p3"), doc(BOILER), {"index": {"_id": "p4"}}, doc(BOILER)), ids=("p3",)),
    Case("filter_path", "POST", "/_bulk?filter_path=items.*.status,errors", nd(ix("index", "f1"), doc(BOILER)), ids=("f1",)),
    Case("refresh_true", "POST", "/_bulk?refresh=true", nd(ix("index", "rf1"), doc(BOILER)), ids=("rf1",)),
    Case("refresh_wait_for", "POST", "/_bulk?refresh=wait_for", nd(ix("index", "rf2"), doc(BOILER)), ids=("rf2",)),
    Case("pipeline", "POST", f"/_bulk?pipeline={PIPELINE}", nd(ix("index", "pl1"), doc(BOILER)), ids=("pl1",)),
    Case("gzip_body", "POST", "/_bulk", nd(ix("index", "gz1"), doc(BOILER), ix("index", "gz2"), doc(CLEAN)), ids=("gz1", "gz2"), gzip_body=True),
    Case("chunked_transfer", "POST", "/_bulk", nd(ix("index", "ch1"), doc(BOILER), ix("index", "ch2"), doc(CLEAN)), ids=("ch1", "ch2"), chunked=True),
    Case("many_items", "POST", "/_bulk", b"".join(nd(ix("index", f"many{i}"), doc(BOILER if i % 2 else CLEAN, i=i)) for i in range(500)), ids=("many0", "many1", "many499")),
    Case("huge_document_over_item_limit", "POST", "/_bulk", nd(ix("index", "big1"), doc(BIG_TEXT), ix("index", "big2"), doc(BOILER)), ids=("big1", "big2")),
    Case("empty_body", "POST", "/_bulk", b""),
    Case("only_blank_lines", "POST", "/_bulk", b"\n\n\n"),
    Case("no_index_anywhere", "POST", "/_bulk", nd({"index": {"_id": "ni1"}}, doc(BOILER))),
    Case("strict_mapping", "POST", "/_bulk", nd(ix("index", "st1"), doc(BOILER, n=1), ix("index", "st2"), doc(CLEAN, n=2)), ids=("st1", "st2"),
         mappings={"dynamic": "strict", "properties": {"text": {"type": "text"}, "n": {"type": "integer"}}}),
    Case("strict_mapping_single_doc", "PUT", "/@I@/_doc/st3", json.dumps(doc(BOILER, n=3)).encode(), JSON_CT, ids=("st3",),
         mappings={"dynamic": "strict", "properties": {"text": {"type": "text"}, "n": {"type": "integer"}}}),
    Case("dynamic_false_mapping", "POST", "/_bulk", nd(ix("index", "df1"), doc(BOILER, extra="x")), ids=("df1",),
         mappings={"dynamic": False, "properties": {"text": {"type": "text"}}}),
    Case("strict_with_bloomspan_mapped", "POST", "/_bulk", nd(ix("index", "sb1"), doc(BOILER)), ids=("sb1",),
         mappings={"dynamic": "strict", "properties": {"text": {"type": "text"}, "bloomspan": {"type": "object", "dynamic": True}}}),
    Case("keyword_price_mapping", "POST", "/_bulk?refresh=true", nd(ix("index", "kw1"), b'{"price": 1.10, "text": "' + BOILER.encode() + b'"}'), ids=("kw1",),
         mappings={"properties": {"price": {"type": "keyword"}}}),
    Case("single_put_doc", "PUT", "/@I@/_doc/sd1", json.dumps(doc(BOILER, n=1.10)).encode(), JSON_CT, ids=("sd1",)),
    Case("single_put_doc_raw_bytes", "PUT", "/@I@/_doc/sd2", b'{ "n" : 1E+2 , "text" : "' + BOILER.encode() + b'" }', JSON_CT, ids=("sd2",)),
    Case("single_post_doc_auto_id", "POST", "/@I@/_doc", json.dumps(doc(BOILER)).encode(), JSON_CT),
    Case("single_create", "PUT", "/@I@/_create/sc1", json.dumps(doc(BOILER)).encode(), JSON_CT, ids=("sc1",)),
    Case("single_create_conflict", "PUT", "/@I@/_create/sc2", json.dumps(doc(CLEAN)).encode(), JSON_CT, ids=("sc2",),
         before=(("PUT", "/@I@/_doc/sc2?refresh=true", json.dumps(doc(BOILER)).encode()),)),
    Case("single_post_create", "POST", "/@I@/_create/sc3", json.dumps(doc(BOILER)).encode(), JSON_CT, ids=("sc3",)),
    Case("single_update", "POST", "/@I@/_update/su1", json.dumps({"doc": doc(BOILER)}).encode(), JSON_CT, ids=("su1",),
         before=(("PUT", "/@I@/_doc/su1?refresh=true", json.dumps(doc(CLEAN, n=1)).encode()),)),
    Case("single_routing", "PUT", "/@I@/_doc/sr1?routing=user-9", json.dumps(doc(BOILER)).encode(), JSON_CT),
    Case("single_refresh_and_pipeline", "PUT", f"/@I@/_doc/sp1?refresh=true&pipeline={PIPELINE}", json.dumps(doc(BOILER)).encode(), JSON_CT, ids=("sp1",)),
    Case("single_invalid_json", "PUT", "/@I@/_doc/sj1", b'{"text": "unterminated', JSON_CT, ids=("sj1",)),
    Case("single_lone_surrogate", "PUT", "/@I@/_doc/sj2", b'{"text": "\\ud800 ' + BOILER.encode() + b'"}', JSON_CT, ids=("sj2",)),
    Case("single_delete", "DELETE", "/@I@/_doc/sdel1", None, {}, ids=("sdel1",),
         before=(("PUT", "/@I@/_doc/sdel1?refresh=true", json.dumps(doc(BOILER)).encode()),)),
    Case("single_gzip", "PUT", "/@I@/_doc/sg1", json.dumps(doc(BOILER)).encode(), JSON_CT, ids=("sg1",), gzip_body=True),
    Case("read_get_doc", "GET", "/@I@/_doc/rg1", None, {}, before=(("PUT", "/@I@/_doc/rg1?refresh=true", json.dumps(doc(BOILER)).encode()),)),
    Case("read_search_filter_path", "POST", "/@I@/_search?filter_path=hits.total", json.dumps({"query": {"ids": {"values": ["rg1"]}}}).encode(), JSON_CT),
    Case("read_missing_index", "GET", f"/{PREFIX}-absent-x/_search", None, {}),
]


# Documents the proxy forwards as the client sent them: updates are never cleaned, and a value
# it cannot handle (non-string text, a bloomspan value that is not an object, a lone surrogate,
# a numeric _id, an item over its size limit, an action line with a comment) goes through for
# the cluster to decide. Their sources must be the client's bytes, text included.
FORWARDED_AS_SENT = {"ub2", "t1", "t2", "s2", "7", "cm1", "up1", "up2", "up3", "up4", "big1", "sc2", "su1", "sj2"}


def _names(case: Case) -> dict[str, tuple[str, str]]:
    """Placeholder -> (direct name, proxy name) for one case."""
    first = f"{PREFIX}-{case.name.replace('_', '-')}" if (case.mappings or case.own_index) else f"{PREFIX}-main"
    return {"@I@": (f"{first}-direct", f"{first}-proxy"), "@J@": (f"{PREFIX}-alt-direct", f"{PREFIX}-alt-proxy")}


def _sub(data, names: dict, side: int):
    if data is None:
        return None
    for placeholder, pair in names.items():
        data = data.replace(placeholder.encode() if isinstance(data, bytes) else placeholder,
                            pair[side].encode() if isinstance(data, bytes) else pair[side])
    return data


def _normalise(reply: Reply, names: dict, side: int) -> str:
    text = reply.body.decode("utf-8", "replace")
    for placeholder, pair in names.items():
        text = text.replace(pair[side], placeholder)
    return text


def _request_ids(body: bytes | None) -> list:
    """The ``_id`` each bulk item of the request gave (None where it gave none)."""
    ids = []
    for line in (body or b"").split(b"\n"):
        try:
            action = json.loads(line)
            ((verb, meta),) = action.items()
        except Exception:
            continue
        if verb in ("index", "create", "update", "delete") and isinstance(meta, dict):
            ids.append(meta.get("_id"))
    return ids


def assert_same_answer(case: Case, direct: Reply, proxied: Reply, names: dict) -> list[tuple[str, str]]:
    """Compare status and answer; return ``(direct id, proxy id)`` of generated documents."""
    assert proxied.status == direct.status, (f"status {proxied.status} != {direct.status}\n direct: {direct.body[:500]!r}"
                                             f"\n proxy:  {proxied.body[:500]!r}")
    d = json.loads(_normalise(direct, names, 0)) if direct.json() is not None else None
    p = json.loads(_normalise(proxied, names, 1)) if proxied.json() is not None else None
    assert (d is None) == (p is None), f"JSON on one side only: {proxied.body[:300]!r}"
    generated = []
    if not isinstance(d, dict):
        assert d == p
        return generated
    if "error" in d:
        assert isinstance(p.get("error"), dict) and p["error"].get("type") == d["error"].get("type"), (d, p)
        return generated
    if "items" in d:
        assert p.get("errors") == d.get("errors") and len(p["items"]) == len(d["items"]), (d, p)
        given = _request_ids(_sub(case.body, names, 0)) if "filter_path" not in case.path else []
        for n, (di, pi) in enumerate(zip(d["items"], p["items"])):
            ((dv, dr),), ((pv, pr),) = di.items(), pi.items()
            assert pv == dv and pr.get("status") == dr.get("status") and pr.get("result") == dr.get("result"), (n, di, pi)
            assert (pr.get("error") or {}).get("type") == (dr.get("error") or {}).get("type"), (n, di, pi)
            if n < len(given) and given[n] is not None:
                assert pr.get("_id") == dr.get("_id"), (n, di, pi)
            elif dr.get("_id") and dr.get("status", 500) < 300:
                generated.append((dr["_id"], pr["_id"]))
        return generated
    for key in ("result", "found", "_index"):
        assert p.get(key) == d.get(key), (key, d, p)
    if case.ids == () and d.get("_id") and d.get("result") in ("created", "updated"):
        generated.append((d["_id"], p["_id"]))
    if "hits" in d:
        assert p["hits"].get("total") == d["hits"].get("total"), (d, p)
    return generated


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def suite(opensearch_url, os_client, tmp_path_factory):
    phrases = tmp_path_factory.mktemp("adv") / "phrases.jsonl"
    phrases.write_text(json.dumps({"text": PHRASE, "tokens": PHRASE.split(), "length": len(PHRASE.split()),
                                   "df": 50}) + "\n")
    os_client.ingest.put_pipeline(id=PIPELINE, body={"processors": [{"set": {"field": "piped", "value": True}}]})
    for name in (f"{PREFIX}-main", f"{PREFIX}-alt"):
        for side in ("direct", "proxy"):
            os_client.indices.create(index=f"{name}-{side}", body={"settings": {"number_of_shards": 1,
                                                                                 "number_of_replicas": 0}})
    common = dict(upstream_url=opensearch_url, clean_indices=(f"{PREFIX}-*proxy",), phrases_path=str(phrases),
                  template_index=TEMPLATE, lease_index=LEASE)
    forward = create_app(ServeConfig(**common))
    sidecar = create_app(ServeConfig(**common, forward_credentials=False))
    small = create_app(ServeConfig(**common, max_body_bytes=NEAR_LIMIT))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    down = create_app(ServeConfig(upstream_url=f"http://127.0.0.1:{closed}", max_body_bytes=NEAR_LIMIT))
    try:
        with serve_in_thread(forward) as (forward_url, _), serve_in_thread(sidecar) as (sidecar_url, _), \
                serve_in_thread(small) as (small_url, _), serve_in_thread(down) as (down_url, _):
            yield {"direct": opensearch_url, "proxy": forward_url, "sidecar": sidecar_url, "small": small_url,
                   "down": down_url}
    finally:
        os_client.indices.delete(index=f"{PREFIX}-*", ignore_unavailable=True, expand_wildcards="all")
        os_client.ingest.delete_pipeline(id=PIPELINE, ignore=[404])


def _stored(base: str, index: str, doc_id: str, routing: str | None) -> str | None:
    path = f"/{index}/_doc/{doc_id}" + (f"?routing={routing}" if routing else "")
    return raw_source(send(base, "GET", path))


# ----------------------------------------------------------------------------- comparison cases


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_proxy_answers_and_stores_like_the_node(suite, os_client, case):
    names = _names(case)
    if case.mappings:
        for side in (0, 1):
            os_client.indices.create(index=names["@I@"][side], body={
                "settings": {"number_of_shards": 1, "number_of_replicas": 0}, "mappings": case.mappings})
    for method, path, body in case.before:
        for side in (0, 1):
            reply = send(suite["direct"], method, _sub(path, names, side), _sub(body, names, side), JSON_CT)
            assert reply.status < 300, reply.body
    replies = []
    for side, base in ((0, suite["direct"]), (1, suite["proxy"])):
        replies.append(send(base, case.method, _sub(case.path, names, side), _sub(case.body, names, side),
                            case.headers, chunked=case.chunked, gzip_body=case.gzip_body))
    generated = assert_same_answer(case, replies[0], replies[1], names)
    for side in (0, 1):
        for placeholder in ("@I@", "@J@"):
            send(suite["direct"], "POST", f"/{names[placeholder][side]}/_refresh")
    routing = "user-7" if case.name == "routing" else None
    pairs = [(i, i) for i in case.ids] + generated
    for direct_id, proxy_id in pairs:
        assert_same_source(_stored(suite["direct"], names["@I@"][0], direct_id, routing),
                           _stored(suite["direct"], names["@I@"][1], proxy_id, routing), f"{case.name}/{direct_id}",
                           cleaned_by_proxy=direct_id not in FORWARDED_AS_SENT)
    if case.name == "keyword_price_mapping":
        query = json.dumps({"query": {"term": {"price": "1.10"}}}).encode()
        counts = [send(suite["direct"], "POST", f"/{names['@I@'][side]}/_count", query, JSON_CT).json()["count"]
                  for side in (0, 1)]
        assert counts == [1, 1], counts


# ----------------------------------------------------------------------------- proxy-only cases


def _refused(reply: Reply, *words: str) -> dict:
    assert reply.status == 403, reply.body
    assert reply.headers["content-type"].startswith("application/json")
    error = reply.json()["error"]
    assert error["type"] == "bloomspan_forbidden"
    for word in words:
        assert word in error["reason"], error["reason"]
    return error


def _exists(base: str, path: str) -> bool:
    return send(base, "HEAD", path).status == 200


def test_a_bulk_writing_the_lease_index_is_refused_whole(suite):
    index = f"{PREFIX}-main-proxy"
    body = nd({"index": {"_index": index, "_id": "lease-victim"}}, doc(BOILER),
              {"index": {"_index": LEASE, "_id": "lease"}}, {"holder": "me"})
    _refused(send(suite["proxy"], "POST", "/_bulk?refresh=true", body, NDJSON), "item 2", LEASE)
    assert not _exists(suite["direct"], f"/{index}/_doc/lease-victim"), "the first item was forwarded"
    assert not _exists(suite["direct"], f"/{LEASE}")


@pytest.mark.parametrize("method,path,body", [
    ("PUT", f"/{TEMPLATE}-20260101t000000000-abcd", b"{}"),
    ("PUT", f"/{TEMPLATE}-x/_doc/1", b'{"kind": "phrase"}'),
    ("POST", "/_aliases", json.dumps({"actions": [{"add": {"index": f"{PREFIX}-main-proxy", "alias": TEMPLATE}}]}).encode()),
    ("DELETE", f"/{PREFIX}-*", None),
    ("POST", f"/{PREFIX}-main-proxy/_bulk", nd({"create": {"_index": f"{TEMPLATE}-y", "_id": "p"}}, {"kind": "phrase"})),
])
def test_template_and_lease_writes_are_refused_in_every_mode(suite, method, path, body):
    for mode in ("proxy", "sidecar"):
        _refused(send(suite[mode], method, path, body, JSON_CT))
    assert not _exists(suite["direct"], f"/{TEMPLATE}")
    assert _exists(suite["direct"], f"/{PREFIX}-main-proxy"), "a wildcard delete reached the cluster"


@pytest.mark.parametrize("method,path,body", [
    ("DELETE", f"/{PREFIX}-main-proxy", None),
    ("PUT", f"/{PREFIX}-new-proxy", b"{}"),
    # An empty update: harmless to the shared node even if it were relayed (the node answers 400).
    ("PUT", "/_cluster/settings", json.dumps({"persistent": {}}).encode()),
    ("POST", "/_aliases", json.dumps({"actions": [{"add": {"index": f"{PREFIX}-main-proxy", "alias": f"{PREFIX}-al"}}]}).encode()),
    ("PUT", f"/{PREFIX}-main-proxy/_mapping", json.dumps({"properties": {"x": {"type": "keyword"}}}).encode()),
    ("PUT", f"/{PREFIX}-main-proxy/_settings", json.dumps({"index": {"refresh_interval": "5s"}}).encode()),
    ("PUT", f"/_scripts/{PREFIX}-script", json.dumps({"script": {"lang": "painless", "source": "1"}}).encode()),
    ("PUT", f"/{PREFIX}-main-direct/_doc/lp1", json.dumps(doc(BOILER)).encode()),
    ("POST", f"/{PREFIX}-main-proxy/_delete_by_query", json.dumps({"query": {"match_all": {}}}).encode()),
])
def test_sidecar_credentials_refuse_everything_but_reads_and_clean_writes(suite, method, path, body):
    _refused(send(suite["sidecar"], method, path, body, JSON_CT), "--no-forward-credentials")
    assert _exists(suite["direct"], f"/{PREFIX}-main-proxy")
    assert not _exists(suite["direct"], f"/{PREFIX}-new-proxy")
    assert not _exists(suite["direct"], f"/{PREFIX}-main-direct/_doc/lp1")


def test_sidecar_credentials_relay_reads_and_clean_document_writes(suite):
    index = f"{PREFIX}-main-proxy"
    ok = send(suite["sidecar"], "POST", "/_bulk?refresh=true", nd({"index": {"_index": index, "_id": "lp-ok"}}, doc(BOILER)),
              NDJSON)
    assert ok.status == 200 and not ok.json()["errors"], ok.body
    outside = nd({"index": {"_index": index, "_id": "lp-no"}}, doc(BOILER),
                 {"index": {"_index": f"{PREFIX}-main-direct", "_id": "lp-no"}}, doc(BOILER))
    _refused(send(suite["sidecar"], "POST", "/_bulk", outside, NDJSON), "item 2")
    assert not _exists(suite["direct"], f"/{index}/_doc/lp-no")
    found = send(suite["sidecar"], "POST", f"/{index}/_search", json.dumps({"query": {"ids": {"values": ["lp-ok"]}}}).encode(),
                 JSON_CT)
    assert found.status == 200 and found.json()["hits"]["total"]["value"] == 1
    assert send(suite["sidecar"], "DELETE", f"/{index}/_doc/lp-ok").status == 200


def test_an_outage_is_a_retryable_json_error(suite):
    for method, path, body in (("POST", "/_bulk", nd({"index": {"_index": "x-proxy"}}, doc(BOILER))),
                               ("GET", "/_cluster/health", None), ("PUT", "/x/_doc/1", b"{}")):
        reply = send(suite["down"], method, path, body, NDJSON)
        assert reply.status in (502, 503) and reply.headers["content-type"].startswith("application/json"), reply.body
        assert reply.json()["status"] == reply.status and reply.json()["error"]["type"].startswith("bloomspan_upstream")
    metrics = send(suite["down"], "GET", "/metrics").body.decode()
    assert 'bloomspan_proxy_upstream_errors_total{status="503"} 3.0' in metrics
    # The proxies in front of the live node are unaffected.
    assert send(suite["proxy"], "GET", "/").status == 200


def test_a_body_over_the_clusters_limit_is_413_like_the_node(suite):
    limit = 100 * 1024 * 1024
    assert send_declared_length_only(suite["direct"], "/_bulk", limit + 1) == 413
    assert send_declared_length_only(suite["proxy"], "/_bulk", limit + 1) == 413


def test_bodies_at_and_over_a_small_limit(suite):
    index = f"{PREFIX}-main"
    head = nd({"index": {"_index": f"{index}-proxy", "_id": "near1"}})
    filler = NEAR_LIMIT - len(head) - len(b'{"text": "", "pad": ""}\n') - len(BOILER.encode())
    source = json.dumps({"text": BOILER, "pad": "p" * filler}).encode() + b"\n"
    body = head + source
    assert len(body) == NEAR_LIMIT  # exactly at the limit: relayed
    direct = send(suite["direct"], "POST", "/_bulk?refresh=true", body.replace(b"-proxy", b"-direct"), NDJSON)
    proxied = send(suite["small"], "POST", "/_bulk?refresh=true", body, NDJSON)
    assert direct.status == proxied.status == 200 and not proxied.json()["errors"]
    assert_same_source(_stored(suite["direct"], f"{index}-direct", "near1", None),
                       _stored(suite["direct"], f"{index}-proxy", "near1", None), "near1")
    over = send(suite["small"], "POST", "/_bulk", body + b"\n", NDJSON)  # one byte over
    assert over.status == 413 and over.json()["error"]["type"] == "content_too_long_exception"


def test_uncleaned_documents_are_counted_by_reason(suite):
    """After the comparison cases: what went through uncleaned shows in /metrics per reason."""
    index = f"{PREFIX}-main-proxy"
    send(suite["proxy"], "POST", "/_bulk", nd({"index": {"_index": index, "_id": "why1"}}, b'{"text": "a", "text": "b"}'),
         NDJSON)
    metrics = send(suite["proxy"], "GET", "/metrics").body.decode()
    assert "bloomspan_proxy_documents_uncleaned_total{reason=" in metrics, metrics[-2000:]


# ----------------------------------------------------------------------------- malformed HTTP and bodies


def _raw_exchange(base: str, *parts: bytes, pause: float = 0.2) -> bytes:
    """What a server answers to ``parts`` sent on one raw socket (a pause between parts, so the
    server sees the head before the body), read until it closes the connection."""
    import time

    host = urlsplit(base)
    with socket.create_connection((host.hostname, host.port), timeout=20) as s:
        for n, part in enumerate(parts):
            if n:
                time.sleep(pause)
            s.sendall(part)
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return out


def _json_400(raw: bytes) -> dict:
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.split(b" ", 2)[1] == b"400", raw[:300]
    assert b"content-type: application/json" in head.lower(), raw[:300]
    answer = json.loads(body)
    assert answer["status"] == 400 and answer["error"]["root_cause"][0]["type"] == answer["error"]["type"]
    return answer


def _one_warning_no_traceback(caplog, event: str) -> None:
    lines = [r for r in caplog.records if r.levelno >= 30]
    assert [r.getMessage().split(" ", 2)[1] for r in lines if r.name.startswith("bloomspan")] == [event], \
        [r.getMessage() for r in lines]
    assert not any(r.exc_info for r in caplog.records), [r.getMessage() for r in caplog.records if r.exc_info]
    assert not any(r.name == "aiohttp.server" for r in lines), [r.getMessage() for r in lines]


SECRET = "never-echo-this-body"
GZIP_CASES = {
    "plain_body_labelled_gzip": nd({"index": {"_index": f"{PREFIX}-main-proxy", "_id": "gzp"}}, doc(SECRET)),
    # A gzip header, then bytes that are not a deflate stream.
    "corrupt_gzip": gzip.compress(nd({"index": {"_index": f"{PREFIX}-main-proxy", "_id": "gzc"}}, doc(SECRET)))[:12]
    + b"\xff" * 40,
}


@pytest.mark.parametrize("name", list(GZIP_CASES))
def test_a_body_that_is_not_gzip_is_a_json_400_in_one_log_line(suite, caplog, name):
    body = GZIP_CASES[name]
    caplog.set_level("WARNING")
    reply = send(suite["proxy"], "POST", "/_bulk?refresh=true", body, {**NDJSON, "Content-Encoding": "gzip"})
    assert reply.status == 400 and reply.headers["content-type"].startswith("application/json"), reply.body
    error = reply.json()["error"]
    assert error["type"] == "parse_exception" and "Content-Encoding" in error["reason"], error
    assert SECRET.encode() not in reply.body
    _one_warning_no_traceback(caplog, "unreadable_body")
    assert not _exists(suite["direct"], f"/{PREFIX}-main-proxy/_doc/gzp")
    assert not _exists(suite["direct"], f"/{PREFIX}-main-proxy/_doc/gzc")
    # The proxy goes on serving, on a new connection.
    assert send(suite["proxy"], "GET", "/").status == 200


_BULK_HEAD = b"POST /_bulk HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\n"
_SOURCE = nd({"index": {"_index": f"{PREFIX}-main-proxy", "_id": "raw1"}}, doc(SECRET))
RAW_CASES = {
    # The parts sent on one socket. The node answers each with a JSON 400 too.
    "bad_chunk_size": (_BULK_HEAD + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n" + _SOURCE + b"\r\n0\r\n\r\n",),
    # The head first: the proxy is reading the body when the bad chunk header comes.
    "bad_chunk_size_after_the_head": (_BULK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n",
                                      b"%x\r\n" % len(_SOURCE) + _SOURCE + b"\r\nzz\r\n" + _SOURCE + b"\r\n0\r\n\r\n"),
    # HTTP/1.0 without Content-Length has no body: the document is data after the request.
    "http10_post_without_content_length": (_BULK_HEAD.replace(b"HTTP/1.1", b"HTTP/1.0") + b"\r\n" + _SOURCE,),
}


@pytest.mark.parametrize("name", list(RAW_CASES))
def test_malformed_http_is_a_json_400_that_never_echoes_the_request(suite, caplog, name):
    parts = RAW_CASES[name]
    caplog.set_level("WARNING")
    raw = _raw_exchange(suite["proxy"], *parts)
    answer = _json_400(raw)
    assert SECRET.encode() not in raw and b"zz" not in raw.partition(b"\r\n\r\n")[2], raw
    assert answer["error"]["type"] == "parse_exception", answer
    _one_warning_no_traceback(caplog, "unreadable_body" if name.endswith("after_the_head") else "bad_http_request")
    assert _raw_exchange(suite["direct"], *parts).split(b" ", 2)[1] == b"400"  # the node's own status
    assert not _exists(suite["direct"], f"/{PREFIX}-main-proxy/_doc/raw1")


# ----------------------------------------------------------------------------- every method, aliases


def _stat(base: str, index: str, metric: str) -> int:
    stats = send(base, "GET", f"/{index}/_stats/{metric}").json()["_all"]["primaries"][metric]
    return stats.get("external_total", stats["total"])


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_refresh_and_flush_follow_one_rule_whatever_the_method(suite, method):
    other, clean = f"{PREFIX}-main-direct", f"{PREFIX}-main-proxy"
    refreshes, flushes = _stat(suite["direct"], other, "refresh"), _stat(suite["direct"], other, "flush")
    for path in ("/_refresh", "/_flush", f"/{other}/_refresh", f"/{other}/_flush?force=true", f"/{clean}/_flush"):
        _refused(send(suite["sidecar"], method, path), "--no-forward-credentials")
    assert (_stat(suite["direct"], other, "refresh"), _stat(suite["direct"], other, "flush")) == (refreshes, flushes)
    # A refresh of a clean index is a document write's companion: relayed, answered as the node answers.
    direct, proxied = send(suite["direct"], method, f"/{clean}/_refresh"), send(suite["sidecar"], method, f"/{clean}/_refresh")
    assert proxied.status == direct.status == 200 and proxied.json()["_shards"] == direct.json()["_shards"]
    for mode in ("proxy", "sidecar"):  # the template index is bloomspan's, in every mode
        _refused(send(suite[mode], method, f"/{TEMPLATE}-x/_refresh"), "never writes")


def test_an_alias_matching_clean_index_is_checked_by_what_it_points_at(suite, os_client):
    to_lease, elsewhere = f"{PREFIX}-to-lease-proxy", f"{PREFIX}-to-direct-proxy"  # both match --clean-index
    os_client.indices.create(index=LEASE, body={"settings": {"number_of_shards": 1, "number_of_replicas": 0}})
    os_client.indices.put_alias(index=LEASE, name=to_lease)
    os_client.indices.put_alias(index=f"{PREFIX}-alt-direct", name=elsewhere)
    try:
        for mode in ("proxy", "sidecar"):
            _refused(send(suite[mode], "PUT", f"/{to_lease}/_doc/taken?refresh=true", b'{"holder": "me"}', JSON_CT),
                     LEASE, to_lease)
            _refused(send(suite[mode], "POST", "/_bulk?refresh=true",
                          nd({"index": {"_index": to_lease, "_id": "taken"}}, {"holder": "me"}), NDJSON), "item 1", LEASE)
        assert os_client.count(index=LEASE)["count"] == 0
        # An alias to an index outside --clean-index: not relayed with the sidecar's credentials;
        # with the client's own, the cluster decides and the proxy answers what the node answers.
        body = json.dumps(doc(CLEAN)).encode()
        _refused(send(suite["sidecar"], "PUT", f"/{elsewhere}/_doc/al1", body, JSON_CT), "--no-forward-credentials")
        assert not _exists(suite["direct"], f"/{PREFIX}-alt-direct/_doc/al1")
        proxied = send(suite["proxy"], "PUT", f"/{elsewhere}/_doc/al2", body, JSON_CT)
        direct = send(suite["direct"], "PUT", f"/{elsewhere}/_doc/al3", body, JSON_CT)
        assert proxied.status == direct.status == 201 and proxied.json()["_index"] == direct.json()["_index"]
    finally:
        os_client.indices.delete(index=LEASE, ignore_unavailable=True)
        os_client.indices.delete_alias(index=f"{PREFIX}-alt-direct", name=elsewhere, ignore=[404])


def test_a_data_stream_matching_clean_index_takes_writes_like_the_node(suite, os_client):
    template = f"{PREFIX}-ds-template"
    os_client.indices.put_index_template(name=template, body={
        "index_patterns": [f"{PREFIX}-ds-*"], "data_stream": {}, "priority": 500,
        "template": {"settings": {"number_of_shards": 1, "number_of_replicas": 0}}})
    try:
        replies = []
        for base, stream in ((suite["direct"], f"{PREFIX}-ds-direct"), (suite["sidecar"], f"{PREFIX}-ds-proxy")):
            body = nd({"create": {"_index": stream}}, {"@timestamp": "2026-12-01T00:00:00Z", "text": BOILER})
            replies.append(send(base, "POST", "/_bulk?refresh=true", body, NDJSON))
        direct, proxied = replies
        assert proxied.status == direct.status == 200, proxied.body
        assert [i["create"]["status"] for i in proxied.json()["items"]] == [i["create"]["status"] for i in direct.json()["items"]] == [201]
    finally:
        for stream in (f"{PREFIX}-ds-direct", f"{PREFIX}-ds-proxy"):
            send(suite["direct"], "DELETE", f"/_data_stream/{stream}")
        os_client.indices.delete_index_template(name=template, ignore=[404])
