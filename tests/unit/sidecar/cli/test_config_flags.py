"""Flags and config dataclasses agree: every field has a flag, every flag fills a field, and
the one default of each knob is the dataclass's."""
from __future__ import annotations

from dataclasses import dataclass

import click
import pytest
from click.testing import CliRunner

from bloomspan.sidecar.cli import cluster
from bloomspan.sidecar.cli.config_flags import (
    CLEAN_FLAGS,
    CONNECTION_FLAGS,
    MINE_FLAGS,
    PIPELINE_FLAGS,
    SERVE_FLAGS,
    FlagBinding,
)
from bloomspan.sidecar.cli.connection_flags import connection_options
from bloomspan.sidecar.cli.main import cli


@pytest.mark.parametrize("binding, command", [
    (MINE_FLAGS, cli.commands["mine"]),        # the merged JSON Lines + cluster command
    (MINE_FLAGS, cluster.mine),                 # python -m bloomspan.sidecar.cli.cluster mine
    (SERVE_FLAGS, cli.commands["serve"]),
    (CLEAN_FLAGS, cli.commands["clean"]),       # the cleaner's knobs; the run and files fill CleanFileConfig
    (PIPELINE_FLAGS, cli.commands["pipeline"]),
], ids=["mine", "cluster-mine", "serve", "clean", "pipeline"])
def test_flags_match_the_config_dataclass(binding, command):
    assert binding.mismatches(command) == []


def test_connection_flags_are_cluster_config_fields_with_its_defaults():
    @click.command()
    @connection_options
    def reference(**_):
        pass

    assert CONNECTION_FLAGS.mismatches(reference) == []


def test_serve_names_its_cluster_upstream_url_and_waits_its_own_timeout():
    params = {p.name: p for p in cli.commands["serve"].params}

    @click.command()
    @connection_options
    def reference(**_):
        pass

    for ref in reference.params:  # the same option set, declared once
        if ref.name not in ("url", "timeout"):
            assert (params[ref.name].opts, params[ref.name].secondary_opts, params[ref.name].default) == \
                (ref.opts, ref.secondary_opts, ref.default), ref.name
    assert params["upstream_url"].opts == ["--upstream-url"] and "url" not in params
    assert params["timeout"].opts == ["--timeout"] and params["timeout"].default == 120.0
    kwargs = SERVE_FLAGS.config_kwargs({**{n: None for n in params}, "timeout": 7.0})
    assert kwargs["upstream_timeout"] == 7.0 and "timeout" not in kwargs


# ---------------------------------------------------------------------- the checker itself
@dataclass(frozen=True)
class Knobs:
    sigma: int = 20
    work_dir: str = "./work"
    fields: tuple[str, ...] = ("text",)


def _command(*options):
    def body(**_):
        pass

    for option in reversed(options):
        body = option(body)
    return click.command("knobs")(body)


SIGMA = click.option("--sigma", type=int, default=20)
WORK_DIR = click.option("--work-dir", default="./work")
FIELD = click.option("--field", "fields", multiple=True, default=("text",))


def test_the_checker_passes_a_matching_command():
    assert FlagBinding(Knobs).mismatches(_command(SIGMA, WORK_DIR, FIELD)) == []


def test_the_checker_finds_a_field_without_a_flag():
    problems = FlagBinding(Knobs).mismatches(_command(SIGMA, FIELD))
    assert problems == ["field work_dir has no flag (add one, or list it in fields_without_flag)"]
    assert FlagBinding(Knobs, fields_without_flag={"work_dir": "fixed"}).mismatches(_command(SIGMA, FIELD)) == []


def test_the_checker_finds_a_flag_without_a_field():
    command = _command(SIGMA, WORK_DIR, FIELD, click.option("--top", type=int, default=10))
    assert FlagBinding(Knobs).mismatches(command) == [
        "flag --top fills no field of "
        f"{Knobs!r} (add the field, or list it in flags_without_field)"]
    assert FlagBinding(Knobs, flags_without_field={"top": "output"}).mismatches(command) == []


def test_the_checker_finds_a_default_written_twice_differently():
    command = _command(click.option("--sigma", type=int, default=10), WORK_DIR,
                       click.option("--field", "fields", multiple=True, default=("body",)))
    assert FlagBinding(Knobs).mismatches(command) == [
        "--sigma defaults to 10, field sigma to 20 (the dataclass holds the default)",
        "--fields defaults to ('body',), field fields to ('text',) (the dataclass holds the default)"]
    assert FlagBinding(Knobs, own_defaults={"sigma": "why", "fields": "why"}).mismatches(command) == []


def test_the_checker_follows_renamed_parameters():
    command = _command(click.option("--sigma", "min_df", type=int, default=20), WORK_DIR, FIELD)
    binding = FlagBinding(Knobs, param_for_field={"sigma": "min_df"})
    assert binding.mismatches(command) == []
    assert binding.config_kwargs({"min_df": 5, "work_dir": "w", "fields": ("a",)}) == \
        {"sigma": 5, "work_dir": "w", "fields": ("a",)}


# ---------------------------------------------------------------------- the commands use them
def test_mine_top_default_reaches_the_run_config(monkeypatch):
    """Regression: --top said 10, MineConfig 20, and the command took max(top, 20)."""
    from bloomspan.sidecar.run.mine_config import PublishSection

    seen = {}

    def stop(cluster_config):  # the config is built before the cluster is asked anything
        raise click.ClickException("stop")

    monkeypatch.setattr("bloomspan.sidecar.cli.cluster.checked_client", stop)
    original = PublishSection.__post_init__

    def record(self):
        seen["top"] = self.top
        original(self)

    monkeypatch.setattr(PublishSection, "__post_init__", record)
    res = CliRunner().invoke(cli, ["mine", "--index", "crawl"])
    assert res.exit_code == 1 and "stop" in res.output and seen["top"] == PublishSection.top == 20
    res = CliRunner().invoke(cli, ["mine", "--index", "crawl", "--top", "5"])
    assert seen["top"] == 5


def test_serve_flag_errors_name_the_flag():
    res = CliRunner().invoke(cli, ["serve", "--port", "0", "--password", "pw-S3cret-1", "--username", "u"])
    assert res.exit_code == 2 and "--port" in res.output and "pw-S3cret-1" not in res.output
    res = CliRunner().invoke(cli, ["serve", "--timeout", "soon"])
    assert res.exit_code == 2 and "--timeout" in res.output


def test_a_bad_mine_knob_is_a_usage_error_naming_its_flag_and_section_field():
    res = CliRunner().invoke(cli, ["mine", "--index", "crawl", "--keep-runs", "0"])
    assert res.exit_code == 2 and "--keep-runs" in res.output and "publish.keep_runs=0" in res.output
    res = CliRunner().invoke(cli, ["mine", "--index", "crawl", "--no-templates", "--url", "ftp://x",
                                   "--password", "pw-S3cret-2", "--username", "u"])
    assert res.exit_code == 2 and "--url" in res.output and "cluster.url" in res.output
    assert "pw-S3cret-2" not in res.output


def test_pipeline_flags_build_its_config_with_the_cluster_section():
    command = cli.commands["pipeline"]
    params = command.make_context("pipeline", [], resilient_parsing=True).params
    config = PIPELINE_FLAGS.build({**params, "template_index": "tpl", "url": "http://node:9201", "timeout": 5.0})
    assert config.cluster.url == "http://node:9201" and config.cluster.timeout == 5.0
    assert (config.template_index, config.pipeline_id, config.scope_field) == ("tpl", "bloomspan-clean", None)
