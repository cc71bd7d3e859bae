"""`bloomspan templates` and `mine --template-config` with out-of-range knobs: one line naming
the flag or key, exit 2, no file written (a knob above int64 failed inside numba after mining)."""
from __future__ import annotations

import json

from click.testing import CliRunner

from bloomspan.corpora import generate_web, write_jsonl
from bloomspan.sidecar.cli.main import cli


def test_templates_refuses_a_line_shape_gap_above_int64(tmp_path):
    corpus = tmp_path / "web.jsonl"
    write_jsonl(generate_web(40, 2), corpus)
    out = tmp_path / "t.jsonl"
    res = CliRunner().invoke(cli, ["templates", "--jsonl", str(corpus), "--out", str(out),
                                   "--line-shape-gap", str(10**20)])
    assert res.exit_code == 2, res.output
    assert "--line-shape-gap" in res.output and "2**63-1" in res.output and "Traceback" not in res.output
    assert not out.exists()


def test_mine_refuses_a_template_config_knob_above_int64_before_mining(tmp_path):
    corpus = tmp_path / "web.jsonl"
    write_jsonl(generate_web(40, 2), corpus)
    knobs = tmp_path / "knobs.json"
    knobs.write_text(json.dumps({"section_line_length": 10**20}))
    res = CliRunner().invoke(cli, ["mine", "--jsonl", str(corpus), "--field", "text", "--id-field", "id",
                                   "--out", str(tmp_path / "out"), "--site-field", "site", "--url-field", "url",
                                   "--template-config", str(knobs), "--progress", "none"])
    assert res.exit_code == 2, res.output
    assert "--template-config" in res.output and "section_line_length" in res.output and "2**63-1" in res.output
    assert not (tmp_path / "out" / "phrases.jsonl").exists()


def test_templates_refuses_a_group_field_no_document_holds(tmp_path):
    corpus = tmp_path / "web.jsonl"
    write_jsonl(generate_web(40, 2), corpus)
    out = tmp_path / "t.jsonl"
    res = CliRunner().invoke(cli, ["templates", "--jsonl", str(corpus), "--out", str(out), "--site-field", "sitex"])
    assert res.exit_code == 2, res.output
    line = [x for x in res.output.splitlines() if x.startswith("Error:")]
    assert line == [f"Error: Invalid value for --site-field: 'sitex': none of the 40 documents of {corpus} has this "
                    "field (fields seen: id, url, site, lang, page_type, text, truth); name the field that holds it"]
    assert not out.exists()
    res = CliRunner().invoke(cli, ["templates", "--jsonl", str(corpus), "--out", str(out), "--site-field", "",
                                   "--url-field", ""])
    assert res.exit_code == 0 and out.exists(), res.output  # '' is a corpus without sites, as the help says


def test_mine_refuses_a_site_field_none_of_the_first_documents_holds(tmp_path):
    corpus = tmp_path / "web.jsonl"
    write_jsonl(generate_web(40, 2), corpus)
    res = CliRunner().invoke(cli, ["mine", "--jsonl", str(corpus), "--field", "text", "--out", str(tmp_path / "out"),
                                   "--site-field", "site", "--url-field", "link", "--progress", "none"])
    assert res.exit_code == 2, res.output
    assert "Error: Invalid value for --url-field: 'link': none of the 40 documents of" in res.output
    assert not (tmp_path / "out").exists()


def test_templates_default_fields_the_file_lacks_are_a_corpus_without_them(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"text": f"Home | Docs\nbody {i}"}) + "\n" for i in range(12)))
    res = CliRunner().invoke(cli, ["templates", "--jsonl", str(corpus), "--out", str(tmp_path / "t.jsonl")])
    assert res.exit_code == 0, res.output
