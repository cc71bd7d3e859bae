"""Curation on the real node: a denied phrase is applied by no path (proxy, clean, exported
pipeline, annotate) and stays denied after a re-mine; a dry run leaves the alias where it
is and promote moves it; shadow mode stores the text as sent with the spans strip would
remove, and a pattern switches from shadow to strip without a restart."""
from __future__ import annotations

import dataclasses
import json
import time

from click.testing import CliRunner
from opensearchpy import OpenSearch, helpers

from bloomspan.engine.text.tokenizer import tokenize
from bloomspan.sidecar.cli.main import cli
from bloomspan.sidecar.publish.template_index import aliased_indices, list_runs
from bloomspan.sidecar.run.mining_run import MineConfig, run_mining
from bloomspan.sidecar.serve.service import create_app
from bloomspan.sidecar.serve.state import ServeConfig
from tests.support.navigation_pages import texinfo_site
from tests.support.service_thread import serve_in_thread
from tests.support.sidecar_helpers import ENGINE, make_source

COOKIE = "We use cookies to improve your experience on this website today"
FOOTER = "All rights reserved by Acme Corporation and its partners worldwide"
DENIED = "all rights reserved by acme corporation"  # inside the mined footer phrase
N_DOCS = 30


def _docs(n: int = N_DOCS, offset: int = 0) -> list[dict]:
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    return [{"id": str(offset + i), "site": f"site{i % 2}.example",
             "text": f"{COOKIE}. Page {offset + i} tells about {words[i % 10]} {words[(i * 3) % 10]} number {i}. "
                     f"{FOOTER}."} for i in range(n)]


def _mine_config(url: str, prefix: str, work, **kw) -> MineConfig:
    return MineConfig.from_flags(index=f"{prefix}src", url=url, sigma=5, min_length=5, engine=ENGINE, site_field="site",
                      template_index=f"{prefix}tpl", work_dir=str(work), lease_index=f"{prefix}lease", bulk_docs=50,
                      **kw)


def _cli(*args) -> str:
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 0, res.output
    return res.output


def _phrase_texts(client, alias: str) -> list[str]:
    return [h["_source"]["text"] for h in helpers.scan(client, index=alias, query={"query": {"term": {"kind": "phrase"}}})]


def _footer_kept(text: str) -> bool:
    return "all rights reserved by acme corporation" in text.lower()


def _cookie_removed(text: str) -> bool:
    return "we use cookies" not in text.lower()


