"""`bloomspan templates`, `quality` and `real-corpus` through click's CliRunner."""
from __future__ import annotations

import json

from click.testing import CliRunner

from bloomspan.corpora import generate_web, write_jsonl
from bloomspan.ingest.records.phrase_set import PhraseSet
from bloomspan.ingest.records.record_kinds import NOT_PHRASE_KINDS
from bloomspan.sidecar.cli.main import cli


def test_templates_and_quality_on_a_generated_crawl(tmp_path):
    corpus = tmp_path / "web.jsonl"
    write_jsonl(generate_web(400, 2), corpus)
    runner = CliRunner()
    res = runner.invoke(cli, ["templates", "--jsonl", str(corpus), "--out", str(tmp_path / "t.jsonl")])
    assert res.exit_code == 0, res.output
    records = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()]
    assert records[0]["kind"] == "config" and records[0]["template_config"]["slots"] is True
    phrases = [r for r in records if r["kind"] not in NOT_PHRASE_KINDS]
    assert phrases and all(r["tokens"] and r["id"].startswith("t") for r in phrases)
    assert any(r.get("scope") for r in phrases)  # site-scoped templates exist
    assert {r["scope"] for r in records if r["kind"] == "skeleton"} <= {r.get("scope") for r in phrases}
    # the same file loads as a plain phrase set (records that hold no phrase skipped) for `bloomspan clean`
    assert len(PhraseSet.from_jsonl(tmp_path / "t.jsonl")) == len(phrases)
    res = runner.invoke(cli, ["quality", "--jsonl", str(corpus)])
    assert res.exit_code == 0, res.output
    rows = [line for line in res.output.splitlines() if line.startswith("| ") and "%" in line]
    assert len(rows) == 4 and "template detector" in rows[-1]


def test_templates_names_a_bad_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a"}\n{"text": 3}\n')
    res = CliRunner().invoke(cli, ["templates", "--jsonl", str(bad), "--out", str(tmp_path / "t.jsonl")])
    assert res.exit_code == 1 and "bad.jsonl:2" in res.output
    assert not (tmp_path / "t.jsonl").exists()


def test_real_corpus_without_sites_says_what_to_install(tmp_path, monkeypatch):
    import bloomspan.corpora.real_corpus as rc

    monkeypatch.setattr(rc, "installed_sites", lambda sites: [])
    res = CliRunner().invoke(cli, ["real-corpus", "--out", str(tmp_path / "r.jsonl")])
    assert res.exit_code == 1 and "apt-get install" in res.output


def test_templates_options_map_one_to_one_onto_template_config(tmp_path):
    """Every field of TemplateConfig and of its SkeletonConfig has one option of `bloomspan
    templates`, which shows the field's own default; no option given builds the defaults."""
    import dataclasses

    from bloomspan.engine.templates.config import SkeletonConfig, TemplateConfig
    from bloomspan.sidecar.cli.quality import _template_config, templates

    names = {p.name for p in templates.params if p.name.startswith("cfg_")}
    wanted = {f"cfg_{f.name}" for f in TemplateConfig.option_fields()}
    wanted |= {f"cfg_skeleton__{f.name}" for f in dataclasses.fields(SkeletonConfig)}
    assert names == wanted
    defaults = {**{f.name: getattr(TemplateConfig(), f.name) for f in TemplateConfig.option_fields()},
                **{f"skeleton.{f.name}": f.default for f in dataclasses.fields(SkeletonConfig)}}
    for p in templates.params:
        if p.name.startswith("cfg_"):
            name = p.name[len("cfg_"):].replace("__", ".")
            shown = defaults[name] if name != "skeleton" else True
            assert f"(default: {'none' if shown is None else shown})" in p.help, name
    assert _template_config({}) == TemplateConfig()
    assert _template_config({"cfg_skeleton__line_length": 8}).skeleton.line_length == 8
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"text": f"Home | Docs\nbody {i}", "site": "s"}) + "\n" for i in range(12)))
    runner = CliRunner()
    out = tmp_path / "t.jsonl"
    res = runner.invoke(cli, ["templates", "--jsonl", str(corpus), "--out", str(out), "--no-skeleton",
                              "--scoped-min-length", "none", "--sigma-floor", "3"])
    assert res.exit_code == 0, res.output
    assert not any(json.loads(x)["kind"] == "skeleton" for x in out.read_text().splitlines())
    res = runner.invoke(cli, ["templates", "--jsonl", str(corpus), "--out", str(out), "--skeleton-anchor-fraction", "2"])
    assert res.exit_code != 0 and "skeleton.anchor_fraction" in res.output and "(0, 1]" in res.output
    assert "--skeleton-anchor-fraction" in res.output


def test_templates_shows_progress_as_mine_does(tmp_path):
    corpus = tmp_path / "web.jsonl"
    write_jsonl(generate_web(120, 2), corpus)
    res = CliRunner().invoke(cli, ["templates", "--jsonl", str(corpus), "--out", str(tmp_path / "t.jsonl")])
    assert res.exit_code == 0, res.output
    lines = [line for line in res.stderr.splitlines() if line.startswith("bloomspan: ")]  # stderr is no terminal
    assert "bloomspan: tokenize 120/120" in lines, res.stderr
    last = [line for line in lines if line.startswith("bloomspan: templates ")][-1]
    done, total = last.rsplit(" ", 1)[1].split("/")
    assert done == total and int(total) > 1, lines
