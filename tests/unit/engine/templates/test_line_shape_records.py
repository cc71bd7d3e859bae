"""A line_shape record with broken fields is refused when read, one message naming the record,
the field and its value: no TypeError without a field, no version 0 or '2' read as newer, no
null token turned into the word 'None', no max_gap above int64 that made every document fail in
the matcher's kernels, no scope of another type that silently applied to no page."""
from __future__ import annotations

import pytest

from bloomspan.engine.templates.line_shapes import LineShapeModel

GOOD = {"kind": "line_shape", "version": 1, "scope": "manual.example", "edge": "start",
        "fixed": ["next", "previous", "up", "contents"], "shapes": [[0, 1, 2], [1, 2, 3]], "max_gap": 4,
        "edge_lines": 3, "min_fixed": 3, "sigma": 18, "documents": 120}


@pytest.mark.parametrize("key,value,message", [
    ("version", 2, "version=2 is newer than this bloomspan reads (1)"),
    ("version", "2", "version='2': must be an integer >= 1"),
    ("version", 0, "version=0: must be an integer >= 1"),
    ("version", None, "version=None: must be an integer >= 1"),
    ("scope", 5, "scope=5: must be a string (a site or section) or null"),
    ("fixed", None, "fixed=None: must be a list of token strings"),
    ("fixed", "abc", "fixed='abc': must be a list of token strings"),
    ("fixed", ["next", None, "up", "contents"], "must be a list of token strings"),
    ("shapes", 5, "shapes=5: must be a list of lists"),
    ("shapes", [5], "shapes=[5]: must be a list of lists"),
    ("shapes", [[0, True, 2]], "shape [0, True, 2]: must hold >= 3 indices into the 4 fixed tokens"),
    ("max_gap", 10**20, "max_gap=100000000000000000000: must be an integer from 0 to 2**63-1"),
    ("max_gap", "4", "max_gap='4': must be an integer from 0 to 2**63-1"),
    ("sigma", "x", "sigma='x': must be an integer from 0 to 2**63-1"),
    ("documents", None, "documents=None: must be an integer from 0 to 2**63-1"),
    ("edge_lines", 0, "edge_lines=0: must be an integer from 1 to 2**63-1"),
])
def test_a_broken_field_is_named_with_its_value(key, value, message):
    with pytest.raises(ValueError) as exc:
        LineShapeModel.from_record({**GOOD, key: value}, "t.jsonl: record 2")
    assert str(exc.value).startswith("t.jsonl: record 2: line_shape ") and message in str(exc.value)


@pytest.mark.parametrize("key", ["edge", "fixed", "shapes", "max_gap", "edge_lines", "min_fixed", "sigma", "documents"])
def test_a_missing_field_is_named(key):
    with pytest.raises(ValueError, match=f"record 2: line_shape record lacks '{key}'; mine again"):
        LineShapeModel.from_record({k: v for k, v in GOOD.items() if k != key}, "record 2")


def test_a_good_record_and_a_null_scope_read():
    assert LineShapeModel.from_record(GOOD).fixed == ("next", "previous", "up", "contents")
    assert LineShapeModel.from_record({**GOOD, "scope": None}).scope is None
