"""Structure and validation of the exported ingest pipeline (its behaviour on a real node is
tested in tests/integration/ingest/test_pipeline_export.py)."""
from __future__ import annotations

import pytest

from bloomspan.ingest.errors import IngestConfigError
from bloomspan.ingest.phrase_set import PhraseSet
from bloomspan.ingest.pipeline_export import build_pipeline, phrase_regex


def _set(n):
    return PhraseSet.from_records([{"tokens": [f"w{i}", "x", "y"][: 2 + i % 2], "df": 10 + i} for i in range(n)])


def test_phrase_regex_escapes_and_joins_with_separator_runs():
    assert phrase_regex(["a", "b"]) == r"a[^\p{L}\p{N}]+b"
    with pytest.raises(ValueError):
        phrase_regex([])


def test_top_phrases_by_psi_packed_longest_first():
    body = build_pipeline(_set(120), top=100, phrases_per_processor=40)
    gsubs = [p["gsub"] for p in body["processors"] if "gsub" in p and p["gsub"]["tag"].startswith("bloomspan-phrases")]
    assert len(gsubs) == 3  # 100 phrases, 40 per processor
    first = gsubs[0]["pattern"]
    assert first.startswith("(?iu)") and "w" in first
    # longest (3-token) phrases come first
    assert gsubs[0]["pattern"].count("|") == 39
    assert body["processors"][0]["copy"]["target_field"] == "_bloomspan_original"
    assert body["processors"][-1] == {"remove": {"field": "_bloomspan_original", "ignore_missing": True}}
    assert any("script" in p for p in body["processors"])


def test_downweight_writes_the_clean_field():
    body = build_pipeline(_set(3), field="body", mode="downweight")
    assert body["processors"][0]["copy"] == {"source_field": "body", "target_field": "body_clean",
                                             "ignore_missing": True, "override_target": True}
    assert all(p.get("gsub", {}).get("field", "body_clean") == "body_clean" for p in body["processors"])


@pytest.mark.parametrize("kwargs, field", [({"mode": "mark"}, "mode"), ({"top": 0}, "top"),
                                           ({"phrases_per_processor": 0}, "phrases_per_processor"),
                                           ({"field": ""}, "field")])
def test_bad_parameters_name_the_field(kwargs, field):
    with pytest.raises(IngestConfigError) as err:
        build_pipeline(_set(2), **kwargs)
    assert err.value.field == field


def test_empty_phrase_set_is_an_error():
    with pytest.raises(IngestConfigError):
        build_pipeline([])
