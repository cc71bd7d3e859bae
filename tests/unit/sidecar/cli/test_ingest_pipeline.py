"""export_run_pipeline, the body of `bloomspan pipeline` called directly: a run's phrases and
records as pipeline JSON on stdout (--print needs no cluster), what it applies on stderr, and
an export error naming its flag; a config without exactly one run fails."""
from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from bloomspan.corpora import generate_web, write_jsonl
from bloomspan.sidecar.cli.ingest_pipeline import PipelineConfig, export_run_pipeline
from bloomspan.sidecar.cli.main import cli
from bloomspan.sidecar.cluster.connection import ClusterConfig


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """Template records `bloomspan templates` mined from a generated crawl."""
    tmp = tmp_path_factory.mktemp("run")
    corpus, templates = tmp / "web.jsonl", tmp / "t.jsonl"
    write_jsonl(generate_web(120, 2), corpus)
    res = CliRunner().invoke(cli, ["templates", "--jsonl", str(corpus), "--out", str(templates)])
    assert res.exit_code == 0, res.output
    return str(templates)


def test_print_writes_the_pipeline_json_and_what_it_applies(records, capsys):
    export = export_run_pipeline(PipelineConfig(cluster=ClusterConfig(), phrases_path=records, scope_field="site",
                                                print_only=True))
    captured = capsys.readouterr()
    assert json.loads(captured.out) == export.body
    assert captured.err.startswith("pipeline: ") and "without --site-field" not in captured.err


def test_site_records_without_a_site_field_leave_nothing_and_say_so_in_one_line(records):
    """The crawl's records are all per site: without --site-field no phrase is left to export."""
    with pytest.raises(click.ClickException, match="the phrase set is empty: mine first"):
        export_run_pipeline(PipelineConfig(cluster=ClusterConfig(), phrases_path=records, print_only=True))


def test_an_export_error_names_its_flag(records):
    with pytest.raises(click.BadParameter, match="top") as err:
        export_run_pipeline(PipelineConfig(cluster=ClusterConfig(), phrases_path=records, top=0, print_only=True))
    assert err.value.param_hint == "--top"


def test_the_command_prints_what_the_function_returns(records, capsys):
    res = CliRunner().invoke(cli, ["pipeline", "--phrases", records, "--site-field", "site", "--print"])
    assert res.exit_code == 0, res.output
    export = export_run_pipeline(PipelineConfig(cluster=ClusterConfig(), phrases_path=records, scope_field="site",
                                                print_only=True))
    assert json.loads(res.stdout) == export.body


@pytest.mark.parametrize("runs", [{}, {"phrases_path": "p.jsonl", "template_index": "tpl"}])
def test_a_config_names_exactly_one_run(runs):
    with pytest.raises(ValueError, match="give exactly one of them"):
        PipelineConfig(cluster=ClusterConfig(), **runs)