def test_denied_phrase_is_applied_by_no_path_and_survives_a_remine(opensearch_url, os_client, index_prefix, tmp_path):
    make_source(os_client, f"{index_prefix}src", _docs())
    first = run_mining(_mine_config(opensearch_url, index_prefix, tmp_path / "work"))
    alias = f"{index_prefix}tpl"
    assert any(_footer_kept(t) for t in _phrase_texts(os_client, alias)), "the footer was mined"
    conn = ["--url", opensearch_url, "--template-index", alias]
    out = _cli("curate", "deny", "All rights reserved by ACME Corporation!", "--why", "legal notice is content",
               "--who", "tester", *conn)
    assert "1 phrase(s)" in out and first.physical_index in out
    listed = json.loads(_cli("curate", "list", "--json", *conn))
    assert [d["text"] for d in listed] == [DENIED] and listed[0]["who"] == "tester"
    explained = json.loads(_cli("explain", "--id", "3", "--json", *conn))
    (touched,) = explained["curation"]
    assert touched["entry_id"] == listed[0]["entry_id"] and touched["phrases"]
    assert [p for p in explained["phrases"] if p.get("denied_by")], explained["phrases"]

    # clean --template-index: the denied footer stays, the cookie banner goes
    src = tmp_path / "new.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in _docs(4, offset=100)))
    _cli("clean", "--template-index", alias, "--url", opensearch_url, "--in", str(src), "--out",
         str(tmp_path / "clean.jsonl"))
    cleaned = [json.loads(line) for line in (tmp_path / "clean.jsonl").read_text().splitlines()]
    assert all(_footer_kept(d["text"]) and _cookie_removed(d["text"]) for d in cleaned), cleaned

    # the exported pipeline leaves the denied phrase alone
    pipeline_id = f"{index_prefix}clean"
    _cli("pipeline", "--template-index", alias, "--url", opensearch_url, "--pipeline-id", pipeline_id)
    body = json.dumps(os_client.ingest.get_pipeline(id=pipeline_id)).lower()
    assert "cookies" in body and "acme" not in body
    os_client.index(index=f"{index_prefix}piped", id="1", body={"text": _docs(1, offset=200)[0]["text"]},
                    params={"pipeline": pipeline_id, "refresh": "true"})
    piped = os_client.get(index=f"{index_prefix}piped", id="1")["_source"]["text"]
    assert _footer_kept(piped) and _cookie_removed(piped)

    # the proxy
    target = f"{index_prefix}crawl"
    app = create_app(ServeConfig(upstream_url=opensearch_url, clean_indices=(f"{index_prefix}crawl*",),
                                 template_index=alias))
    with serve_in_thread(app) as (url, _loop):
        client = OpenSearch(hosts=[url], timeout=60)
        ok, errors = helpers.bulk(client, [{"_index": target, "_id": d["id"], "_source": d}
                                           for d in _docs(4, offset=300)], refresh=True)
        assert ok == 4 and not errors
    for hit in os_client.search(index=target, body={"query": {"match_all": {}}})["hits"]["hits"]:
        assert _footer_kept(hit["_source"]["text"]) and _cookie_removed(hit["_source"]["text"]), hit

    # a re-mine (full, and with --annotate) publishes no phrase holding the denied one
    second = run_mining(_mine_config(opensearch_url, index_prefix, tmp_path / "work", full=True, annotate=True))
    texts = _phrase_texts(os_client, alias)
    assert texts and not any(DENIED in t for t in texts)
    assert second.curation["filtered"] >= 1 and second.curation["denied"] == 1
    run = os_client.get(index=second.physical_index, id="run")["_source"]
    assert run["report"]["curation"]["filtered"] == second.curation["filtered"]
    source = os_client.get(index=f"{index_prefix}src", id="3")["_source"]
    footer_at = source["text"].index(FOOTER)
    assert source["bloomspan"]["spans"], "annotate marked the cookie banner"
    for start, end in source["bloomspan"]["spans"]:  # character offsets; none inside the denied footer
        assert end <= footer_at or start >= footer_at + len(FOOTER), (start, end)

    # removing the entry applies the phrase again where it is still published (the cookie
    # sentence never was denied); the history keeps the removed entry
    _cli("curate", "remove", listed[0]["entry_id"], *conn)
    assert json.loads(_cli("curate", "list", "--json", *conn)) == []
    assert json.loads(_cli("curate", "list", "--all", "--json", *conn))[0]["status"] == "removed"


def test_site_scoped_deny_and_allow_below_sigma(opensearch_url, os_client, index_prefix, tmp_path):
    make_source(os_client, f"{index_prefix}src", _docs())
    run_mining(_mine_config(opensearch_url, index_prefix, tmp_path / "work"))
    alias = f"{index_prefix}tpl"
    conn = ["--url", opensearch_url, "--template-index", alias]
    _cli("curate", "deny", COOKIE, "--site", "site0.example", *conn)
    _cli("curate", "allow", "tells about", *conn)  # two tokens: never mined at --min-length 5
    src = tmp_path / "new.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in _docs(4, offset=100)))
    _cli("clean", "--template-index", alias, "--url", opensearch_url, "--in", str(src), "--out",
         str(tmp_path / "clean.jsonl"), "--site-field", "site")
    cleaned = [json.loads(line) for line in (tmp_path / "clean.jsonl").read_text().splitlines()]
    for doc in cleaned:
        assert "tells about" not in doc["text"]
        assert _cookie_removed(doc["text"]) == (doc["site"] != "site0.example"), doc
    # the pipeline cannot tell sites apart: the site-scoped deny keeps the phrase out entirely
    pipeline_id = f"{index_prefix}scoped"
    _cli("pipeline", "--template-index", alias, "--url", opensearch_url, "--pipeline-id", pipeline_id)
    assert "cookies" not in json.dumps(os_client.ingest.get_pipeline(id=pipeline_id)).lower()


