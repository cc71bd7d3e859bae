"""Cleaning with template records: scopes from site and URL, the Cleaner over a TemplateMatcher,
literal and slotted numbers side by side, and template files read by `bloomspan clean`."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bloomspan.engine.templates.config import TemplateConfig
from bloomspan.engine.templates.detector import detect_templates_in_texts
from bloomspan.ingest.base.errors import IngestConfigError
from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
from bloomspan.ingest.match.loading import load_phrase_file
from bloomspan.ingest.match.scopes import template_scopes
from bloomspan.ingest.match.template_matcher import TEMPLATE_SPAN_ID, TemplateMatcher
from bloomspan.ingest.records.phrase_set import PhraseSet
from bloomspan.sidecar.cli.main import cli


def test_template_scopes_list_the_site_and_every_section_depth():
    assert template_scopes("docs.x", "https://docs.x/fr/mod/page.html") == ["docs.x", "docs.x/fr", "docs.x/fr/mod"]
    assert template_scopes("docs.x", "https://docs.x/index.html") == ["docs.x", "docs.x/"]
    assert template_scopes("docs.x") == ["docs.x"]
    assert template_scopes(None, "https://docs.x/a/b.html") == []


def site_pages(n: int = 24) -> list[dict]:
    pages = []
    for i in range(n):
        lines = ["Home | Guide | API | Search", f"Guide > Chapter {i} notes", f"Body line {i} about topic {i * 7} here",
                 f"Second body line {i} with words {i * 3} more", "Previous page | Next page",
                 f"Copyright {2000 + i % 20} Example Docs"]
        pages.append({"text": "\n".join(lines), "site": "docs.x", "url": f"https://docs.x/guide/p{i}.html"})
    return pages


@pytest.fixture(scope="module")
def templates_file(tmp_path_factory):
    pages = site_pages()
    out = detect_templates_in_texts([p["text"] for p in pages], [p["site"] for p in pages], [p["url"] for p in pages],
                                    TemplateConfig(sigma_floor=3))
    path = tmp_path_factory.mktemp("t") / "templates.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in out.records), encoding="utf-8")
    return path


def test_cleaner_strips_site_templates_only_on_that_site(templates_file):
    phrase_set, templates = load_phrase_file(templates_file)
    assert templates is not None and templates.template_config["sigma_floor"] == 3
    cleaner = Cleaner(None, CleanerConfig(fields=("text",), scope_field="site", url_field="url", mode="mark"),
                      templates=templates)
    new = {"text": "Home | Guide | API | Search\nA fresh body line for a new page\nCopyright 2031 Example Docs",
           "site": "docs.x", "url": "https://docs.x/guide/new.html"}
    res = cleaner.clean(new)
    spans = [(new["text"][s["start"]:s["end"]], s["phrase_ids"]) for s in res.doc["bloomspan"]["spans"]]
    assert [t for t, _ in spans] == ["Home | Guide | API | Search", "Copyright 2031 Example Docs"]  # the slot matches 2031
    assert all(ids == [TEMPLATE_SPAN_ID] for _, ids in spans)
    other = cleaner.clean({**new, "site": "other.org"})
    assert other.covered_tokens == 0  # site-scoped records do not apply to another site
    strip = Cleaner(phrase_set, CleanerConfig(fields=("text",), scope_field="site"), templates=templates)
    assert strip.clean(new).doc["text"] == "A fresh body line for a new page"


def test_cleaner_rejects_a_non_matcher_and_a_non_string_url(templates_file):
    _, templates = load_phrase_file(templates_file)
    with pytest.raises(IngestConfigError, match="templates"):
        Cleaner(None, CleanerConfig(fields=("text",)), templates="x")
    cleaner = Cleaner(None, CleanerConfig(fields=("text",), scope_field="site", url_field="url"), templates=templates)
    res = cleaner.clean({"text": "x", "site": "docs.x", "url": 5})
    assert res.action == "error" and "URL must be a string" in res.reason


def test_literal_number_phrases_keep_their_number_next_to_slotted_ones():
    records = [{"kind": "config", "template_config": {"run_min_length": 4, "slots": True}},
               {"tokens": ["copyright", "2024", "acme", "corp"]},
               {"tokens": ["page", "<num>", "of", "<num>"], "kind": "mcfp", "slots": [1, 3]}]
    m = TemplateMatcher(records)
    text = "Copyright 2024 Acme Corp. Copyright 2023 Acme Corp. Page 3 of 9."
    got = m.find(text)
    found = [text[a:b] for a, b in zip(got.span_char_start.tolist(), got.span_char_end.tolist())]
    assert found == ["Copyright 2024 Acme Corp", "Page 3 of 9"]


def test_plain_phrase_files_still_load_as_phrase_sets(tmp_path):
    path = tmp_path / "phrases.jsonl"
    path.write_text(json.dumps({"text": "read more", "tokens": ["read", "more"], "length": 2, "df": 3}) + "\n")
    phrase_set, templates = load_phrase_file(path)
    assert templates is None and isinstance(phrase_set, PhraseSet) and len(phrase_set) == 1


def test_clean_cli_applies_a_templates_file(templates_file, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"text": "Home | Guide | API | Search\nNew words here", "site": "docs.x",
                               "url": "https://docs.x/guide/z.html"}) + "\n")
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(cli, ["clean", "--phrases", str(templates_file), "--in", str(src), "--out", str(out),
                                   "--site-field", "site", "--url-field", "url"])
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["text"] == "New words here"


def _found(matcher, text, scopes):
    got = matcher.find(text, scopes)
    return [text[a:b] for a, b in zip(got.span_char_start.tolist(), got.span_char_end.tolist())]


def test_a_runs_exact_phrases_apply_only_to_pages_of_sites_the_detector_did_not_mine():
    exact = {"tokens": ["the", "old", "behavior", "of", "a", "policy", "is", "deprecated"]}
    site_line = {"tokens": ["quick", "search"], "kind": "block", "scope": "docs.a", "block_lengths": [2]}
    text = "Quick search\nThe OLD behavior of a policy is deprecated by definition."

    def records(**config):
        return [{"kind": "config", "template_config": {"run_min_length": 4, "slots": True, **config}}, exact, site_line]

    chrome_only = TemplateMatcher(records(exact_phrases_on_sites=False))
    assert _found(chrome_only, text, ["docs.a", "docs.a/policy"]) == ["Quick search"]
    # a site the detector never mined keeps the exact phrases: nothing else speaks for its pages
    assert _found(chrome_only, text, ["docs.b"]) == ["The OLD behavior of a policy is deprecated"]
    assert _found(chrome_only, text, None) == ["The OLD behavior of a policy is deprecated"]
    # records published before the setting existed apply the exact phrases everywhere, as they did
    for old in (TemplateMatcher(records()), TemplateMatcher(records(exact_phrases_on_sites=True))):
        assert _found(old, text, ["docs.a"]) == ["Quick search\nThe OLD behavior of a policy is deprecated"]


def test_an_operators_allow_entry_applies_on_pages_of_sites_the_detector_mined():
    from bloomspan.ingest.records.curation import CurationEntry, allowed_record

    allow = allowed_record(CurationEntry(action="allow", tokens=("tells", "about")))
    site_line = {"tokens": ["quick", "search"], "kind": "block", "scope": "docs.a", "block_lengths": [2]}
    config = {"kind": "config", "template_config": {"run_min_length": 4, "slots": True,
                                                     "exact_phrases_on_sites": False}}
    matcher = TemplateMatcher([config, site_line, allow])
    text = "Quick search\nPage 7 tells about alpha."
    assert _found(matcher, text, ["docs.a"]) == ["Quick search", "tells about"]


def test_tokens_without_line_starts_are_refused_by_the_line_rules():
    """A phrase matcher's tokens carry no line starts (PhraseMatcher.tokenize); line rules need them."""
    from bloomspan.ingest.base.batch_tokens import tokenize_batch

    matcher = TemplateMatcher([{"tokens": ["a", "b"], "count": 3, "df": 3}])
    texts = ["a b\nc"]
    assert matcher.find_batch(texts, tokens=matcher.tokenize(texts))[0].covered_tokens == 2
    with pytest.raises(ValueError, match="without line starts"):
        matcher.find_batch(texts, tokens=tokenize_batch(texts, with_lines=False))
