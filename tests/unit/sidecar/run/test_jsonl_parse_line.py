"""parse_line: orjson parses, the standard library decides what orjson refuses."""
from __future__ import annotations

import json
import math

import pytest

from bloomspan.sidecar.run.jsonl_mining import JsonlInputError, parse_line, read_documents


@pytest.mark.parametrize("raw", [
    b'{"text": "caf\\u00e9 \xc3\xa9", "id": 1}\n',
    b'{"a": 1, "a": 2}',                      # last key wins, as in json
    b'{"n": 123456789012345678901234567890}',  # beyond 64 bits: orjson refuses, json reads it
    b'{"x": NaN, "y": -Infinity}',
    b'{"t": "\\ud800 lone"}',                 # an escaped lone surrogate
    b'[1, 2.50, "x"]',
])
def test_same_value_as_the_standard_library(raw):
    got = parse_line("f.jsonl", 3, raw, exact_numbers=b"1234567890123" in raw)
    want = json.loads(raw.decode("utf-8"))
    if isinstance(want, dict) and isinstance(want.get("x"), float) and math.isnan(want["x"]):
        assert math.isnan(got["x"]) and got["y"] == want["y"]
    else:
        assert got == want and type(got) is type(want)


@pytest.mark.parametrize("raw, message", [
    (b'{"text": "\xff"}', "f.jsonl:7: not valid UTF-8"),
    (b'{"text": ', "f.jsonl:7: invalid JSON (Expecting value at column 10)"),
    (b"[" * 100_000, "f.jsonl:7: nested deeper than the JSON parser allows"),
])
def test_errors_are_worded_by_the_standard_library(raw, message):
    with pytest.raises(JsonlInputError) as err:
        parse_line("f.jsonl", 7, raw)
    assert str(err.value).startswith(message)


def test_an_id_beyond_64_bits_is_read_exactly(tmp_path):
    """orjson would read it as a float: 1.2345678901234568e+29 instead of the digits."""
    path = tmp_path / "big.jsonl"
    path.write_bytes(b'{"id": 123456789012345678901234567890, "text": "a b"}\n{"id": 2.5, "text": "c"}\n')
    assert [d for d, _ in read_documents(str(path), "text", "id")] == ["123456789012345678901234567890", "2.5"]
