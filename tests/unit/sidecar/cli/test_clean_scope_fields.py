"""`bloomspan clean --site-field/--url-field` naming a field no document has: a one-line note
naming the flag, the field and the fields seen (site-scoped records silently applied to nothing)."""
from __future__ import annotations

from click.testing import CliRunner

from bloomspan.corpora import generate_web, write_jsonl
from bloomspan.sidecar.cli.main import cli


def _templates(tmp_path):
    corpus = tmp_path / "web.jsonl"
    write_jsonl(generate_web(120, 2), corpus)
    templates = tmp_path / "t.jsonl"
    res = CliRunner().invoke(cli, ["templates", "--jsonl", str(corpus), "--out", str(templates)])
    assert res.exit_code == 0, res.output
    return corpus, templates


def _clean(corpus, templates, out, *flags):
    return CliRunner().invoke(cli, ["clean", "--phrases", str(templates), "--in", str(corpus), "--out", str(out),
                                    *flags])


def test_a_scope_field_no_document_has_is_named_with_the_fields_seen(tmp_path):
    corpus, templates = _templates(tmp_path)
    res = _clean(corpus, templates, tmp_path / "c.jsonl", "--site-field", "sitex", "--url-field", "urlx")
    assert res.exit_code == 0, res.output
    notes = [line for line in res.output.splitlines() if line.startswith("note: --")]
    assert len(notes) == 2 and "Traceback" not in res.output
    assert notes[0].startswith("note: --site-field sitex: no document of") and "site-scoped records" in notes[0]
    assert notes[1].startswith("note: --url-field urlx: no document of") and "section records" in notes[1]
    assert all("fields seen: id, url, site" in n for n in notes)


def test_fields_the_documents_hold_give_no_note(tmp_path):
    corpus, templates = _templates(tmp_path)
    res = _clean(corpus, templates, tmp_path / "c.jsonl", "--site-field", "site", "--url-field", "url")
    assert res.exit_code == 0, res.output
    assert "has this field" not in res.output
