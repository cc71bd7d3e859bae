"""json_splice: read an object's value spans with the stdlib scanner, replace only what changed."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.sidecar.serve.json_splice import (
    ANY_KEY,
    REPLACE,
    ConflictError,
    DuplicateKeyError,
    InvalidJsonError,
    NotAnObjectError,
    TooDeepError,
    parse_object,
    same_json,
    splice,
    splice_bytes,
)
from tests.support.json_render import JSON_VALUES, json_object, json_string, member_lists, only_changed_between

PLAN = {"text": REPLACE, "meta": {ANY_KEY: REPLACE}, "page": {"body": REPLACE}}


def _splice(text: str, change) -> str:
    old, spans, _ = parse_object(text, PLAN)
    new = json.loads(json.dumps(old))
    change(new)
    return splice(text, spans, old, new, PLAN)


def test_value_is_what_json_loads_reads_and_spans_point_at_the_values():
    text = '{ "n" : 1.10 ,"text":"caf\\u00e9", "meta": {"a": [1, {"b": 2}]} , "x": -0 }'
    value, spans, end = parse_object(text, PLAN)
    assert value == json.loads(text) and end == len(text)
    assert text[slice(*spans.members["n"])] == "1.10"
    assert text[slice(*spans.members["text"])] == '"caf\\u00e9"'
    assert text[slice(*spans.children["meta"].members["a"])] == '[1, {"b": 2}]'
    assert text[spans.last_end:] == " }"


def test_only_the_changed_value_is_replaced_numbers_escapes_and_spaces_stay():
    text = '{"price": 1.10, "n": 1E+2, "t": "caf\\u00e9",  "text" : "Hello.  Footer here" }'
    out = _splice(text, lambda d: d.update(text="Hello."))
    assert out == '{"price": 1.10, "n": 1E+2, "t": "caf\\u00e9",  "text" : "Hello." }'


def test_unchanged_values_are_not_rewritten_and_the_text_object_itself_comes_back():
    text = '{"text": "caf\\u00e9", "meta": {"r": 1.0}}'
    old, spans, _ = parse_object(text, PLAN)
    assert splice(text, spans, old, {"text": "café", "meta": {"r": 1.0}}, PLAN) is text


def test_new_keys_go_at_the_end_of_their_object_and_user_keys_are_kept():
    text = '{"text": "x", "meta": {"mine": "keep \\u00e9", "ratio": 0.5 }\t}'
    out = _splice(text, lambda d: d.update(meta={"ratio": 0.25, "spans": []}))
    assert out == '{"text": "x", "meta": {"mine": "keep \\u00e9", "ratio": 0.25,"spans":[] }\t}'
    assert _splice('{ }', lambda d: d.update(meta={"r": 1})) == '{"meta":{"r":1} }'
    assert _splice('{"a":1}', lambda d: d.update(text="t", text_clean="u")) == '{"a":1,"text":"t"}'


def test_keys_off_the_plan_are_never_touched_and_missing_keys_are_never_deleted():
    text = '{"other": 1.10, "text": "a", "meta": {"x": 1}}'
    old, spans, _ = parse_object(text, PLAN)
    assert splice(text, spans, old, {"other": 2, "text": "a", "meta": {}}, PLAN) is text


def test_dotted_path_walks_into_the_object():
    text = '{"page": {"title": "T", "body": "old body"}, "n": 1E+2}'
    out = _splice(text, lambda d: d["page"].update(body="new"))
    assert out == '{"page": {"title": "T", "body": "new"}, "n": 1E+2}'


def test_an_object_where_the_original_holds_something_else_is_a_conflict():
    text = '{"meta": "users string"}'
    old, spans, _ = parse_object(text, PLAN)
    with pytest.raises(ConflictError) as e:
        splice(text, spans, old, {"meta": {"r": 1}}, PLAN)
    assert e.value.reason == "field_conflict"
    assert _splice('{"meta" : null }', lambda d: d.update(meta={"r": 1})) == '{"meta" : {"r":1} }'  # null: no value


@pytest.mark.parametrize("text, error", [
    ('{"text": 1, "text": 2}', DuplicateKeyError),
    ('{"meta": {"a": 1, "a": 2}}', DuplicateKeyError),
    ('{"text": NaN}', InvalidJsonError),
    ('{"text": Infinity}', InvalidJsonError),
    ('{"a": 1} {"b": 2}', InvalidJsonError),
    ('{"a": 1,}', InvalidJsonError),
    ('{a: 1}', InvalidJsonError),
    ('{"a": "tab\there"}', InvalidJsonError),
    ("", InvalidJsonError),
    ("[1, 2]", NotAnObjectError),
    ('"a string"', NotAnObjectError),
    ('{"a": ' * 100_000 + "1" + "}" * 100_000, TooDeepError),
])
def test_doubtful_texts_are_refused_with_a_reason(text, error):
    with pytest.raises(error):
        parse_object(text, PLAN)


def test_duplicates_off_the_plan_are_left_to_the_cluster():
    # Only the levels the proxy would change are checked; the cluster rejects the rest itself.
    value, _, _ = parse_object('{"other": {"a": 1, "a": 2}}', PLAN)
    assert value == {"other": {"a": 2}}


def test_trailing_data_allowed_only_when_asked():
    value, _, end = parse_object('{"index": {}} trailing', {}, trailing_data=True)
    assert value == {"index": {}} and end == len('{"index": {}}')


def test_same_json_tells_numbers_and_booleans_apart():
    assert not same_json(1, 1.0) and not same_json(1, True) and not same_json(0, False)
    assert same_json({"a": [1, "x"]}, {"a": [1, "x"]}) and not same_json([1], [1.0])


_DOC_MEMBERS = member_lists(st.sampled_from(["text", "meta", "n", "price", "é", "title"]), JSON_VALUES)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(json_object(_DOC_MEMBERS), json_string(alphabet="xyz é\\\""), st.dictionaries(st.sampled_from(["r", "s"]), st.integers()))
def test_splice_changes_exactly_the_planned_values(doc, new_text, new_meta):
    old, spans, _ = parse_object(doc.text, PLAN)
    assert old == doc.value
    new = dict(doc.value, text=new_text.value, meta=new_meta, n="off the plan")
    meta = doc.value.get("meta")
    if "meta" in doc.value and not isinstance(meta, (dict, type(None))):
        with pytest.raises(ConflictError):
            splice(doc.text, spans, old, new, PLAN)
        return
    out = splice(doc.text, spans, old, new, PLAN)
    expected = dict(doc.value, text=new_text.value)
    expected["meta"] = {**meta, **new_meta} if isinstance(meta, dict) else new_meta
    assert json.loads(out) == expected
    replaced = [doc.members["text"]] if "text" in doc.members else []
    if "meta" in doc.members and meta is None:
        replaced.append(doc.members["meta"])
    inserted = [doc.last_end]
    if "meta" in doc.children:
        child = doc.children["meta"]
        replaced += [child.members[k] for k in new_meta if k in child.members]
        inserted.append(child.last_end)
    assert only_changed_between(doc.text, out, replaced, inserted) is not None


@settings(max_examples=150, derandomize=True, deadline=None)
@given(json_object(_DOC_MEMBERS), st.text(), st.dictionaries(st.sampled_from(["r", "é", "s"]),
                                                             st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()),
       st.booleans())
def test_splice_bytes_is_splice_encoded(doc, new_text, new_meta, bom):
    """The proxy's byte splice writes exactly the bytes of the text splice (orjson spells the new
    strings, the stdlib the other values), on non-ASCII texts, after a BOM and with surrogates."""
    text = ("\ufeff" if bom else "") + doc.text
    old, spans, _ = parse_object(text, PLAN, 1 if bom else 0)
    raw = text.encode("utf-8")
    assert splice_bytes(raw, text, spans, old, old, PLAN) is raw
    new = dict(doc.value, text=new_text, meta=new_meta)
    try:
        expected = splice(text, spans, old, new, PLAN)
    except ConflictError:
        with pytest.raises(ConflictError):
            splice_bytes(raw, text, spans, old, new, PLAN)
        return
    try:
        expected_bytes = expected.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: fails the same way, the item goes through as sent
        with pytest.raises(UnicodeEncodeError):
            splice_bytes(raw, text, spans, old, new, PLAN)
        return
    assert splice_bytes(raw, text, spans, old, new, PLAN) == expected_bytes
