"""PhraseSet: loading phrases.jsonl / record lists, validation errors that name the line."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.ingest.base.errors import PhraseSetError
from bloomspan.ingest.records.phrase_set import PhraseRecord, PhraseSet, parse_phrase_record, stable_phrase_id


def _write(tmp_path, lines: list) -> str:
    p = tmp_path / "phrases.jsonl"
    p.write_text("\n".join(x if isinstance(x, str) else json.dumps(x, ensure_ascii=False) for x in lines) + "\n", "utf-8")
    return str(p)


GOOD = [
    {"id": "p1", "text": "share this article", "tokens": ["share", "this", "article"], "length": 3, "df": 10},
    {"text": "read more", "tokens": ["read", "more"], "length": 2, "df": 7,
     "scope": "news.example"},
    {"id": 7, "text": "все права защищены", "tokens": ["все", "права", "защищены"], "length": 3, "df": 3},
]


def test_from_jsonl_loads_every_field(tmp_path):
    ps = PhraseSet.from_jsonl(_write(tmp_path, GOOD))
    assert len(ps) == 3
    assert ps[0] == PhraseRecord("p1", ("share", "this", "article"), 10, None)
    assert ps[1].scope == "news.example" and ps[1].df == 7
    assert ps[1].id == stable_phrase_id(("read", "more"), "news.example")
    assert ps[2].id == 7 and ps[2].text == "все права защищены" and ps[2].length == 3
    assert ps.ids == ["p1", ps[1].id, 7]
    assert ps.index_of(7) == 2
    assert ps.scopes == ["news.example"]


def test_blank_lines_are_skipped_and_lines_counted(tmp_path):
    path = _write(tmp_path, [GOOD[0], "", "   ", {"text": "a b", "tokens": ["a", "B"]}])
    with pytest.raises(PhraseSetError) as ei:
        PhraseSet.from_jsonl(path)
    assert ei.value.line == 4 and ei.value.key == "tokens"
    assert "line 4" in str(ei.value) and "lowercase" in str(ei.value)


@pytest.mark.parametrize(
    "record, key, words",
    [
        ({"tokens": "share this"}, "tokens", "list of strings"),
        ({"tokens": ["share", 3]}, "tokens", "string"),
        ({"tokens": ["share", ""]}, "tokens", "empty"),
        ({"tokens": ["share this"]}, "tokens", "whitespace"),
        ({"tokens": []}, "tokens", "no tokens"),
        ({"text": "a  b"}, "text", "empty"),
        ({"text": "a b", "tokens": ["a", "c"]}, "text", "differs"),
        ({"text": 5}, "text", "string"),
        ({"tokens": ["a", "b"], "length": 3}, "length", "2 tokens"),
        ({"tokens": ["a", "b"], "length": True}, "length", "2 tokens"),
        ({"tokens": ["a", "b"], "df": -1}, "df", ">= 0"),
        ({"tokens": ["a", "b"], "df": 1.5}, "df", ">= 0"),
        ({"tokens": ["a", "b"], "scope": ""}, "scope", "non-empty"),
        ({"tokens": ["a", "b"], "scope": 3}, "scope", "non-empty"),
        ({"tokens": ["a", "b"], "id": ""}, "id", "empty"),
        ({"tokens": ["a", "b"], "id": [1]}, "id", "string or an integer"),
        ({"tokens": ["a", "b"], "id": True}, "id", "string or an integer"),
        ({"df": 3}, None, '"tokens"'),
    ],
)
def test_bad_records_name_line_and_key(tmp_path, record, key, words):
    path = _write(tmp_path, [GOOD[0], record])
    with pytest.raises(PhraseSetError) as ei:
        PhraseSet.from_jsonl(path)
    e = ei.value
    assert e.line == 2 and e.key == key and e.source == path
    assert words in str(e) and f"{path} line 2" in str(e)
    # The same record in a list names its index instead.
    with pytest.raises(PhraseSetError) as ei2:
        PhraseSet.from_records([GOOD[0], record], source="template")
    assert ei2.value.index == 1 and ei2.value.line is None and "template [1]" in str(ei2.value)


def test_invalid_json_and_non_object_and_bad_utf8(tmp_path):
    with pytest.raises(PhraseSetError, match=r"line 2: invalid JSON"):
        PhraseSet.from_jsonl(_write(tmp_path, [GOOD[0], '{"text": "a b"']))
    with pytest.raises(PhraseSetError, match=r"line 1: expected a JSON object, got list"):
        PhraseSet.from_jsonl(_write(tmp_path, ['["a", "b"]']))
    p = tmp_path / "bad.jsonl"
    p.write_bytes(json.dumps(GOOD[0]).encode() + b"\n" + b'{"text": "caf\xe9 x"}\n')
    with pytest.raises(PhraseSetError, match=r"line 2: not valid UTF-8"):
        PhraseSet.from_jsonl(p)


def test_duplicate_ids_name_both_places(tmp_path):
    path = _write(tmp_path, [GOOD[0], {"id": "x", "text": "a b"}, {"id": "p1", "text": "c d"}])
    with pytest.raises(PhraseSetError) as ei:
        PhraseSet.from_jsonl(path)
    assert ei.value.line == 3 and ei.value.key == "id" and "first at line 1" in str(ei.value)
    with pytest.raises(PhraseSetError, match=r"records \[1\] key 'id': duplicate id 'q' \(first at \[0\]\)"):
        PhraseSet.from_records([{"id": "q", "text": "a b"}, {"id": "q", "text": "c d"}])
    # Same text without ids in the same scope derives the same id: a duplicate too.
    with pytest.raises(PhraseSetError, match="duplicate id"):
        PhraseSet.from_records([{"text": "a b"}, {"text": "a b"}])
    # ... but in different scopes the ids differ.
    ps = PhraseSet.from_records([{"text": "a b"}, {"text": "a b", "scope": "s"}])
    assert ps[0].id != ps[1].id


def test_from_records_rejects_non_lists():
    with pytest.raises(PhraseSetError, match="list of phrase objects"):
        PhraseSet.from_records({"text": "a b"})
    with pytest.raises(PhraseSetError, match="list of phrase objects"):
        PhraseSet.from_records("a b")


def test_text_only_and_tokens_only_records():
    assert parse_phrase_record({"text": "a b c"}).tokens == ("a", "b", "c")
    assert parse_phrase_record({"tokens": ["a", "b"]}).text == "a b"
    # Tokens keep characters that str.lower produces (U+0130 lowercases to i + U+0307).
    r = parse_phrase_record({"tokens": ["i\u0307stanbul", "x"]})
    assert r.tokens[0] == "İstanbul".lower()


def test_round_trip_through_records():
    ps = PhraseSet.from_records(GOOD)
    again = PhraseSet.from_records(ps.to_records())
    assert list(again) == list(ps)
    assert json.loads(json.dumps(ps.to_records())) == ps.to_records()


_tok = st.text(alphabet="abcжзи1", min_size=1, max_size=4)


@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(_tok, min_size=1, max_size=4), st.sampled_from([None, "a", "b"])),
                min_size=1, max_size=8, unique_by=lambda x: (tuple(x[0]), x[1])))
def test_derived_ids_are_stable_under_reordering(items):
    recs = [{"tokens": toks, "scope": sc} for toks, sc in items]
    forward = PhraseSet.from_records(recs)
    backward = PhraseSet.from_records(list(reversed(recs)))
    assert {p.id: p for p in forward} == {p.id: p for p in backward}
    assert all(isinstance(i, str) and len(i) == 17 and i[0] == "p" for i in forward.ids)


def _accepted_token_by_token(tokens) -> bool:
    """The per-token rule of phrase_set._check_token, spelled out."""
    return all(isinstance(t, str) and t and not any(c.isspace() for c in t) and t.lower() == t for t in tokens)


_any_token = st.text(alphabet=st.sampled_from(list("aAσΣςß\u0130İ\t \u00a0\u2028x1") + [" ", "\u0345"]), max_size=4)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(_any_token | st.integers(), min_size=1, max_size=5))
def test_tokens_are_accepted_exactly_when_each_token_is_valid(tokens):
    """Tokens are validated on their join first; the verdict (and the error) is the per-token one."""
    if _accepted_token_by_token(tokens):
        assert parse_phrase_record({"tokens": tokens}).tokens == tuple(tokens)
    else:
        with pytest.raises(PhraseSetError, match=r"tokens\[\d+\]"):
            parse_phrase_record({"tokens": tokens})


def test_a_byte_order_mark_before_the_first_record_is_read_past(tmp_path):
    # It was "line 1: invalid JSON: Unexpected UTF-8 BOM", while the documents' files take one.
    record = json.dumps({"tokens": ["all", "rights", "reserved"], "id": "p1"}).encode() + b"\n"
    (tmp_path / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + record)
    (tmp_path / "plain.jsonl").write_bytes(record)
    bom, plain = PhraseSet.from_jsonl(tmp_path / "bom.jsonl"), PhraseSet.from_jsonl(tmp_path / "plain.jsonl")
    assert [p.tokens for p in bom] == [p.tokens for p in plain] == [("all", "rights", "reserved")]
