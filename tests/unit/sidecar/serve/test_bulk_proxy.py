"""The proxy's body rewriting: only index/create items for configured indices are cleaned,
everything else is forwarded byte for byte, and no document is ever dropped."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
from bloomspan.ingest.records.phrase_set import PhraseSet
from bloomspan.sidecar.serve.bulk_proxy import IndexPatterns, ProxyStats, rewrite_bulk, rewrite_single
from tests.support.json_render import JSON_VALUES, json_object, json_string, member_lists, only_changed_between

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
    actions_in = [json.loads(line) for line in body.split(b"\n") if line and ('"_index"' in line.decode())]
    actions_out = [json.loads(line) for line in out.split(b"\n") if line and ('"_index"' in line.decode())]
    assert actions_in == actions_out
    assert out.count(b"\n") == body.count(b"\n")


# -- byte-exact splicing: every byte the cleaner does not own reaches the cluster as sent ----

DIRTY = "Great shoes. All rights reserved by ACME Corporation."


def _cleaner_for(mode="strip", **cfg):
    ps = PhraseSet.from_records([{"tokens": FOOTER.split()}, {"tokens": ["accept", "all", "cookies", "now"]}])
    return Cleaner(ps, CleanerConfig(fields=("text",), mode=mode, skip_missing=True, id_field=None, **cfg))


_CLEANERS: dict = {}


def cached_cleaner(mode="strip", **cfg):
    key = (mode, tuple(sorted(cfg.items())))
    if key not in _CLEANERS:
        _CLEANERS[key] = _cleaner_for(mode, **cfg)
    return _CLEANERS[key]


def _bulk(*pairs: tuple[bytes, bytes]) -> bytes:
    return b"".join(a + b"\n" + s + b"\n" for a, s in pairs)


ACTION = b'{"index":{"_index":"crawl-1"}}'
CLEAN_ITEM = (ACTION, json.dumps({"text": DIRTY}).encode())


def _lines_of(out: bytes) -> list[bytes]:
    return out.split(b"\n")


def test_number_spellings_escapes_and_spacing_survive_cleaning(cleaner):
    # Re-serialising stored "1.10" as 1.1 and "1E+2" as 100.0: a keyword query for "1.10" found nothing.
    source = ('{ "price": 1.10, "n" : 1E+2, "neg": -0, "t": "caf\\u00e9\\/x",\t"text": "' + DIRTY + '" }').encode()
    out, stats = rewrite_bulk(_bulk((ACTION, source)), cleaner, PATTERNS)
    forwarded = _lines_of(out)[1]
    assert forwarded.startswith(b'{ "price": 1.10, "n" : 1E+2, "neg": -0, "t": "caf\\u00e9\\/x",\t"text": "Great shoes."')
    assert forwarded.endswith(b' }') and stats.cleaned == 1
    assert json.loads(forwarded)["bloomspan"]["boilerplate_ratio"] > 0


def test_a_page_with_nothing_to_clean_keeps_its_text_bytes():
    # With fingerprints (or chunks) every valid page comes back changed from the cleaner, so the
    # old proxy re-serialised even clean pages; now only the added metadata is new.
    source = b'{"text": "Caf\\u00e9 menu,  fresh  daily.", "price": 1.10}'
    out, stats = rewrite_bulk(_bulk((ACTION, source)), cached_cleaner(fingerprint=True), PATTERNS)
    forwarded = _lines_of(out)[1]
    assert forwarded.startswith(b'{"text": "Caf\\u00e9 menu,  fresh  daily.", "price": 1.10,"bloomspan":{')
    assert "fingerprint" in json.loads(forwarded)["bloomspan"] and stats.cleaned == 1


def test_duplicate_keys_go_through_as_sent(cleaner):
    # json.loads kept the last "text" and the proxy merged the keys; the cluster rejects duplicates itself.
    items = [(ACTION, b'{"text": "a", "text": "%s"}' % DIRTY.encode()),
             (ACTION, b'{"text": "%s", "bloomspan": {"x": 1, "x": 2}}' % DIRTY.encode()),
             CLEAN_ITEM]
    out, stats = rewrite_bulk(_bulk(*items), cleaner, PATTERNS)
    lines = _lines_of(out)
    assert lines[1] == items[0][1] and lines[3] == items[1][1]
    assert b"ACME" not in lines[5] and stats.uncleaned_by_reason == {"duplicate_keys": 2} and stats.cleaned == 1


def test_users_own_bloomspan_keys_are_kept(cleaner):
    source = b'{"text": "%s", "bloomspan": {"crawl_batch": 7, "boilerplate_ratio": 0.5}}' % DIRTY.encode()
    out, _ = rewrite_bulk(_bulk((ACTION, source)), cleaner, PATTERNS)
    meta = json.loads(_lines_of(out)[1])["bloomspan"]
    assert meta["crawl_batch"] == 7 and meta["boilerplate_ratio"] != 0.5
    assert b'"bloomspan": {"crawl_batch": 7, "boilerplate_ratio": ' in _lines_of(out)[1]


def test_a_bloomspan_value_that_is_not_an_object_goes_through_as_sent(cleaner):
    source = b'{"text": "%s", "bloomspan": "users own"}' % DIRTY.encode()
    out, stats = rewrite_bulk(_bulk((ACTION, source)), cleaner, PATTERNS)
    assert _lines_of(out)[1] == source and stats.uncleaned_by_reason == {"field_conflict": 1}


@pytest.mark.parametrize("poison, reason", [
    ((b'{"index":{"_index":5}}', b'{"text": "x"}'), "non_string_index"),
    ((b'{"index":{"_index":"crawl-1","_id":7}}', b'{"text": "x"}'), "non_string_id"),
    ((ACTION, b'{"text": "%s", "other": "\\ud800"}' % DIRTY.encode()), None),  # cleaned: the surrogate is not ours
    ((ACTION, b'{"text": "lone \\udc00 %s"}' % DIRTY.encode()), "invalid_text"),
    ((ACTION, b'{"a":' * 100_000 + b"1" + b"}" * 100_000), "too_deep"),
    ((ACTION, b'{"text": "\xff\xfe"}'), "invalid_utf8"),
    ((ACTION, b'{"text": NaN}'), "invalid_json"),
    ((ACTION, b'{"text": "a"} {"text": "b"}'), "invalid_json"),
    ((ACTION, b''), "invalid_json"),
    ((ACTION, b'["text"]'), "not_an_object"),
    ((ACTION, b'{"text": {"nested": "x"}}'), "field_not_text"),
])
def test_one_poisoned_item_among_many_leaves_the_others_cleaned(cleaner, poison, reason):
    # Each of these made the whole request fail with a 500, or was mangled; the cluster alone fails one item.
    items = [CLEAN_ITEM] * 3 + [poison] + [CLEAN_ITEM] * 3
    out, stats = rewrite_bulk(_bulk(*items), cleaner, PATTERNS)
    lines = _lines_of(out)
    assert len(lines) == len(items) * 2 + 1 and lines[6] == poison[0]
    for k in (0, 1, 2, 4, 5, 6):
        assert lines[2 * k] == ACTION and json.loads(lines[2 * k + 1])["text"] == "Great shoes."
    if reason is None:
        assert stats.cleaned == 7 and b'"other": "\\ud800"' in lines[7]
    else:
        assert lines[7] == poison[1] and stats.cleaned == 6 and stats.uncleaned_by_reason == {reason: 1}
        assert stats.passed_through + stats.errors == 1


def test_an_item_over_the_size_limit_goes_through(cleaner):
    big = (ACTION, json.dumps({"text": DIRTY + " padding" * 200}).encode())
    out, stats = rewrite_bulk(_bulk(big, CLEAN_ITEM), cleaner, PATTERNS, max_item_bytes=1000)
    assert _lines_of(out)[1] == big[1] and b"ACME" not in _lines_of(out)[3]
    assert stats.uncleaned_by_reason == {"too_large": 1}
    same, stats, _ = rewrite_single(big[1], cleaner, "crawl-1", PATTERNS, max_item_bytes=1000)
    assert same is big[1] and stats.uncleaned_by_reason == {"too_large": 1}


def test_unsupported_action_forwards_the_rest_verbatim(cleaner):
    # OpenSearch rejects the whole request for it; which lines belong to it cannot be known.
    body = _bulk(CLEAN_ITEM, (b'{"upsert":{"_index":"crawl-1"}}', CLEAN_ITEM[1]), CLEAN_ITEM)
    out, stats = rewrite_bulk(body, cleaner, PATTERNS)
    lines, sent = _lines_of(out), _lines_of(body)
    assert b"ACME" not in lines[1] and lines[2:] == sent[2:]
    assert stats.uncleaned_by_reason == {"unsupported_action": 1} and stats.cleaned == 1


def test_ndjson_framing_is_kept_crlf_bom_blank_lines_and_no_final_newline(cleaner):
    # OpenSearch (checked on 2.19) reads a BOM at the start of any line, trims the CR of CRLF,
    # skips blank lines where an action is expected and rejects a body without a final newline.
    source = json.dumps({"text": DIRTY, "n": 1}).encode()
    body = (b"\xef\xbb\xbf" + ACTION + b"\r\n" + source + b"\r\n\r\n  \n" + ACTION + b"\n\xef\xbb\xbf" + source
            + b"\n" + ACTION + b"\r\n" + source)
    out, stats = rewrite_bulk(body, cleaner, PATTERNS)
    lines = out.split(b"\n")
    assert [len(x) for x in lines[:4]] == [len(x) for x in body.split(b"\n")[:4]] or stats.cleaned == 3
    assert lines[0] == b"\xef\xbb\xbf" + ACTION + b"\r" and lines[2:4] == [b"\r", b"  "]
    assert lines[1].endswith(b"}\r") and lines[5].startswith(b"\xef\xbb\xbf{") and not out.endswith(b"\n")
    assert stats.cleaned == 3 and all(b"ACME" not in lines[k] for k in (1, 5, 7))
    assert out.count(b"\n") == body.count(b"\n") and out.count(b"\r") == body.count(b"\r")


def test_routing_splices_the_action_line(cleaner):
    mostly_footer = json.dumps({"text": "All rights reserved by Acme Corporation"}).encode()
    action = b'{ "index" : {"_id": "a", "_index": "crawl-1", "routing": 1.50} }'
    out, stats = rewrite_bulk(_bulk((action, mostly_footer)), cleaner, PATTERNS, route_index="{index}-boilerplate")
    assert _lines_of(out)[0] == b'{ "index" : {"_id": "a", "_index": "crawl-1-boilerplate", "routing": 1.50} }'
    out, _ = rewrite_bulk(_bulk((b'{"create":{ }}', mostly_footer)), cleaner, PATTERNS, "crawl-2", "{index}-bp")
    assert _lines_of(out)[0] == b'{"create":{"_index":"crawl-2-bp" }}' and stats.routed == 1


@pytest.mark.parametrize("mode", ["strip", "mark", "downweight"])
def test_indices_that_accept_no_new_fields(mode):
    cleaner = cached_cleaner(mode)
    asked = []

    def accepts(index):
        asked.append(index)
        return index != "crawl-strict"

    strict = (b'{"index":{"_index":"crawl-strict"}}', b'{"text": "%s", "n": 1.10}' % DIRTY.encode())
    out, stats = rewrite_bulk(_bulk(strict, CLEAN_ITEM, strict), cleaner, PATTERNS, accepts_new_fields=accepts)
    lines = _lines_of(out)
    assert sorted(asked) == ["crawl-1", "crawl-strict"]  # asked once per index and request
    assert "bloomspan" in json.loads(lines[3])
    if mode == "strip":
        assert lines[1] == lines[5] == b'{"text": "Great shoes.", "n": 1.10}' and stats.cleaned == 3
    else:
        assert lines[1] == lines[5] == strict[1] and stats.uncleaned_by_reason == {"strict_mapping": 2}
    single, stats, _ = rewrite_single(strict[1], cleaner, "crawl-strict", PATTERNS, accepts_new_fields=accepts)
    assert single == (lines[1] if mode == "strip" else strict[1])


def test_an_exception_while_handling_one_item_never_escapes(cleaner):
    def accepts(index):
        if index == "crawl-broken":
            raise RuntimeError("mapping lookup failed")
        return True

    broken = (b'{"index":{"_index":"crawl-broken"}}', CLEAN_ITEM[1])
    out, stats = rewrite_bulk(_bulk(CLEAN_ITEM, broken, CLEAN_ITEM), cleaner, PATTERNS, accepts_new_fields=accepts)
    lines = _lines_of(out)
    assert lines[3] == broken[1] and b"ACME" not in lines[1] + lines[5]
    assert stats.uncleaned_by_reason == {"internal_error": 1} and stats.cleaned == 2
    same, stats, _ = rewrite_single(broken[1], cleaner, "crawl-broken", PATTERNS, accepts_new_fields=accepts)
    assert same is broken[1] and stats.uncleaned_by_reason == {"internal_error": 1}


def test_single_document_is_spliced_too(cleaner):
    body = b'{"n": 1E+2, "text": "%s"}\n' % DIRTY.encode()
    out, stats, _ = rewrite_single(body, cleaner, "crawl-1", PATTERNS)
    assert out.startswith(b'{"n": 1E+2, "text": "Great shoes.","bloomspan":{') and out.endswith(b"}\n")
    for bad, reason in ((b'{"text": 1, "text": 2}', "duplicate_keys"), (b"[1]", "not_an_object"), (b"\xff", "invalid_utf8")):
        same, stats, _ = rewrite_single(bad, cleaner, "crawl-1", PATTERNS)
        assert same is bad and stats.uncleaned_by_reason == {reason: 1}


def test_stats_add_sums_reasons():
    a, b = ProxyStats(), ProxyStats()
    a.uncleaned("too_large")
    b.uncleaned("too_large")
    b.uncleaned("invalid_text", cleaner_error="lone surrogate")
    a.add(b)
    assert a.uncleaned_by_reason == {"too_large": 2, "invalid_text": 1}
    assert a.passed_through == 2 and a.errors == 1 and a.error_reasons == ["lone surrogate"]


# -- property: random documents, random formatting, through a real cleaner ------------------

_OWNED_TOP = ("text", "text_clean", "text_chunks")
_TEXTS = st.lists(st.sampled_from(["Great", "shoes.", "All rights reserved by ACME Corporation.", "caf\u00e9",
                                   "accept all cookies now", "\u20ac5", "Hi\n", "  ", "x/y"]), min_size=1, max_size=6).map(" ".join)
# Mostly what a crawler sends (a text string, a metadata object), sometimes anything at all.
_TEXT_STRINGS = _TEXTS.flatmap(lambda t: json_string(t))
_TEXT_VALUES = st.one_of(_TEXT_STRINGS, _TEXT_STRINGS, _TEXT_STRINGS, JSON_VALUES)
_META_OBJECTS = json_object(member_lists(st.sampled_from(["crawl", "boilerplate_ratio", "spans", "fingerprint"]), JSON_VALUES))
_META_VALUES = st.one_of(_META_OBJECTS, _META_OBJECTS, JSON_VALUES)


def _member_values(key):
    return {"text": _TEXT_VALUES, "bloomspan": _META_VALUES}.get(key, JSON_VALUES)


_KEYS = st.tuples(st.sampled_from([["text"], ["text"], ["text"], []]),
                  st.lists(st.sampled_from(["bloomspan", "text_clean", "text_chunks", "price", "n", "é", "title"]),
                           unique=True, max_size=5)).flatmap(lambda parts: st.permutations(parts[0] + parts[1]))
_SOURCE = json_object(_KEYS.flatmap(
    lambda keys: st.tuples(*[st.tuples(st.just(k), _member_values(k)) for k in keys]).map(list)))
_CLEANER_CONFIGS = st.sampled_from([("strip", {}), ("mark", {}), ("downweight", {}), ("strip", {"chunk_size": 30}),
                                    ("downweight", {"fingerprint": True})])


def _expected(doc, result, accepts: bool):
    """What the cluster must read: the original with exactly the cleaned keys changed, or None
    when the item must go through as sent."""
    if not result.ok or not result.changed:
        return None
    expected = dict(doc)
    for key in _OWNED_TOP if accepts else ("text",):
        if key in result.doc:
            expected[key] = result.doc[key]
    if accepts and "bloomspan" in result.doc:
        user = doc.get("bloomspan")
        if "bloomspan" in doc and not isinstance(user, (dict, type(None))):
            return None
        expected["bloomspan"] = {**(user or {}), **result.doc["bloomspan"]}
    return None if expected == doc else expected


@settings(max_examples=200, derandomize=True, deadline=None)
@given(_SOURCE, _CLEANER_CONFIGS, st.sampled_from([True, True, True, False]), st.sampled_from(["", "\ufeff"]),
       st.sampled_from([b"\n", b"\r\n"]))
def test_forwarded_bytes_equal_the_original_outside_the_cleaned_values(source, config, accepts, bom, newline):
    mode, cfg = config
    cleaner = cached_cleaner(mode, **cfg)
    line = bom + source.text
    body = ACTION + newline + line.encode() + newline + CLEAN_ITEM[0] + newline + CLEAN_ITEM[1] + newline
    out, stats = rewrite_bulk(body, cleaner, PATTERNS, accepts_new_fields=lambda index: accepts)
    lines = out.split(b"\n")
    assert len(lines) == 5 and lines[0] == ACTION + newline.rstrip(b"\n") and lines[4] == b""
    forwarded = lines[1][: len(lines[1]) - (len(newline) - 1)].decode()
    result = cleaner.clean(source.value)
    expected = None if not accepts and mode != "strip" else _expected(source.value, result, accepts)
    if expected is None:
        assert forwarded == line
    else:
        assert json.loads(forwarded.removeprefix(bom)) == expected
        shift = len(bom)
        replaced = [source.members[k] for k in (_OWNED_TOP if accepts else ("text",)) if k in source.members]
        inserted = [source.last_end]
        meta = source.children.get("bloomspan")
        if accepts and meta is not None:
            replaced += [meta.members[k] for k in result.doc["bloomspan"] if k in meta.members]
            inserted.append(meta.last_end)
        elif accepts and "bloomspan" in source.members:
            replaced.append(source.members["bloomspan"])  # null: replaced whole
        moved = [(a + shift, b + shift) for a, b in replaced]
        assert only_changed_between(line, forwarded, moved, [p + shift for p in inserted]) is not None
    second = json.loads(lines[3])
    assert second["text"] == ("Great shoes." if mode == "strip" else DIRTY)
    assert ("bloomspan" in second) == accepts or mode != "strip"


def test_memory_grows_with_the_output_not_with_parsed_documents(cleaner, monkeypatch):
    # Parsing every source of a 100 MB body before cleaning held ~10 bytes per body byte;
    # rounds keep the parsed documents bounded, so a bigger body costs only its output.
    import tracemalloc

    monkeypatch.setattr("bloomspan.sidecar.serve.bulk_proxy.ROUND_BYTES", 1 << 18)
    item = ACTION + b"\n" + json.dumps({"title": "A page", "price": 1.10, "text": "Great shoes, comfy. " * 30 + DIRTY}).encode() + b"\n"
    rewrite_bulk(item * 300, cleaner, PATTERNS)  # first-call allocations (caches) are not the body's
    peaks = []
    for n in (1000, 4000):
        body = item * n
        tracemalloc.start()
        out, stats = rewrite_bulk(body, cleaner, PATTERNS)
        peaks.append((len(body), tracemalloc.get_traced_memory()[1]))
        tracemalloc.stop()
        assert stats.cleaned == n
        del out
    (small, small_peak), (big, big_peak) = peaks
    assert (big_peak - small_peak) / (big - small) < 3.0


def test_dotted_field_name_as_a_flat_key_is_spliced():
    ps = PhraseSet.from_records([{"tokens": FOOTER.split()}])
    cleaner = Cleaner(ps, CleanerConfig(fields=("page.body",), mode="downweight", skip_missing=True, id_field=None))
    source = b'{"page.body": "%s", "page": {"title": "T"}, "n": 1E+2}' % DIRTY.encode()
    out, stats = rewrite_bulk(_bulk((ACTION, source)), cleaner, PATTERNS)
    forwarded = _lines_of(out)[1]
    assert forwarded.startswith(source[:-1] + b',"page.body_clean":"Great shoes.","bloomspan":{')
    assert stats.cleaned == 1
