"""Structure and validation of the exported ingest pipeline (its behaviour on a real node is
tested in tests/integration/ingest/pipeline_export/test_pipeline_export.py and test_pipeline_scoped.py)."""
from __future__ import annotations

import json

import pytest

from bloomspan.ingest.base.errors import IngestConfigError
from bloomspan.ingest.pipeline_export.export import build_pipeline, export_pipeline, phrase_regex
from bloomspan.ingest.pipeline_export.regex import BEFORE_SENTINEL, tokens_after_below
from bloomspan.ingest.pipeline_export.scopes import CONDITION, STATE_FIELD, STATE_SCRIPT
from bloomspan.ingest.records.phrase_set import PhraseSet


def _set(n):
    return PhraseSet.from_records([{"tokens": [f"w{i}", "x", "y"][: 2 + i % 2], "df": 10 + i} for i in range(n)])


def _alternatives(pattern):
    """Whole-line alternatives start with ``^``/``\\A``, inline phrases with their lookbehind."""
    return pattern.count("|^") + pattern.count("|\\A") + pattern.count("|(?<!") + 1


def _gsubs(body, prefix):
    return [p["gsub"] for p in body["processors"] if "gsub" in p and p["gsub"]["tag"].startswith(prefix)]


CONFIG = {"kind": "config", "template_config": {"run_min_length": 4, "middle_content_tokens": 50,
                                                "exact_phrases_on_sites": False}}


def _line(text, scope, df=30, anchor=None, blocks=None):
    tokens = text.split()
    r = {"text": text, "tokens": tokens, "df": df, "kind": "block", "block_lengths": blocks or [len(tokens)],
         "scope": scope, "slots": [i for i, t in enumerate(tokens) if t == "<num>"]}
    if anchor:
        r["anchor"] = anchor
    return r


RECORDS = [CONFIG,
           _line("home shop about us", "a.example"), _line("contact imprint", "a.example"),
           {"text": "free shipping on all orders over fifty euros today", "tokens":
            "free shipping on all orders over fifty euros today".split(), "df": 12, "kind": "mcfp", "scope": "a.example"},
           _line("news archive by month", "a.example/news"), _line("back to the top", "a.example/news", anchor="end"),
           _line("b menu one", "b.example"), _line("two short", "b.example", blocks=[1, 1]),
           _line("<num> b corp all rights", None),
           {"kind": "skeleton", "scope": "a.example"}]


def test_phrase_regex_escapes_and_joins_with_separator_runs():
    assert phrase_regex(["a", "b"]) == r"a[^\p{L}\p{N}\p{M}]++b"
    assert phrase_regex(["<num>", "c.d"]) == r"[0-9]++[^\p{L}\p{N}\p{M}]++c\.d"
    with pytest.raises(ValueError):
        phrase_regex([])


def test_top_phrases_by_psi_packed_longest_first():
    body = build_pipeline(_set(120), top=100, phrases_per_processor=40)
    gsubs = _gsubs(body, "bloomspan-phrases")
    assert len(gsubs) == 3  # 100 phrases, 40 per processor
    first = gsubs[0]["pattern"]
    assert first.startswith("(?iu)") and "w" in first
    assert gsubs[0]["pattern"].count("|") == 39
    assert all(g["if"]["source"] == CONDITION for g in gsubs)  # a non-string text never reaches a gsub
    assert body["processors"][0]["copy"]["target_field"] == "_bloomspan_original"
    assert body["processors"][-1]["remove"]["field"] == ["_bloomspan_original", STATE_FIELD]
    assert any("script" in p for p in body["processors"])


def test_downweight_writes_the_clean_field():
    body = build_pipeline(_set(3), field="body", mode="downweight")
    assert body["processors"][0]["copy"] == {"source_field": "body", "target_field": "body_clean",
                                             "ignore_missing": True, "override_target": True}
    assert all(p.get("gsub", {}).get("field", "body_clean") == "body_clean" for p in body["processors"])


def test_elasticsearch_form_copies_with_set_and_has_no_copy_processor():
    for mode, target in (("strip", "_bloomspan_original"), ("downweight", "text_clean")):
        body = build_pipeline(_set(3), mode=mode, templates=RECORDS, scope_field="site", url_field="url",
                              engine="elasticsearch")
        kinds = {k for p in body["processors"] for k in p}
        assert "copy" not in kinds and kinds <= {"set", "script", "gsub", "trim", "remove"}
        assert body["processors"][0] == {"set": {"field": target, "copy_from": "text", "ignore_empty_value": True,
                                                 "override": True}}


@pytest.mark.parametrize("kwargs, field", [({"mode": "mark"}, "mode"), ({"top": 0}, "top"),
                                           ({"phrases_per_processor": 0}, "phrases_per_processor"),
                                           ({"field": ""}, "field"), ({"engine": "solr"}, "engine"),
                                           ({"scope_field": ""}, "scope_field"),
                                           ({"url_field": "url"}, "url_field"),
                                           ({"scope_field": "text"}, "scope_field"),
                                           ({"scope_field": "site", "url_field": "site"}, "url_field")])
