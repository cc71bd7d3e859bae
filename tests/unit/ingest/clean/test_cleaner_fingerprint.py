"""CleanerConfig(fingerprint=True): ``meta_field.fingerprint`` is the chunk fingerprint of the
stripped text, whatever the mode, so pages that differ only in known boilerplate get equal
fingerprints."""
from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.sketches.chunk_fingerprint import fingerprint, fingerprint_b64
from bloomspan.ingest.base.errors import IngestConfigError
from bloomspan.ingest.clean.cleaner import RATIO_FLOOR, Cleaner, CleanerConfig
from bloomspan.ingest.records.phrase_set import PhraseSet

FOOTER = "all rights reserved by acme corporation"
COOKIE = "we use cookies to improve your experience"
PHRASES = PhraseSet.from_records([{"tokens": FOOTER.split()}, {"tokens": COOKIE.split()}])
BODY = ("The quarterly report shows steady growth in every region. Analysts expect the trend to "
        "continue through the next year, with exports leading the way.")


def _cleaner(**kw) -> Cleaner:
    kw.setdefault("fields", ("text",))
    return Cleaner(PHRASES, CleanerConfig(fingerprint=True, **kw))


def test_off_by_default_no_fingerprint():
    doc = {"text": BODY}
    res = Cleaner(PHRASES, CleanerConfig(fields=("text",))).clean(doc)
    assert "fingerprint" not in res.doc["bloomspan"] and res.doc["text"] is BODY


@pytest.mark.parametrize("mode", ["strip", "mark", "downweight"])
def test_fingerprint_is_of_the_stripped_text_in_every_mode(mode):
    doc = {"text": f"We use cookies to improve your experience.\n\n{BODY}\n\nAll rights reserved by ACME Corporation."}
    stripped = Cleaner(PHRASES, CleanerConfig(fields=("text",))).clean(doc).doc["text"]
    assert "cookies" not in stripped and "reserved" not in stripped
    res = _cleaner(mode=mode).clean(doc)
    assert res.ok and res.changed
    meta = res.doc["bloomspan"]
    assert meta["fingerprint"] == fingerprint_b64(stripped)
    assert meta["boilerplate_ratio"] == pytest.approx(res.boilerplate_ratio) and res.boilerplate_ratio > 0
    if mode == "mark":
        assert res.doc["text"] == doc["text"] and len(meta["spans"]) == 2
    if mode == "downweight":
        assert res.doc["text"] == doc["text"] and res.doc["text_clean"] == stripped
    assert doc == {"text": doc["text"]}  # the input is never mutated


def test_a_document_without_boilerplate_still_gets_its_fingerprint():
    doc = {"text": BODY, "n": 3}
    res = _cleaner().clean(doc)
    assert res.changed and res.doc is not doc
    # the ratio is the floor, never 0 (Lucene cannot store 0 in a negative-impact rank_feature)
    assert res.doc == {"text": BODY, "n": 3, "bloomspan": {"fingerprint": fingerprint_b64(BODY),
                                                           "boilerplate_ratio": RATIO_FLOOR}}


def test_pages_that_differ_only_in_boilerplate_get_equal_fingerprints():
    a = {"text": f"{COOKIE}. {BODY} {FOOTER}."}
    b = {"text": f"{BODY}\n\n{FOOTER}"}
    cleaner = _cleaner()
    fa, fb = (cleaner.clean(d).doc["bloomspan"]["fingerprint"] for d in (a, b))
    assert fa == fb
    assert fingerprint(a["text"]) != fingerprint(b["text"])  # the raw texts differ


def test_several_fields_are_fingerprinted_together_and_errors_get_none():
    cleaner = _cleaner(fields=("title", "text"), skip_missing=True)
    res = cleaner.clean({"title": "Growth report", "text": f"{BODY} {FOOTER}"})
    stripped = Cleaner(PHRASES, CleanerConfig(fields=("text",))).clean({"text": f"{BODY} {FOOTER}"}).doc["text"]
    assert res.doc["bloomspan"]["fingerprint"] == fingerprint_b64("Growth report\n\n" + stripped)
    only_title = cleaner.clean({"title": "Growth report"})
    assert only_title.doc["bloomspan"]["fingerprint"] == fingerprint_b64("Growth report")
    nothing = {"other": 1}
    assert cleaner.clean(nothing).doc is nothing  # no configured field: nothing to fingerprint
    bad = {"title": 5, "text": BODY}
    res = cleaner.clean(bad)
    assert res.action == "error" and res.doc is bad and "bloomspan" not in bad


def test_fingerprint_is_64_bytes_of_base64_and_an_empty_text_has_a_zero_filter():
    res = _cleaner().clean({"text": "... !!! ---"})  # no tokens: an all-zero filter
    raw = base64.b64decode(res.doc["bloomspan"]["fingerprint"])
    assert len(raw) == 64 and raw == bytes(64)


def test_config_errors_name_the_field():
    with pytest.raises(IngestConfigError, match="fingerprint"):
        CleanerConfig(fields=("text",), fingerprint="yes")
    with pytest.raises(IngestConfigError, match="meta_field"):
        CleanerConfig(fields=("text",), meta_field=None, fingerprint=True)


_WORD = st.text(alphabet="bdfghjkmnpqstvxz", min_size=1, max_size=8)  # no token of the phrases


@settings(derandomize=True, max_examples=40, deadline=None)
@given(words=st.lists(_WORD, min_size=1, max_size=60), cuts=st.lists(st.integers(0, 60), max_size=4),
       seps=st.sampled_from([" ", ". ", "\n\n", ", "]))
def test_property_stripped_fingerprint_equals_the_content_only_fingerprint(words, cuts, seps):
    """Boilerplate inserted anywhere between content words does not change the fingerprint."""
    pieces = list(words)
    for c in sorted({min(c, len(words)) for c in cuts}, reverse=True):
        pieces.insert(c, FOOTER if c % 2 else COOKIE.upper())
    res = _cleaner().clean({"text": seps.join(pieces)})
    assert res.doc["bloomspan"]["fingerprint"] == fingerprint_b64(" ".join(words))
