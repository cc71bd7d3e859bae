"""Shadow mode without a cluster: the text stays as sent, the spans are those strip removes,
and the per-site totals count what strip would have removed."""
from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
from bloomspan.ingest.records.phrase_set import PhraseSet
from bloomspan.sidecar.serve.shadow import MAX_SITES, OTHER_SITES, ShadowCleaner, ShadowMeter

PHRASES = PhraseSet.from_records([{"tokens": "we use cookies to improve your experience".split()}])
TEXT = "Shoes for running. We use cookies to improve your experience. Size 42."


def _cleaner(mode: str) -> Cleaner:
    return Cleaner(PHRASES, CleanerConfig(fields=("text",), mode=mode, id_field=None, scope_field="site"))


def test_shadow_marks_exactly_what_strip_removes_and_counts_it_per_site():
    meter = ShadowMeter(CollectorRegistry())
    shadow = ShadowCleaner(_cleaner("mark"), meter)
    doc = {"text": TEXT, "site": "https://shop.example/p/1"}
    result = shadow.clean(doc)
    assert result.doc["text"] == TEXT
    (span,) = result.doc["bloomspan"]["spans"]
    stripped = _cleaner("strip").clean(doc).doc["text"]
    assert TEXT[span["start"]:span["end"]] == "We use cookies to improve your experience"
    assert stripped == "Shoes for running. Size 42."
    (row,) = meter.rows()
    assert row["site"] == "shop.example" and row["documents"] == 1
    assert row["would_strip_tokens"] == result.covered_tokens == 7
    assert row["would_strip_characters"] == span["end"] - span["start"]


def test_metrics_name_the_site_and_cap_the_number_of_sites():
    registry = CollectorRegistry()
    meter = ShadowMeter(registry)
    for i in range(MAX_SITES + 5):
        meter.observe(f"site{i}", 10, 2, 100, 20)
    text = generate_latest(registry).decode()
    assert 'bloomspan_shadow_tokens_total{part="would_strip",site="site0"} 2.0' in text
    rows = {r["site"]: r for r in meter.rows()}
    assert len(rows) == MAX_SITES + 1 and rows[OTHER_SITES]["documents"] == 5


def test_shadow_wraps_only_a_mark_mode_cleaner():
    try:
        ShadowCleaner(_cleaner("strip"), ShadowMeter())
    except ValueError as exc:
        assert "mark" in str(exc)
    else:
        raise AssertionError("a strip cleaner was accepted")