def test_bad_parameters_name_the_field(kwargs, field):
    with pytest.raises(IngestConfigError) as err:
        build_pipeline(_set(2), **kwargs)
    assert err.value.field == field


def test_empty_phrase_set_is_an_error():
    with pytest.raises(IngestConfigError):
        build_pipeline([])


def test_one_gsub_per_site_two_per_section_each_behind_its_scope():
    export = export_pipeline(_set(3), templates=RECORDS, scope_field="site", url_field="url")
    body = export.body
    sites = _gsubs(body, "bloomspan-site:")
    assert [g["tag"] for g in sites] == ["bloomspan-site:a.example", "bloomspan-site:b.example"]
    assert [g["if"]["params"]["scope"] for g in sites] == ["a.example", "b.example"]
    # a.example: its two lines and its phrase in one alternation, the longest first
    assert _alternatives(sites[0]["pattern"]) == 3 and sites[0]["pattern"].index("free") < sites[0]["pattern"].index("home")
    (section,) = _gsubs(body, "bloomspan-section:")
    assert section["if"]["params"] == {"state": STATE_FIELD, "scope": "a.example/news", "edge": True}
    assert section["pattern"].endswith(f"(?:{BEFORE_SENTINEL}|{tokens_after_below(50)})") and "{0,49}" in section["pattern"]
    mark, unmark = _gsubs(body, "bloomspan-edge-mark"), _gsubs(body, "bloomspan-edge-unmark")
    assert len(mark) == len(unmark) == 1 and mark[0]["replacement"].startswith("$0")
    order = [p["gsub"]["tag"].split(":")[0] for p in body["processors"] if "gsub" in p]
    assert order.index("bloomspan-section") < order.index("bloomspan-site")  # sections first, on the text as sent
    assert order.index("bloomspan-edge-unmark") < order.index("bloomspan-phrases-0")
    # every condition is the same script: compiled once by the node
    assert {p["gsub"]["if"]["source"] for p in body["processors"] if "gsub" in p and p["gsub"]["tag"] != "bloomspan-tidy"} == {CONDITION}
    # copy, state, edge mark, 1 section, edge unmark, 2 sites, 1 global, 1 exact, 3 tidy gsubs + trim, ratio, remove
    assert len(body["processors"]) == 15
    assert export.applied == {"exact_phrases": 3, "site_records": 4, "section_records": 2, "global_records": 1,
                              "sites": 2, "sections": 1}
    assert export.left_out["skeletons"] == 1 and export.left_out["short_line_pairs"] == 1  # "two short": 2 tokens < 4


def test_exact_phrases_stand_down_on_the_sites_the_detector_mined():
    body = build_pipeline(_set(3), templates=RECORDS, scope_field="site", url_field="url")
    (gsub,) = _gsubs(body, "bloomspan-phrases")
    assert set(gsub["if"]["params"]["none_of"]) == {"a.example", "a.example/news", "b.example"}
    scoped = PhraseSet.from_records([{"tokens": ["x", "y"], "df": 9}, {"tokens": ["z", "w"], "df": 9,
                                                                       "scope": "c.example"}])
    gsubs = _gsubs(build_pipeline(scoped, templates=RECORDS, scope_field="site"), "bloomspan-phrases")
    assert [g["if"]["params"].get("scope") for g in gsubs] == [None, "c.example"]
    assert "c.example" in gsubs[0]["if"]["params"]["none_of"]  # as TemplateMatcher's mined scopes
    assert gsubs[1]["if"]["params"]["none_of"] == gsubs[0]["if"]["params"]["none_of"]  # stands down there too
    on_sites = [CONFIG | {"template_config": {**CONFIG["template_config"], "exact_phrases_on_sites": True}}] + RECORDS[1:]
    (gsub,) = _gsubs(build_pipeline(_set(3), templates=on_sites, scope_field="site"), "bloomspan-phrases")
    assert "none_of" not in gsub["if"]["params"]


def test_without_scope_or_url_field_the_scoped_records_are_left_out_and_counted():
    export = export_pipeline(_set(3), templates=RECORDS)
    assert export.left_out["scoped_without_scope_field"] == 7 and export.applied["global_records"] == 1
    assert not _gsubs(export.body, "bloomspan-site") and not _gsubs(export.body, "bloomspan-section")
    assert "7 scoped records (no --site-field)" in export.left_out_line()
    export = export_pipeline(_set(3), templates=RECORDS, scope_field="site")
    assert export.left_out["sections_without_url_field"] == 2 and export.applied["sites"] == 2


def test_top_bounds_the_records_of_each_scope():
    many = [CONFIG] + [_line(f"line {i} of the menu", "a.example", df=10 + i) for i in range(30)]
    export = export_pipeline(_set(3), templates=many, scope_field="site", top=10)
    (site,) = _gsubs(export.body, "bloomspan-site:")
    assert _alternatives(site["pattern"]) == 10 and export.left_out["beyond_top"] == 20
    assert "line[^" in site["pattern"] and "29" in site["pattern"] and "of" in site["pattern"]


