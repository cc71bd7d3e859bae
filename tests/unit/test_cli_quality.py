"""`bloomspan templates`, `quality` and `real-corpus` through click's CliRunner."""
from __future__ import annotations

import json

from click.testing import CliRunner

from bloomspan.sidecar.cli import cli
from bloomspan.sidecar.corpora import generate_web, write_jsonl


def test_templates_and_quality_on_a_generated_crawl(tmp_path):
    corpus = tmp_path / "web.jsonl"
    write_jsonl(generate_web(400, 2), corpus)
    runner = CliRunner()
    res = runner.invoke(cli, ["templates", "--jsonl", str(corpus), "--out", str(tmp_path / "t.jsonl")])
    assert res.exit_code == 0, res.output
    records = [json.loads(l) for l in (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()]
    assert records and all(r["tokens"] and r["id"].startswith("t") for r in records)
    assert any(r.get("scope") for r in records)  # site-scoped templates exist
    res = runner.invoke(cli, ["quality", "--jsonl", str(corpus)])
    assert res.exit_code == 0, res.output
    rows = [l for l in res.output.splitlines() if l.startswith("| ") and "%" in l]
    assert len(rows) == 4 and "template detector" in rows[-1]


def test_templates_names_a_bad_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a"}\n{"text": 3}\n')
    res = CliRunner().invoke(cli, ["templates", "--jsonl", str(bad), "--out", str(tmp_path / "t.jsonl")])
    assert res.exit_code == 1 and "bad.jsonl:2" in res.output
    assert not (tmp_path / "t.jsonl").exists()


def test_real_corpus_without_sites_says_what_to_install(tmp_path, monkeypatch):
    import bloomspan.sidecar.real_corpus as rc

    monkeypatch.setattr(rc, "installed_sites", lambda sites: [])
    res = CliRunner().invoke(cli, ["real-corpus", "--out", str(tmp_path / "r.jsonl")])
    assert res.exit_code == 1 and "apt-get install" in res.output
