"""The clean loop's writer: ``dumps_document`` writes what ``json.dumps`` wrote, byte for byte."""
from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings, strategies as st

from bloomspan.sidecar.cli.clean_jsonl import _holds_float, dumps_document


def _stdlib(doc) -> bytes:
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


def _outcome(write, doc):
    try:
        return write(doc)
    except Exception as e:  # the same error, with the same message, as the standard library's path
        return type(e), str(e)


_text = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF))  # lone surrogates included
_scalar = st.none() | st.booleans() | st.integers() | st.floats() | _text
_value = st.recursive(_scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
                      max_leaves=8)


@settings(derandomize=True, max_examples=400, deadline=None)
@given(st.dictionaries(_text, _value, max_size=6))
@example({"text": "a\x00\x1f\x7f\u2028\u2029\ufeff \"quoted\" \\ é 😀", "n": 1.5e-05, "m": {"r": 1e-4}})
@example({"text": "lone \ud800 surrogate", "id": 1})
@example({"x": float("nan"), "y": float("inf")})
def test_a_document_is_written_as_the_standard_library_writes_it(doc):
    assert _outcome(dumps_document, doc) == _outcome(_stdlib, doc)


@pytest.mark.parametrize("doc", [{1: "int key"}, {None: "a", True: "b", 2.5: "c"}, [1, "list"], "a string", {}])
def test_what_orjson_would_spell_differently_goes_through_the_standard_library(doc):
    assert dumps_document(doc) == _stdlib(doc)


def _holds_float_by_walk(value) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_holds_float_by_walk(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_float_by_walk(v) for v in value)
    return False


@settings(derandomize=True, max_examples=300, deadline=None)
@given(_value)
@example({"truth": {"spans": [[0, 1], [2, 3.5]]}})
@example([[[[1.0]]]])
@example({"a": [1, 2, {"b": [True, None, "1.5"]}]})
def test_a_float_is_found_wherever_it_is_nested(value):
    assert _holds_float(value) == _holds_float_by_walk(value)