def test_processor_count_is_bounded_by_sites_and_sections_not_records():
    many = [CONFIG] + [_line(f"menu entry number {i}", f"s{i % 4}.example", df=20) for i in range(400)]
    body = build_pipeline(_set(3), templates=many, scope_field="site", url_field="url")
    assert len(_gsubs(body, "bloomspan-site:")) == 4
    assert len(body["processors"]) <= 4 + 1 + 12  # sites, exact phrases, and the fixed copy/state/tidy/ratio/remove


def test_middle_rule_off_gives_one_section_gsub_without_edges():
    off = [{"kind": "config", "template_config": {"run_min_length": 4, "middle_content_tokens": 0}}] + RECORDS[1:]
    body = build_pipeline(_set(3), templates=off, scope_field="site", url_field="url")
    assert [g["tag"] for g in _gsubs(body, "bloomspan-section")] == ["bloomspan-section:a.example/news"]
    assert not _gsubs(body, "bloomspan-edge")


def test_with_the_repeated_lines_rule_records_apply_near_the_edges_of_repeating_pages_and_long_section_lines_stay_out():
    config = {"kind": "config", "template_config": {**CONFIG["template_config"], "middle_repeated_lines": True,
                                                    "section_line_length": 3}}
    export = export_pipeline(_set(3), templates=[config] + RECORDS[1:], scope_field="site", url_field="url")
    body = export.body
    edge = f"(?:{BEFORE_SENTINEL}|{tokens_after_below(50)})"
    for prefix in ("bloomspan-site:", "bloomspan-templates"):
        gsubs = _gsubs(body, prefix)  # anywhere on a page that repeats no line, else near the edges only
        assert [g["if"]["params"]["repeated"] for g in gsubs] == [False, True] * (len(gsubs) // 2) and gsubs
        assert all(g["pattern"].endswith(edge) == g["if"]["params"]["repeated"] for g in gsubs)
        assert all(g["if"]["params"].get("edge") is g["if"]["params"]["repeated"] or not g["if"]["params"]["repeated"]
                   for g in gsubs)
    assert body["processors"][1]["script"]["params"]["repeated_lines"] is True
    (mark,) = _gsubs(body, "bloomspan-edge-mark")
    assert mark["if"]["params"] == {"state": STATE_FIELD, "edge": True}  # every page: site records are edged too
    order = [p["gsub"]["tag"] for p in body["processors"] if "gsub" in p]
    assert order.index("bloomspan-templates-0:repeated-lines") < order.index("bloomspan-edge-unmark") \
        < order.index("bloomspan-phrases-0")
    # "news archive by month" and "back to the top" (4 tokens > 3) are long lines for the section rule
    assert export.left_out["section_long_lines"] == 2 and not _gsubs(body, "bloomspan-section:")
    assert "2 section records on lines longer than section_line_length" in export.left_out_line()


def test_the_body_is_json():
    body = build_pipeline(_set(3), templates=RECORDS, scope_field="site", url_field="url")
    assert json.loads(json.dumps(body)) == body


def test_with_the_table_of_contents_rule_template_records_stand_down_where_enough_lines_repeat():
    """The cleaner gives a listed section back anywhere after a page's header, and only on a page
    where at least toc_sections lines repeat an earlier one (each heading copies a header line):
    there the pipeline applies no template record, so it never removes what the cleaner keeps;
    elsewhere the records apply as before (the repeated-lines variants included)."""
    config = {"kind": "config", "template_config": {**CONFIG["template_config"], "middle_repeated_lines": True,
                                                    "toc_sections": 3}}
    export = export_pipeline(_set(3), templates=[config] + RECORDS[1:], scope_field="site", url_field="url")
    body = export.body
    gsubs = [g for prefix in ("bloomspan-site:", "bloomspan-section:", "bloomspan-templates")
             for g in _gsubs(body, prefix)]
    assert gsubs and all(g["if"]["params"]["repeats_below"] == 3 for g in gsubs)
    assert [g for g in gsubs if g["tag"].endswith(":repeated-lines")]  # the middle rule's variants stay
    assert body["processors"][1]["script"]["params"]["repeated_lines"] is True
    assert all("repeats_below" not in p["if"]["params"] for p in _gsubs(body, "bloomspan-phrases"))
    assert any("3 or more lines repeat" in note for note in export.notes)
    without = export_pipeline(_set(3), templates=[{"kind": "config", "template_config": {
        **CONFIG["template_config"], "toc_sections": 0}}] + RECORDS[1:], scope_field="site", url_field="url")
    assert all("repeats_below" not in g["if"]["params"] for g in _gsubs(without.body, "bloomspan-site:"))
    assert "st.repeats >= params.repeats_below" in CONDITION and "repeats++" in STATE_SCRIPT