def test_dry_run_leaves_the_alias_and_promote_moves_it(opensearch_url, os_client, index_prefix, tmp_path):
    make_source(os_client, f"{index_prefix}src", _docs())
    first = run_mining(_mine_config(opensearch_url, index_prefix, tmp_path / "work"))
    alias = f"{index_prefix}tpl"
    helpers.bulk(os_client, ({"_index": f"{index_prefix}src", "_id": f"n{i}", "_source": {
        # a site of its own: on the pages of site0 the detector's records, not a run's exact
        # phrases, decide (TemplateConfig.exact_phrases_on_sites)
        "site": "news.example", "text": f"Subscribe to our weekly newsletter for more deals now. Item {i}."}}
        for i in range(8)), refresh=True)
    dry = run_mining(_mine_config(opensearch_url, index_prefix, tmp_path / "work", dry_run=True))
    assert dry.dry_run and aliased_indices(os_client, alias) == [first.physical_index]
    runs = {r["physical_index"]: r for r in list_runs(os_client, alias)}
    assert runs[dry.physical_index]["complete"] and not runs[dry.physical_index]["current"]
    conn = ["--url", opensearch_url, "--template-index", alias]
    shown = json.loads(_cli("diff", "--json", *conn))
    assert shown["a"]["run_id"] == first.run_id and shown["b"]["run_id"] == dry.run_id and shown["b"]["dry_run"]
    assert any("newsletter" in row["text"] for row in shown["added"])
    assert shown["examples"] and shown["examples"][0]["id"].startswith("n")
    assert "newsletter" in _cli("diff", *conn)
    _cli("curate", "allow", "free shipping on all orders", "--why", "known banner", *conn)
    _cli("report", "--html", str(tmp_path / "report.html"), *conn)
    page = (tmp_path / "report.html").read_text()
    assert 'id="curation"' in page and "free shipping on all orders" in page and "known banner" in page
    assert 'id="run-diff"' in page and dry.run_id in page and "newsletter" in page
    out = _cli("promote", dry.run_id, *conn)
    assert dry.physical_index in out and aliased_indices(os_client, alias) == [dry.physical_index]


def test_shadow_mode_stores_the_text_with_the_spans_strip_would_remove(opensearch_url, os_client, index_prefix,
                                                                         tmp_path):
    make_source(os_client, f"{index_prefix}src", _docs())
    run_mining(_mine_config(opensearch_url, index_prefix, tmp_path / "work"))
    alias = f"{index_prefix}tpl"
    pattern = f"{index_prefix}crawl*"
    target = f"{index_prefix}crawl"
    config = ServeConfig(upstream_url=opensearch_url, clean_indices=(pattern,), template_index=alias,
                         scope_field="site", mode="shadow", reload_seconds=0.2)
    doc = _docs(1, offset=500)[0]
    with serve_in_thread(create_app(config)) as (url, _loop):
        client = OpenSearch(hosts=[url], timeout=60)
        client.index(index=target, id="shadow", body=doc, refresh=True)
        metrics = client.transport.perform_request("GET", "/metrics")
        shadow = client.transport.perform_request("GET", "/shadow")
        _cli("curate", "mode", pattern, "strip", "--url", opensearch_url, "--template-index", alias)
        deadline = time.time() + 30
        while client.transport.perform_request("GET", "/shadow")["modes"][pattern] != "strip":
            assert time.time() < deadline, "the mode switch was not picked up"
            time.sleep(0.1)
        client.index(index=target, id="strip", body=doc, refresh=True)
    stored = os_client.get(index=target, id="shadow")["_source"]
    assert stored["text"] == doc["text"]
    spans = stored["bloomspan"]["spans"]
    removed = "".join(doc["text"][s["start"]:s["end"]] for s in spans).lower()
    assert "we use cookies" in removed and "acme corporation" in removed
    assert 0 < stored["bloomspan"]["boilerplate_ratio"] <= 1
    stripped = os_client.get(index=target, id="strip")["_source"]
    assert _cookie_removed(stripped["text"]) and not _footer_kept(stripped["text"])
    for span in spans:  # strip removed exactly the marked text
        assert doc["text"][span["start"]:span["end"]] not in stripped["text"]
    site = doc["site"]
    assert f'bloomspan_shadow_tokens_total{{part="would_strip",site="{site}"}}' in metrics
    row = next(r for r in shadow["sites"] if r["site"] == site)
    assert row["documents"] == 1 and 0 < row["would_strip_tokens"] <= row["tokens"]


