"""`mine --jsonl` with a site or URL field runs the template detector and writes templates.jsonl
next to phrases.jsonl; the cleaner loads both (and the run's min_length) from the phrases' path."""
from __future__ import annotations

import json

import numpy as np
import pytest

from bloomspan.corpora import generate_web, write_jsonl
from bloomspan.engine.mining.config import MiningConfig
from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
from bloomspan.ingest.match.loading import load_run_phrases
from bloomspan.ingest.records.phrase_set import PhraseSet
from bloomspan.sidecar.run.jsonl_mining import mine_jsonl
from bloomspan.sidecar.run.run_templates import TemplateOptions, TemplateOptionsError


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    path = tmp_path_factory.mktemp("crawl") / "web.jsonl"
    write_jsonl(generate_web(400, 5), path)
    return path


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_options_turn_the_detector_on_with_a_site_or_url_field_and_name_bad_flags():
    assert TemplateOptions().enabled is False
    assert TemplateOptions(site_field="site").enabled is True
    assert TemplateOptions(url_field="url").enabled is True
    assert TemplateOptions(site_field="site", enabled=False).enabled is False
    with pytest.raises(TemplateOptionsError, match="--templates"):
        TemplateOptions(enabled=True)
    with pytest.raises(TemplateOptionsError, match="--template-config.*sigma_fractoin"):
        TemplateOptions(site_field="site", config={"sigma_fractoin": 0.1})


def test_a_run_with_sites_writes_templates_next_to_phrases_and_the_cleaner_applies_both(crawl, tmp_path):
    out = tmp_path / "out"
    summary = mine_jsonl(str(crawl), "text", MiningConfig(sigma=20, min_length=10), str(out), id_field="id",
                         templates=TemplateOptions(site_field="site", url_field="url"))
    phrases = _lines(out / "phrases.jsonl")
    assert phrases and all(p["min_length"] == 10 for p in phrases)
    records = _lines(out / "templates.jsonl")
    assert records[0]["kind"] == "config" and any(r.get("kind") == "skeleton" for r in records)
    info = summary.report["templates"]
    assert info["file"] == "templates.jsonl" and info["phrases"] == sum(1 for r in records if "tokens" in r)
    assert json.loads((out / "report.json").read_text())["templates"]["skeletons"] == info["skeletons"]

    loaded = load_run_phrases(out / "phrases.jsonl")
    assert loaded.templates is not None and loaded.min_length == 10
    assert len(loaded.phrase_set) == len(phrases) + info["phrases"]
    docs = [json.loads(line) for line in crawl.read_text().splitlines()[:50]]
    config = CleanerConfig(fields=("text",), id_field="id", scope_field="site", url_field="url")
    everything = sum(r.covered_tokens for r in Cleaner(loaded.phrase_set, config, templates=loaded.templates)
                     .clean_batch(docs))
    plain = PhraseSet.from_jsonl(out / "phrases.jsonl")  # the same run's phrases without the detector's records
    only_phrases = sum(r.covered_tokens for r in Cleaner(plain, config).clean_batch(docs))
    assert everything > only_phrases > 0


def test_a_run_without_site_or_url_writes_no_templates_and_removes_a_stale_file(crawl, tmp_path):
    out = tmp_path / "out"
    (out).mkdir()
    (out / "templates.jsonl").write_text('{"kind": "config", "template_config": {}}\n')
    summary = mine_jsonl(str(crawl), "text", MiningConfig(sigma=20, min_length=10), str(out), id_field="id")
    assert "templates" not in summary.report
    assert not (out / "templates.jsonl").exists()
    loaded = load_run_phrases(out / "phrases.jsonl")
    assert loaded.templates is None and loaded.min_length == 10


def test_phrases_without_a_recorded_min_length_match_whole_whatever_report_json_says(tmp_path):
    """``mine`` records min_length on every phrase; a list without it is hand-made and matched
    whole, not given a min_length from a report.json beside it."""
    (tmp_path / "phrases.jsonl").write_text('{"text": "a b c d"}\n{"text": "b c d e f"}\n')
    (tmp_path / "report.json").write_text('{"min_length": 3}')
    loaded = load_run_phrases(tmp_path / "phrases.jsonl")
    assert loaded.min_length is None and [p.min_length for p in loaded.phrase_set] == [None, None]
    assert not any("report.json" in note for note in loaded.notes)


def test_the_cli_path_mine_with_sites_then_clean_applies_everything_the_run_wrote(crawl, tmp_path):
    from click.testing import CliRunner

    from bloomspan.sidecar.cli.main import cli

    runner = CliRunner()

    def boilerplate_share(*mine_flags: str) -> float:
        out = tmp_path / ("-".join(mine_flags) or "plain")
        res = runner.invoke(cli, ["mine", "--jsonl", str(crawl), "--field", "text", "--id-field", "id",
                                  "--out", str(out), "--progress", "none", *mine_flags])
        assert res.exit_code == 0, res.output
        assert (out / "templates.jsonl").exists() == ("--site-field" in mine_flags and "--no-templates" not in mine_flags)
        res = runner.invoke(cli, ["clean", "--phrases", str(out / "phrases.jsonl"), "--in", str(crawl), "--out",
                                  str(out / "clean.jsonl"), "--site-field", "site", "--url-field", "url"])
        assert res.exit_code == 0, res.output
        return float(res.output.split("boilerplate ")[1].split("%")[0])

    with_sites = boilerplate_share("--site-field", "site", "--url-field", "url")
    skipped = boilerplate_share("--site-field", "site", "--url-field", "url", "--no-templates")
    assert with_sites > skipped > 0



def test_the_covered_tokens_a_run_reports_are_what_the_cleaner_covers_on_its_pages(crawl):
    """With whole-phrase matching the cleaner applies exactly what the run counted: the
    detector's records, and the exact phrases only on pages of sites without records."""
    from bloomspan.corpora import read_jsonl
    from bloomspan.corpora.quality_eval import ingest_coverage, prepare_corpus
    from bloomspan.engine.mining.bloomspan import mine_bloomspan
    from bloomspan.sidecar.publish.phrase_records import phrase_records
    from bloomspan.sidecar.run.run_templates import detect_run_templates

    docs = list(read_jsonl(crawl))[:300] + [{**d, "site": "tiny.example"} for d in list(read_jsonl(crawl))[300:305]]
    c = prepare_corpus(docs)
    mined = mine_bloomspan(c.tokens, c.doc_offsets, MiningConfig(sigma=20, min_length=10))
    exact = [{**r, "min_length": 10} for r in phrase_records(mined.phrases, c.vocabulary)]
    records, stats = detect_run_templates(c.tokens, c.doc_offsets, c.block_offsets, c.vocabulary, c.sites, c.urls,
                                          TemplateOptions(site_field="site", url_field="url"), mined.coverage)
    covered = ingest_coverage(c, records[:1] + exact + records[1:], match="phrases")
    assert int(covered.sum()) == stats["covered_tokens"]
    tiny = np.arange(c.doc_offsets[300], c.tokens.shape[0])  # a site too small for records: exact phrases apply
    assert covered[tiny].tolist() == mined.coverage[tiny].tolist() and mined.coverage[tiny].any()
