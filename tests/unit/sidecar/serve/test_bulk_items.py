"""The one reading of a bulk body equals, item for item, the two readings it replaced.

Before :mod:`bloomspan.sidecar.serve.bulk_items`, the access rules and the rewrite each walked
the body with their own reader. Those walks are kept here, plain and line by line, as the
reference: on bodies drawn from every kind of line the node can meet (BOMs, comments, CRLF,
Unicode whitespace, NaN, duplicate keys, unknown verbs, garbage, blank and form-feed lines),
the single parse must report the same items the same way.
"""
from __future__ import annotations

import json

from hypothesis import example, given, settings, strategies as st

from bloomspan.sidecar.serve import bulk_items
from bloomspan.sidecar.serve.bulk_items import BULK_VERBS, Pairs, load_lenient, parse_bulk

# ----------------------------------------------------------------------------- references


def access_reference(body: bytes, default_index):
    """The access rules' walk: ``(number, line, verbs, indices, parsed)`` per reported line."""
    out, pos, line, number, expect_source, lost = [], 0, 0, 0, False, False
    while pos < len(body):
        end = body.find(b"\n", pos)
        end = len(body) if end < 0 else end
        raw = body[pos:end]
        pos = end + 1
        line += 1
        if expect_source:
            expect_source = False
            continue
        if not raw.strip():
            continue
        try:
            action = load_lenient(raw)
        except (ValueError, UnicodeDecodeError):
            action = None
        if not isinstance(action, Pairs) or not action or not all(isinstance(m, Pairs) for _, m in action):
            if not lost:
                number += 1
                out.append((number, line, (), (), False))
                lost = True
            elif action is None:
                out.append((number, line, (), (), False))
            continue
        verbs = tuple(v for v, _ in action)
        if lost and not set(verbs) <= set(BULK_VERBS):
            continue
        indices = tuple(value for _, meta in action for key, value in meta if key == "_index")
        number += 1
        out.append((number, line, verbs, indices or ((default_index,) if default_index else ()), True))
        expect_source = not lost and verbs[0] in ("index", "create", "update")
    return out


_STRICT = json.JSONDecoder(parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))


def rewrite_reference(body: bytes, default_index):
    """The rewrite's walk: ``(items, stop reason)``, an item being ``(action span, source span,
    verb, _id, index)``."""
    spans, pos = [], 0
    while pos < len(body):
        end = body.find(b"\n", pos)
        end = len(body) if end < 0 else end
        spans.append((pos, end))
        pos = end + 1
    items, it = [], iter(spans)
    for span in it:
        raw = body[span[0]:span[1]]
        if not raw.strip(b" \t\r"):
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return items, "invalid_utf8"
        start = 1 if text.startswith("\ufeff") else 0
        start = len(text) - len(text[start:].lstrip(" \t\n\r"))
        try:
            action = _STRICT.scan_once(text, start)[0]
        except (StopIteration, ValueError, RecursionError):
            return items, "invalid_action"
        if not isinstance(action, dict) or len(action) != 1:
            return items, "invalid_action"
        ((verb, meta),) = action.items()
        if verb not in BULK_VERBS:
            return items, "unsupported_action"
        if not isinstance(meta, dict):
            return items, "invalid_action"
        source = None if verb == "delete" else next(it, None)
        items.append((span, source, verb, meta.get("_id"), meta.get("_index", default_index)))
    return items, None


# ----------------------------------------------------------------------------- bodies

ACTION_LINES = [
    b'{"index":{"_index":"crawl-1","_id":"a"}}', b'{"create":{"_index":"crawl-2"}}', b'{"index":{}}',
    b'{"update":{"_index":"crawl-1","_id":"u"}}', b'{"delete":{"_index":"crawl-1","_id":"d"}}',
    b'{"index":{"_index":"crawl-1"}} trailing', b'\xef\xbb\xbf{"index":{"_index":"crawl-1"}}',
    b'{"index":{"_index":"crawl-1" /* c */}}', b'// comment\n', b'{"index":{"_index":"a"},"index":{"_index":"b"}}',
    b'{"index":{"_index":"a","_index":"tpl"}}', b'{"index":{"_index":NaN}}', b'\xc2\xa0{"index":{}}',
    b'\x0c', b'{"foo":{}}', b'{"index":5}', b"null", b"[1]", b"{}", b"garbage", b"\xff\xfe", b"", b"  \t\r",
    b'{"index":{"_index":5,"_id":7}}', b'{"index":{"_index":["a"],"_id":{"x":1}}}', b"[" * 3000,
    b'  {"create":{"_index":"crawl-3"}}\r',
]
SOURCE_LINES = [b'{"text":"hello"}', b'{"text":"x"}\r', b"", b'{"index":{"_index":"crawl-9"}}', b"not json"]


@st.composite
def bodies(draw) -> bytes:
    lines = draw(st.lists(st.one_of(st.sampled_from(ACTION_LINES), st.sampled_from(SOURCE_LINES)), max_size=14))
    body = b"\n".join(lines)
    return body + b"\n" if draw(st.booleans()) else body


def _access_view(parsed):
    return [(i.number, i.line, i.verbs, i.indices, i.parsed) for i in parsed.access_items()]


def _rewrite_view(parsed):
    return [(i.action_span, i.source_span, i.verb, i.doc_id, i.index) for i in parsed.rewrite_items()]


@settings(max_examples=400)
@given(bodies(), st.sampled_from([None, "dflt"]))
@example(b'\xef\xbb\xbf{"index":{"_index":"crawl-1"}}\n{"index":{"_index":"lease"}}\n{"x":1}', None)
@example(b'{"index":{}}\n{"text":"a"}\n\x0c\n{"delete":{"_index":"b"}}', "dflt")
@example(b'garbage\nnull\n{"index":{"_index":"x"}}\n{"foo":{}}', None)
def test_one_parse_reads_what_the_access_walk_and_the_rewrite_walk_read(body, default_index):
    parsed = parse_bulk(body, default_index)
    assert _access_view(parsed) == access_reference(body, default_index)
    items, stop = rewrite_reference(body, default_index)
    assert _rewrite_view(parsed) == items
    assert parsed.stop_reason == stop


def test_every_action_line_is_parsed_once(monkeypatch):
    calls = []
    real = bulk_items._read_action_line
    monkeypatch.setattr(bulk_items, "_read_action_line", lambda raw: calls.append(raw) or real(raw))
    body = b"".join(b'{"index":{"_index":"crawl-1","_id":"%d"}}\n{"text":"page %d"}\n' % (n, n) for n in range(50))
    parsed = parse_bulk(body, None)
    assert len(calls) == 50 and len(parsed) == 50  # sources are never read as actions
    assert all(item.access and item.verb == "index" for item in parsed)


def test_a_bytearray_body_reads_as_its_bytes():
    body = b'{"index":{"_index":"crawl-1"}}\n{"text":"a"}\n{"delete":{"_id":"1"}}\n'
    assert _rewrite_view(parse_bulk(bytearray(body), "x")) == _rewrite_view(parse_bulk(body, "x"))
    assert _access_view(parse_bulk(bytearray(body), "x")) == _access_view(parse_bulk(body, "x"))