def test_curate_mode_refuses_an_unknown_mode(opensearch_url, index_prefix):
    res = CliRunner().invoke(cli, ["curate", "mode", "crawl-*", "erase", "--url", opensearch_url,
                                   "--template-index", f"{index_prefix}tpl"])
    assert res.exit_code == 2 and "erase" in res.output


def test_a_denied_link_survives_the_line_shapes_of_its_site_but_not_of_another(opensearch_url, os_client,
                                                                                index_prefix, tmp_path):
    # a Texinfo manual: its navigation bars repeat no line, only their shape (line-shape records)
    pages = texinfo_site(40, 1) + texinfo_site(30, 2, "b.example")
    make_source(os_client, f"{index_prefix}src", [{k: p[k] for k in ("id", "text", "site", "url")} for p in pages],
                shards=1)
    config = MineConfig.from_flags(index=f"{index_prefix}src", url=opensearch_url, template_index=f"{index_prefix}tpl",
                        work_dir=str(tmp_path / "work"), lease_index=f"{index_prefix}lease", site_field="site",
                        url_field="url", templates=True)
    first = run_mining(config, client=os_client)
    alias = f"{index_prefix}tpl"
    conn = ["--url", opensearch_url, "--template-index", alias]
    manual, other = pages[3], pages[43]
    link = manual["text"].split("\n")[-1].split(" | ")[0]  # "Previous: <title>", in both of its bars
    other_link = other["text"].split("\n")[-1].split(" | ")[0]
    src = tmp_path / "pages.jsonl"
    src.write_text("".join(json.dumps({k: p[k] for k in ("id", "text", "site", "url")}) + "\n"
                           for p in (manual, other)))

    def cleaned() -> list[str]:
        _cli("clean", "--template-index", alias, "--url", opensearch_url, "--in", str(src), "--out",
             str(tmp_path / "clean.jsonl"), "--site-field", "site", "--url-field", "url")
        return [json.loads(line)["text"] for line in (tmp_path / "clean.jsonl").read_text().splitlines()]

    before = cleaned()
    assert all("Previous" not in t and "Next" not in t for t in before), before  # the bars are removed
    _cli("curate", "deny", link, *conn)  # global
    _cli("curate", "deny", other_link, "--site", manual["site"], *conn)  # scoped to the manual: not b.example's
    kept, other_out = cleaned()
    assert kept.count(link) == 2 and "Next" not in kept and "Index" not in kept, kept
    body = manual["text"].split("\n")[1:-1]
    assert kept == "\n".join([link, *body, link]), kept  # exactly the denied link came back
    assert other_out == before[1] and other_link not in other_out
    # a re-mine reports the templates' coverage without the globally denied link's occurrences
    again = run_mining(dataclasses.replace(config, scan=dataclasses.replace(config.scan, full=True)), client=os_client)
    n_link = len(tokenize(link))
    occurrences = sum(" ".join(tokenize(p["text"])).count(" ".join(tokenize(link))) for p in pages)
    dropped = first.templates["covered_tokens"] - again.templates["covered_tokens"]
    assert 0 < dropped <= occurrences * n_link, (dropped, occurrences, n_link)
