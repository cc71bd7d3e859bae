"""Cluster CLI: user errors name the option, secrets never echo, --help is cheap."""
from __future__ import annotations

from click.testing import CliRunner

from bloomspan.sidecar.cli.cluster import cluster_cli


def _run(*args):
    return CliRunner().invoke(cluster_cli, list(args), catch_exceptions=False)


def test_help_lists_commands():
    r = _run("--help")
    assert r.exit_code == 0
    for name in ("mine", "setup", "rollback", "runs", "report", "explain"):
        assert name in r.output


def test_mine_without_index_is_a_usage_error():
    r = _run("mine")
    assert r.exit_code == 2 and "--index" in r.output


def test_bad_values_name_the_option():
    r = _run("mine", "--index", "src", "--sigma", "1")
    assert r.exit_code == 2 and "--sigma" in r.output
    r = _run("mine", "--index", "src", "--template-index", "Bad*Name")
    assert r.exit_code == 2 and "--template-index" in r.output
    r = _run("mine", "--index", "src", "--url", "ftp://x")
    assert r.exit_code == 2 and "--url" in r.output


def test_password_never_echoed_on_errors():
    r = _run("mine", "--index", "src", "--password", "pw-SECRET-9")
    assert r.exit_code == 2 and "pw-SECRET-9" not in r.output and "--password" in r.output
    r = _run("report", "--url", "http://127.0.0.1:9", "--username", "u", "--password", "pw-SECRET-9",
             "--timeout", "1")
    assert r.exit_code == 1 and "pw-SECRET-9" not in r.output and "127.0.0.1:9" in r.output


def test_env_variables_configure_flags():
    r = CliRunner().invoke(cluster_cli, ["mine"], env={"BLOOMSPAN_MINE_INDEX": "src", "BLOOMSPAN_MINE_SIGMA": "1"})
    assert r.exit_code == 2 and "--sigma" in r.output


def test_template_config_errors_name_the_option_and_the_field(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"skeleton": {"line_length": 0}}')
    r = _run("mine", "--index", "src", "--templates", "--template-config", str(bad))
    assert r.exit_code == 2 and "--template-config" in r.output and "skeleton.line_length" in r.output
    bad.write_text('{"no_such_knob": 1}')
    r = _run("mine", "--index", "src", "--templates", "--template-config", str(bad))
    assert r.exit_code == 2 and "no_such_knob" in r.output and "known:" in r.output
    bad.write_text("not json")
    r = _run("mine", "--index", "src", "--templates", "--template-config", str(bad))
    assert r.exit_code == 2 and "--template-config" in r.output


def test_template_config_reaches_the_detector():
    from bloomspan.sidecar.run.mining_run import MineConfig

    c = MineConfig.from_flags(index="src", templates=True, template_config_path={"skeleton": {"site_echo_length": 6}})
    assert c.templates.detector_config().skeleton.site_echo_length == 6 and c.templates.detector_config().slots is True
    assert c.params()["template_config"]["skeleton"]["site_echo_length"] == 6
    assert MineConfig.from_flags(index="src").params()["template_config"] is None
