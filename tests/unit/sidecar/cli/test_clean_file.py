"""clean_file, the body of `bloomspan clean` called directly: a run's records clean a file into
its outputs, the summary comes back and is reported; a config without exactly one run fails."""
from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from bloomspan.corpora import generate_web, write_jsonl
from bloomspan.ingest.clean.cleaner import CleanerConfig
from bloomspan.sidecar.cli.clean_file import TEMPLATES_WITHOUT_SITE_NOTE, CleanFileConfig, clean_file
from bloomspan.sidecar.cli.main import cli

DOCS = 120


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A generated crawl and the template records `bloomspan templates` mined from it."""
    tmp = tmp_path_factory.mktemp("run")
    corpus, templates = tmp / "web.jsonl", tmp / "t.jsonl"
    write_jsonl(generate_web(DOCS, 2), corpus)
    res = CliRunner().invoke(cli, ["templates", "--jsonl", str(corpus), "--out", str(templates)])
    assert res.exit_code == 0, res.output
    return corpus, templates


def _config(run, out, **cleaner) -> CleanFileConfig:
    corpus, templates = run
    return CleanFileConfig(cleaner=CleanerConfig(**{"fields": ("text",), **cleaner}, skip_missing=True, id_field=None), in_path=str(corpus),
                           out_path=str(out), phrases_path=str(templates))


def test_a_file_is_cleaned_into_its_outputs_and_reported(run, tmp_path, capsys):
    out = tmp_path / "clean.jsonl"
    summary = clean_file(_config(run, out, scope_field="site"))
    assert summary.cleaned + summary.unchanged + summary.errors == DOCS and summary.cleaned > 0
    assert len(out.read_text().splitlines()) == DOCS
    assert (tmp_path / "clean.jsonl.errors.jsonl").exists()  # the default errors path beside --out
    captured = capsys.readouterr()
    assert captured.out.startswith(f"{DOCS:,} documents: {summary.cleaned:,} cleaned "
                                   f"({summary.with_boilerplate:,} with boilerplate), ")
    assert TEMPLATES_WITHOUT_SITE_NOTE not in captured.err


def test_pages_without_boilerplate_are_counted_apart_from_those_with_some(run, tmp_path, capsys):
    """Every page the cleaner writes counts as cleaned (it gets its ratio), so "3 cleaned ...
    boilerplate 0.00%" read as if something had been removed: the summary says how many had any."""
    corpus, templates = run
    plain = tmp_path / "plain.jsonl"
    pages = [json.loads(line) for line in corpus.read_text().splitlines()[:2]]
    pages += [{"id": "own-1", "site": pages[0]["site"], "text": "a page of its own words only"},
              {"id": "own-2", "site": pages[0]["site"], "text": "nothing here repeats anywhere"}]
    plain.write_text("".join(json.dumps(p) + "\n" for p in pages), encoding="utf-8")
    config = CleanFileConfig(cleaner=CleanerConfig(fields=("text",), scope_field="site", skip_missing=True,
                                                   id_field=None),
                             in_path=str(plain), out_path=str(tmp_path / "out.jsonl"), phrases_path=str(templates))
    summary = clean_file(config)
    assert (summary.cleaned, summary.with_boilerplate, summary.unchanged) == (4, 2, 0)
    assert capsys.readouterr().out.startswith("4 documents: 4 cleaned (2 with boilerplate), 0 unchanged, ")


def test_template_records_without_a_site_field_are_noted(run, tmp_path, capsys):
    clean_file(_config(run, tmp_path / "clean.jsonl"))
    assert TEMPLATES_WITHOUT_SITE_NOTE in capsys.readouterr().err


def test_a_field_no_document_holds_is_noted_after_the_summary(run, tmp_path, capsys):
    summary = clean_file(_config(run, tmp_path / "clean.jsonl", fields=("body",)))
    assert summary.tokens == 0
    assert "note: no document of" in capsys.readouterr().err


def test_a_parquet_input_with_a_jsonl_output_names_the_flag(run, tmp_path):
    corpus, templates = run
    parquet = tmp_path / "in.parquet"
    parquet.write_bytes(b"PAR1" + b"\0" * 16 + b"PAR1")  # Parquet by its magic bytes
    config = CleanFileConfig(cleaner=CleanerConfig(fields=("text",)), in_path=str(parquet), out_path=str(tmp_path / "o.jsonl"),
                             phrases_path=str(templates))
    with pytest.raises(click.BadParameter, match="name the output .parquet") as err:
        clean_file(config)
    assert err.value.param_hint == "--out"


@pytest.mark.parametrize("runs", [{}, {"phrases_path": "p.jsonl", "template_index": "tpl"}])
def test_a_config_names_exactly_one_run(runs):
    with pytest.raises(ValueError, match="give exactly one of them"):
        CleanFileConfig(cleaner=CleanerConfig(fields=("text",)), in_path="in.jsonl", out_path="out.jsonl", **runs)


def test_a_template_index_needs_its_cluster():
    with pytest.raises(ValueError, match="template_index='tpl' without cluster"):
        CleanFileConfig(cleaner=CleanerConfig(fields=("text",)), in_path="in.jsonl", out_path="out.jsonl", template_index="tpl")


def test_the_command_reports_what_the_function_does(run, tmp_path):
    """`bloomspan clean` is the function behind its flags: same outputs, byte for byte."""
    corpus, templates = run
    res = CliRunner().invoke(cli, ["clean", "--phrases", str(templates), "--in", str(corpus),
                                   "--out", str(tmp_path / "cli.jsonl"), "--site-field", "site"])
    assert res.exit_code == 0, res.output
    clean_file(_config(run, tmp_path / "direct.jsonl", scope_field="site"))
    cli_docs = [json.loads(line) for line in (tmp_path / "cli.jsonl").read_text().splitlines()]
    direct = [json.loads(line) for line in (tmp_path / "direct.jsonl").read_text().splitlines()]
    assert cli_docs == direct
