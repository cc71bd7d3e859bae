"""A `mine --jsonl` run with sites writes the detector's line-shape records, and `clean --phrases
DIR/phrases.jsonl --site-field site --url-field url` applies them: it covers exactly the tokens
the run reported, and strips bars whose titles change on every page."""
from __future__ import annotations

import json

import numpy as np

from bloomspan.corpora import generate_web, write_jsonl
from bloomspan.corpora.quality_eval import ingest_coverage, prepare_corpus
from bloomspan.engine.mining.bloomspan import mine_bloomspan
from bloomspan.engine.mining.config import MiningConfig
from bloomspan.sidecar.publish.phrase_records import phrase_records
from bloomspan.sidecar.run.run_templates import TemplateOptions, detect_run_templates
from tests.support.navigation_pages import texinfo_site


def _docs():
    web = [{k: d[k] for k in ("id", "text", "site", "url")} for d in generate_web(120, 4, n_sites=3)]
    return texinfo_site(40, 1) + texinfo_site(30, 2, "other.example") + web


def test_the_cleaner_covers_exactly_what_the_run_reported_with_line_shapes():
    c = prepare_corpus([{**d, "truth": {"template_spans": d.get("spans", [])}} for d in _docs()])
    mined = mine_bloomspan(c.tokens, c.doc_offsets, MiningConfig(sigma=20, min_length=10))
    exact = [{**r, "min_length": 10} for r in phrase_records(mined.phrases, c.vocabulary)]
    records, stats = detect_run_templates(c.tokens, c.doc_offsets, c.block_offsets, c.vocabulary, c.sites, c.urls,
                                          TemplateOptions(site_field="site", url_field="url"), mined.coverage)
    shapes = [r for r in records if r.get("kind") == "line_shape"]
    assert {r["scope"] for r in shapes} >= {"manual.example", "other.example"}
    assert stats["detector"]["line_shape_tokens"] > 0
    for match in ("phrases", "windows"):
        covered = ingest_coverage(c, records[:1] + exact + records[1:], match=match)
        assert int(covered.sum()) == stats["covered_tokens"], match
    # Without the line-shape records the cleaner finds less: the bars' changing titles.
    without = ingest_coverage(c, [r for r in records[:1] + exact + records[1:] if r.get("kind") != "line_shape"],
                              match="phrases")
    assert int(without.sum()) < stats["covered_tokens"]


def test_mine_then_clean_on_the_cli_strips_the_bars(tmp_path):
    from click.testing import CliRunner

    from bloomspan.sidecar.cli.main import cli

    docs = _docs()
    src = tmp_path / "pages.jsonl"
    write_jsonl([{k: d[k] for k in ("id", "text", "site", "url")} for d in docs], src)
    out = tmp_path / "run"
    runner = CliRunner()
    res = runner.invoke(cli, ["mine", "--jsonl", str(src), "--field", "text", "--id-field", "id", "--out", str(out),
                              "--progress", "none", "--site-field", "site", "--url-field", "url"])
    assert res.exit_code == 0, res.output
    kinds = [json.loads(line).get("kind") for line in (out / "templates.jsonl").read_text().splitlines()]
    assert "line_shape" in kinds
    # the summary counts them, as it counts skeletons (it said "0 template phrases, 1 page skeletons")
    assert f"{kinds.count('line_shape'):,} line shapes" in res.output, res.output
    report = json.loads((out / "report.json").read_text())
    assert report["templates"]["line_shapes"] == kinds.count("line_shape")
    res = runner.invoke(cli, ["clean", "--phrases", str(out / "phrases.jsonl"), "--in", str(src), "--out",
                              str(tmp_path / "clean.jsonl"), "--site-field", "site", "--url-field", "url"])
    assert res.exit_code == 0, res.output
    cleaned = [json.loads(line) for line in (tmp_path / "clean.jsonl").read_text().splitlines()]
    by_id = {d["id"]: d for d in cleaned}
    for page in docs[:70]:
        text = by_id[page["id"]]["text"]
        assert "Previous" not in text and "Contents" not in text, text[:200]
        body = page["text"].split("\n")[2:-1]
        assert all(line in text for line in body)
    assert np.mean([len(by_id[p["id"]]["text"]) < len(p["text"]) for p in docs[:70]]) == 1.0
