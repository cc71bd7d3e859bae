"""Allow and deny lists over phrase records, and the cleaner that routes documents by site."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.ingest.clean.cleaner import CleanerConfig
from bloomspan.ingest.clean.curated_cleaner import CuratedCleaner, curated_cleaner
from bloomspan.ingest.records.curation import CurationEntry, CurationError, contains, curate_records, denying_entry

COOKIE = "we use cookies to improve your experience".split()
FOOTER = "all rights reserved by acme corporation".split()


def _record(tokens, scope=None, **kw):
    rec = {"tokens": list(tokens), "text": " ".join(tokens), **kw}
    if scope:
        rec["scope"] = scope
    return rec


def test_deny_filters_phrases_that_contain_or_lie_inside_the_denied_one():
    deny = CurationEntry(action="deny", tokens=tuple(FOOTER))
    records = [_record(["copyright", "2024", *FOOTER]), _record(FOOTER[1:4]), _record(COOKIE)]
    out = curate_records(records, [deny])
    assert [r["tokens"] for r in out.records] == [COOKIE]
    assert len(out.filtered) == 2 and out.summary()["filtered"] == 2


def test_a_window_inside_the_denied_phrase_denies_a_phrase_of_a_windowed_run():
    deny = CurationEntry(action="deny", tokens=tuple(FOOTER))
    straddling = ["welcome", "home", *FOOTER[:3]]  # its last 3-token window lies inside the footer
    assert denying_entry(_record(straddling, min_length=3), [deny]) is deny
    assert denying_entry(_record(straddling), [deny]) is None  # matched whole, it never removes footer text alone


def test_a_site_scoped_deny_removes_global_phrases_only_from_that_sites_set():
    deny = CurationEntry(action="deny", tokens=tuple(COOKIE), scope="shop.example")
    records = [_record(COOKIE), _record(COOKIE, scope="shop.example"), _record(COOKIE, scope="news.example")]
    base = curate_records(records, [deny])
    assert [r.get("scope") for r in base.records] == [None, "news.example"]
    for_shop = curate_records(records, [deny], document_scopes={"shop.example"})
    assert [r.get("scope") for r in for_shop.records] == ["news.example"]
    assert curate_records(records, [deny], strict=True).records == []


def test_allow_adds_the_phrase_unless_present_or_denied():
    allow = CurationEntry(action="allow", tokens=("subscribe", "now"))
    out = curate_records([_record(COOKIE)], [allow])
    assert out.records[-1]["tokens"] == ["subscribe", "now"] and out.added == [allow]
    assert curate_records([_record(["subscribe", "now"])], [allow]).added == []
    deny = CurationEntry(action="deny", tokens=("subscribe",))
    assert curate_records([], [allow, deny]).records == []  # deny wins


def test_skeleton_and_config_records_pass_untouched():
    deny = CurationEntry(action="deny", tokens=("a",))
    records = [{"kind": "config", "template_config": {}}, {"kind": "skeleton", "tokens": ["a"]}]
    assert curate_records(records, [deny]).records == records


@pytest.mark.parametrize("kwargs, field", [
    ({"action": "erase", "tokens": ("a",)}, "action"),
    ({"action": "deny", "tokens": ("Upper",)}, "tokens"),
    ({"action": "deny"}, "tokens"),
    ({"action": "allow", "phrase_id": "p1"}, "tokens"),
    ({"action": "deny", "tokens": ("a",), "scope": "/"}, "scope"),
])
def test_invalid_entries_name_the_field(kwargs, field):
    with pytest.raises(CurationError) as err:
        CurationEntry(**kwargs)
    assert err.value.field == field


def test_entry_ids_are_stable_and_distinguish_scope_and_action():
    a = CurationEntry(action="deny", tokens=("x", "y"))
    assert a.id == CurationEntry(action="deny", tokens=("x", "y"), who="someone else").id
    assert a.id != CurationEntry(action="deny", tokens=("x", "y"), scope="s").id
    assert a.id != CurationEntry(action="allow", tokens=("x", "y")).id


tokens = st.lists(st.sampled_from("abcd"), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(phrase=tokens, denied=tokens)
def test_no_kept_phrase_contains_or_lies_inside_a_denied_phrase(phrase, denied):
    deny = CurationEntry(action="deny", tokens=tuple(denied))
    kept = curate_records([_record(phrase)], [deny]).records
    joined = lambda t: " " + " ".join(t) + " "  # noqa: E731 - the definition, by string search
    overlapping = joined(denied) in joined(phrase) or joined(phrase) in joined(denied)
    assert (kept == []) == overlapping
    assert contains(phrase, denied) == (joined(denied) in joined(phrase))


def test_curated_cleaner_routes_documents_of_a_denied_site_to_their_own_set():
    records = [_record(COOKIE), _record(FOOTER)]
    deny = CurationEntry(action="deny", tokens=tuple(COOKIE), scope="shop.example")
    config = CleanerConfig(fields=("text",), mode="strip", id_field=None, meta_field=None, scope_field="site")
    cleaner = curated_cleaner(records, config, [deny], with_templates=False)
    assert isinstance(cleaner, CuratedCleaner)
    text = "Hello. We use cookies to improve your experience. All rights reserved by ACME Corporation."
    docs = [{"site": "shop.example", "text": text}, {"site": "news.example", "text": text}, {"text": text}]
    shop, news, unscoped = (r.doc["text"] for r in cleaner.clean_batch(docs))
    assert "cookies" in shop and "ACME" not in shop
    assert news == unscoped == "Hello."
    plain = curated_cleaner(records, config, [CurationEntry(action="deny", tokens=tuple(FOOTER))],
                            with_templates=False)
    assert not isinstance(plain, CuratedCleaner)
    assert "ACME" in plain.clean({"text": text}).doc["text"]
