"""The exported pipeline with the template detector's scoped records, on the real nodes: it
removes exactly what `bloomspan clean --site-field site --url-field url` removes where it can
express the records (hand-made pages, one per rule), nothing the cleaner keeps and most of what
it removes on a generated multi-site crawl, and leaves every other field as sent; on
Elasticsearch it is exported in that engine's form, and a node without the processors says so in
one line."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from opensearchpy import helpers

from bench.agreement import compare, generated_pages, index_through, run, token_lists
from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
from bloomspan.ingest.match.template_matcher import TemplateMatcher
from bloomspan.ingest.pipeline_export.export import build_pipeline
from bloomspan.ingest.pipeline_export.regex import SENTINEL, block_regex
from bloomspan.ingest.pipeline_export.scopes import (
    STATE_FIELD,
    STATE_SCRIPT,
    document_scopes,
    line_repeats,
    state_params,
)
from bloomspan.ingest.records.phrase_set import PhraseSet
from bloomspan.sidecar.cli.main import cli
from bloomspan.sidecar.cluster.engine import engine_of
from tests.integration.sidecar.cluster.test_engine_matrix import elasticsearch_url, es_client  # noqa: F401 - fixtures
from tests.support.sidecar_helpers import make_source

CONFIG = {"kind": "config", "template_config": {"run_min_length": 4, "middle_content_tokens": 50,
                                                "exact_phrases_on_sites": False}}


def _line(text, scope, anchor=None, blocks=None):
    tokens = text.split()
    r = {"text": text, "tokens": tokens, "df": 30, "kind": "block", "block_lengths": blocks or [len(tokens)],
         "scope": scope, "slots": [i for i, t in enumerate(tokens) if t == "<num>"]}
    return {**r, "anchor": anchor} if anchor else r


EXACT = {"text": "we use cookies to improve your experience", "tokens":
         "we use cookies to improve your experience".split(), "df": 40}
TEMPLATES = [CONFIG, _line("home shop about us", "a.example"), _line("contact imprint", "a.example"),
             {"text": "free shipping on all orders over fifty euros today", "df": 12, "kind": "mcfp",
              "tokens": "free shipping on all orders over fifty euros today".split(), "scope": "a.example"},
             _line("news archive by month", "a.example/news"), _line("back to the top", "a.example/news", anchor="end"),
             _line("b menu one", "b.example"), _line("two short", "b.example", blocks=[1, 1]),
             _line("<num> b corp all rights", None),
             _line("this policy was introduced in version <num> of the product and applies to all pages",
                   "a.example/news")]
# The rules a run mined after the detector's structural-evidence change records: a mid-page run of
# site matches holding a line repeated in its page is content, and so is a long line only section
# records touch.
STRUCTURAL = {"kind": "config", "template_config": {**CONFIG["template_config"], "middle_repeated_lines": True,
                                                    "section_line_length": 12}}
# With the table-of-contents rule too: no page below repeats three lines, so the records apply as
# under STRUCTURAL, now behind the state script's count of repeated lines.
TOC = {"kind": "config", "template_config": {**STRUCTURAL["template_config"], "toc_sections": 3}}
CONTENT = " ".join(f"word{i} text" for i in range(30))  # 60 tokens of content
OTHER = {"price": 12.5, "tags": ["x", "ü"], "meta": {"n": [1, 2], "k": None, "deep": {"s": "ü", "f": 0.1}}, "flag": True}
PAGES = [
    # the first section line lies among the page's first 50 tokens, the second between 60 tokens of
    # content on each side (the middle rule: content the section repeats, kept), the anchored one last
    {"site": "a.example", "url": "https://a.example/news/p1.html",
     "text": f"Home | Shop | About us\nNews archive by month\n{CONTENT}\nNews archive by month\n{CONTENT}\n"
             "We use cookies to improve your experience.\nBack to the top"},
    {"site": "a.example", "url": "https://a.example/index.html",
     "text": "HOME | SHOP | ABOUT US\nGreat news: free shipping on all orders over fifty euros today! Enjoy.\n"
             "Visit home shop about us today.\nContact · Imprint"},
    {"site": "b.example", "url": "https://b.example/x/y.html",
     "text": "B menu one\ntwo\nshort\nSome content here.\n© 2031 B Corp. All rights\n"},
    {"site": "c.example", "url": "https://c.example/news/p.html",
     "text": "We use cookies to improve your experience!\nHome | Shop | About us\nNews archive by month\nOther words"},
    {"site": 7, "url": "https://a.example/news/p.html", "text": "Home | Shop | About us\nwords"},
    {"site": "a.example", "url": "https://a.example/news/x?p=/other/y", "text": "Back to the top"},
    {"site": "a.example", "url": "https://a.example/news/q.html", "text": "Home shop about usé\ncontent"},
    {"site": "a.example", "url": "https://a.example/news/q.html"},
    {"site": "a.example", "url": "https://a.example/news/r.html",
     "text": f"{CONTENT}\nContact · Imprint\n{CONTENT}\nContact · Imprint\n{CONTENT}"},
    {"site": "a.example", "url": "https://a.example/news/s.html",
     "text": "Intro line\nThis policy was introduced in version 3 of the product and applies to all pages.\nEnd"},
    # a site line mid-page on a page that repeats no line: chrome under both rule sets
    {"site": "a.example", "url": "https://a.example/t.html", "text": f"{CONTENT}\nContact · Imprint\n{CONTENT} end"},
]
URLS = ["https://a.example/docs/api/x.html", "https://a.example/", "https://a.example", "a.example/docs/x",
        "//host/a/b/c", "  https://a.example/d/x", "https://a.ex\tample/d\n/x", "https://a.example/d/x?q=/e/f#/g/h",
        "mailto:x@y/z/w", "1http:/a/b/c", "https://a.example//d//e/x", "", "?/a/b", "https://[::1]/a/b", None, 5]


def test_the_state_script_computes_the_cleaners_scopes_on_the_node(os_client):
    docs = [{"_source": {"text": "t", "site": "s.example", "url": url}} for url in URLS]
    docs += [{"_source": {"text": "t", "site": 3, "url": "https://x/a/b"}}, {"_source": {"text": 4, "site": "s"}},
             {"_source": {"text": f"t{SENTINEL}", "site": "s"}}]
    body = {"pipeline": {"processors": [{"script": {"lang": "painless", "source": STATE_SCRIPT,
                                                    "params": state_params("text", "site", "url", SENTINEL)}}]},
            "docs": docs}
    got = [d["doc"]["_source"][STATE_FIELD] for d in os_client.ingest.simulate(body=body)["docs"]]
    for doc, state in zip(docs, got):
        src = doc["_source"]
        expected = document_scopes(src.get("site"), src.get("url"))
        assert state["ok"] == (expected is not None and isinstance(src["text"], str)), src
        if state["ok"]:
            assert state["scopes"] == expected, src
    assert [s["edge"] for s in got[-3:]] == [False, False, False]


def _cleaner(config: dict = CONFIG, match: str = "phrases") -> Cleaner:
    matcher = TemplateMatcher([config, EXACT] + TEMPLATES[1:], source="test")
    return Cleaner(None, CleanerConfig(fields=("text",), mode="strip", skip_missing=True, id_field=None,
                                       scope_field="site", url_field="url", match=match), templates=matcher)


def test_the_state_script_counts_repeated_lines_as_line_repeats_does(os_client):
    texts = ["A\nB\nC\nbody\nA\nx\nB\ny\nC", "Contact\ncontact 2024\nCONTACT", "one\ntwo", "---\n---", ""]
    docs = [{"_source": {"text": t, "site": "s.example"}} for t in texts]
    body = {"pipeline": {"processors": [{"script": {"lang": "painless", "source": STATE_SCRIPT, "params": state_params(
        "text", "site", "url", SENTINEL, repeated_lines=True)}}]}, "docs": docs}
    got = [d["doc"]["_source"][STATE_FIELD] for d in os_client.ingest.simulate(body=body)["docs"]]
    assert [s["repeats"] for s in got] == [line_repeats(t) for t in texts] == [3, 2, 0, 0, 0]


@pytest.mark.parametrize("config", [CONFIG, STRUCTURAL, TOC], ids=["middle-rule", "structural-evidence", "toc"])
def test_pipeline_removes_exactly_what_the_cleaner_removes_where_it_can_express_it(os_client, index_prefix, config):
    pipeline_id = f"{index_prefix}scoped"
    body = build_pipeline(PhraseSet.from_records([EXACT]), templates=[config] + TEMPLATES[1:], scope_field="site",
                          url_field="url", engine=engine_of(os_client).product)
    os_client.ingest.put_pipeline(id=pipeline_id, body=body)
    pages = [{**p, **OTHER} for p in PAGES]
    stored = index_through(os_client, f"{index_prefix}scoped", pipeline_id, pages)
    cleaned = [r.doc for r in _cleaner(config).clean_batch(pages)]
    with_text = [k for k, p in enumerate(pages) if "text" in p]
    a = compare([pages[k] for k in with_text], [cleaned[k] for k in with_text], [stored[k] for k in with_text])
    assert a.extra == 0 and a.identical_pages == len(with_text) and a.other_fields_differ == 0
    assert a.cleaner_removed > 20  # the pages do exercise the rules
    for page, src in zip(pages, stored):
        assert {k: v for k, v in src.items() if k not in ("text", "bloomspan")} == \
               {k: v for k, v in page.items() if k != "text"}
        assert STATE_FIELD not in src and "_bloomspan_original" not in src
    text = [s.get("text") for s in stored]
    assert text[0].count("News archive by month") == 1 and "improve your experience" in text[0]  # middle; mined site
    assert text[1] == "Great news: Enjoy.\nVisit home shop about us today."
    assert text[2] == "two\nshort\nSome content here."  # a pair below run_min_length stays, as in the cleaner
    assert text[3] == "Home | Shop | About us\nNews archive by month\nOther words"  # exact phrase off the mined sites
    assert text[4] == pages[4]["text"] and "bloomspan" not in stored[4]  # a site that is no string: as sent
    assert text[5] == "" and text[6] == pages[6]["text"]
    assert SENTINEL not in "".join(t for t in text if t)
    assert text[10] == f"{CONTENT}\n{CONTENT} end"
    if config is CONFIG:  # a site line mid-page is chrome; the long section line near the top goes
        assert "Contact" not in text[8] and text[9] == "Intro line\nEnd"
    else:  # a site line repeated mid-page is content; so is a long line only a section's records touch
        assert text[8] == pages[8]["text"] and text[9] == pages[9]["text"]


def test_on_a_generated_crawl_it_removes_nothing_the_cleaner_keeps(opensearch_url, tmp_path):
    a, printed, _, _ = run(opensearch_url, 600, 150, 3, tmp_path)
    assert "left out of the pipeline" in printed and "page skeletons" in printed
    assert a.pages == 150 and a.other_fields_differ == 0
    assert a.extra == 0, f"the pipeline removed {a.extra} tokens the cleaner keeps on {a.pages_with_extra} pages"
    assert a.cleaner_removed > 0 and a.share >= 0.85, a


def test_from_a_cluster_run_the_template_index_gives_the_same_scoped_pipeline(opensearch_url, os_client,
                                                                             index_prefix, tmp_path):
    from bloomspan.sidecar.publish.template_reader import current_run, load_cleaning_set
    from bloomspan.sidecar.run.mining_run import MineConfig, run_mining

    mine_pages, new_pages = generated_pages(500, 120, 5)
    make_source(os_client, f"{index_prefix}src", mine_pages)
    alias = f"{index_prefix}tpl"
    run_mining(MineConfig.from_flags(index=f"{index_prefix}src", url=opensearch_url, sigma=20, min_length=10, site_field="site",
                          url_field="url", template_index=alias, work_dir=str(tmp_path / "work"),
                          lease_index=f"{index_prefix}lease"))
    # an operator denies one site line: no path applies it, the pipeline included (denied on one
    # site, left out everywhere, as the run's exact phrases are)
    hits = helpers.scan(os_client, index=alias, query={"query": {"term": {"kind": "template"}}})
    denied = next(h["_source"] for h in hits if h["_source"].get("template_kind") == "block"
                  and "/" not in h["_source"].get("scope", "/") and len(h["_source"]["block_lengths"]) == 1
                  and not h["_source"].get("anchor") and "<num>" not in h["_source"]["tokens"])
    res = CliRunner().invoke(cli, ["curate", "deny", " ".join(denied["tokens"]), "--site", denied["scope"],
                                   "--template-index", alias, "--url", opensearch_url])
    assert res.exit_code == 0, res.output
    pipeline_id = f"{index_prefix}from-index"
    res = CliRunner().invoke(cli, ["pipeline", "--template-index", alias, "--url", opensearch_url, "--pipeline-id",
                                   pipeline_id, "--site-field", "site", "--url-field", "url"])
    assert res.exit_code == 0, res.output
    assert "left out of the pipeline" in res.output and " site records on " in res.output
    processors = os_client.ingest.get_pipeline(id=pipeline_id)[pipeline_id]["processors"]
    site_gsubs = [p["gsub"]["pattern"] for p in processors if "gsub" in p and p["gsub"]["tag"].startswith("bloomspan-site:")]
    assert site_gsubs and not any(block_regex(denied["tokens"], denied["block_lengths"], None) in g for g in site_gsubs)
    phrase_set, matcher = load_cleaning_set(os_client, current_run(os_client, alias))
    cleaner = Cleaner(phrase_set, CleanerConfig(fields=("text",), mode="strip", skip_missing=True, id_field=None,
                                                scope_field="site", url_field="url"), templates=matcher)
    stored = index_through(os_client, f"{index_prefix}new", pipeline_id, new_pages)
    a = compare(new_pages, [r.doc for r in cleaner.clean_batch(new_pages)], stored)
    assert a.extra == 0 and a.other_fields_differ == 0
    assert a.cleaner_removed > 0 and a.share >= 0.85, a


def test_windows_are_what_the_pipeline_leaves_to_the_cleaner():
    # the measure itself: a page where the cleaner removes more than the exact pipeline text
    pages = [{"text": "a b c d e"}]
    a = compare(pages, [{"text": "a e"}], [{"text": "a c e"}])
    assert (a.cleaner_removed, a.pipeline_removed, a.shared, a.extra) == (3, 2, 2, 0)
    a = compare(pages, [{"text": "a e"}], [{"text": "b e"}])
    assert a.extra == 1 and a.pages_with_extra == 1
    assert token_lists(["A b", "a B"])[0] == token_lists(["A b", "a B"])[1]


def test_elasticsearch_gets_its_own_form_or_one_line_naming_what_it_lacks(es_client, elasticsearch_url,  # noqa: F811
                                                                         tmp_path):
    (tmp_path / "phrases.jsonl").write_text(json.dumps(EXACT) + "\n")
    (tmp_path / "templates.jsonl").write_text("".join(json.dumps(r) + "\n" for r in TEMPLATES))
    engine = engine_of(es_client)
    pipeline_id = "bstest-scoped-es"
    res = CliRunner().invoke(cli, ["pipeline", "--phrases", str(tmp_path / "phrases.jsonl"), "--url", elasticsearch_url,
                                   "--pipeline-id", pipeline_id, "--site-field", "site", "--url-field", "url"])
    needed = ["gsub", "remove", "script", "set", "trim"]  # no copy: Elasticsearch copies with set + copy_from
    missing = engine.missing_processors(needed)
    if missing:  # the integ-test distribution: no ingest-common, no lang-painless
        assert res.exit_code == 1
        error = [line for line in res.output.splitlines() if line.startswith("Error:")]
        assert error == [f"Error: --url {elasticsearch_url}: {engine.name} lacks the ingest processor(s) "
                         f"{', '.join(missing)} the pipeline needs (modules ingest-common and lang-painless); "
                         "clean through `bloomspan serve` instead"]
        assert "copy" not in error[0] and "set" in error[0]
        assert pipeline_id not in (es_client.ingest.get_pipeline(ignore=[404]) or {})
        return
    try:  # a full distribution: the same pages, the same cleaning as on OpenSearch
        assert res.exit_code == 0, res.output
        pages = [{**p, **OTHER} for p in PAGES if "text" in p]
        stored = index_through(es_client, "bstest-scoped-es", pipeline_id, pages)
        a = compare(pages, [r.doc for r in _cleaner().clean_batch(pages)], stored)
        assert a.extra == 0 and a.identical_pages == len(pages) and a.other_fields_differ == 0
    finally:
        es_client.indices.delete(index="bstest-scoped-es", ignore=[404])
        es_client.ingest.delete_pipeline(id=pipeline_id, ignore=[404])


@pytest.mark.parametrize("flag", ["--site-field", "--url-field"])
def test_a_field_clash_is_one_line_naming_the_flag(flag, tmp_path):
    (tmp_path / "phrases.jsonl").write_text(json.dumps(EXACT) + "\n")
    args = ["pipeline", "--phrases", str(tmp_path / "phrases.jsonl"), "--print", flag, "text"]
    if flag == "--url-field":
        args += ["--site-field", "site"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and f"Invalid value for {flag}" in res.output and "Traceback" not in res.output
