"""One set of connection flags on every cluster command, and a node that is down is one line."""
from __future__ import annotations

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from bloomspan.sidecar.cli.connection_flags import CONNECTION_PARAMS, connection_options
from bloomspan.sidecar.cli.failures import BloomspanGroup, cluster_answer_message
from bloomspan.sidecar.cli.main import cli

DOWN = "http://127.0.0.1:9"  # nothing listens on the discard port
DOWN_LINE = (f"Error: cannot reach {DOWN} (connection refused): is the cluster up? start one with "
             "deploy/local/opensearch.sh start")
SECRET = "pw-S3cret-77"

# Every command that talks to a cluster, with the least it needs to get that far.
CLUSTER_COMMANDS = {
    "mine": ["--index", "crawl"],
    "setup": [],
    "runs": [],
    "rollback": [],
    "report": [],
    "explain": ["--id", "d1"],
    "clean": ["--template-index", "t", "--in", __file__, "--out", "/nonexistent-dir/out.jsonl"],
    "pipeline": ["--template-index", "t"],
    "dedup": ["--index", "crawl", "--annotate"],
    "collapse": ["--index", "crawl", "--query", "q"],
    "demo": ["--docs", "50"],
}


def _reference_params():
    @connection_options
    def reference(**_):
        pass

    return {p.name: p for p in click.command()(reference).params}


def test_every_command_with_url_has_the_one_connection_flag_set():
    reference = _reference_params()
    with_url = {name for name, cmd in cli.commands.items() if any(p.name == "url" for p in cmd.params)}
    assert set(CLUSTER_COMMANDS) <= with_url
    for name in sorted(with_url):
        params = {p.name: p for p in cli.commands[name].params}
        for param in CONNECTION_PARAMS:
            assert param in params, f"{name} lacks --{param.replace('_', '-')}"
            mine, ref = params[param], reference[param]
            assert (mine.opts, mine.secondary_opts, mine.default) == (ref.opts, ref.secondary_opts, ref.default), \
                f"{name} --{param} differs from the shared connection options"


@pytest.mark.parametrize("command", sorted(CLUSTER_COMMANDS))
def test_a_node_that_is_down_is_one_line(command, tmp_path):
    res = CliRunner().invoke(cli, [command, "--url", DOWN, *CLUSTER_COMMANDS[command]])
    assert res.exit_code == 1, res.output
    assert res.output.strip().splitlines()[-1] == DOWN_LINE, res.output
    assert "Traceback" not in res.output


@pytest.mark.parametrize("command", ["report", "clean"])
def test_connection_flags_from_the_environment(command):
    env = {f"BLOOMSPAN_{command.upper()}_URL": f"http://miner:{SECRET}@127.0.0.1:9",
           f"BLOOMSPAN_{command.upper()}_TIMEOUT": "2"}
    args = [a for a in CLUSTER_COMMANDS[command]]
    res = CliRunner().invoke(cli, [command, *args], env=env)
    assert res.exit_code == 1 and DOWN_LINE in res.output and SECRET not in res.output, res.output
    res = CliRunner().invoke(cli, [command, *args], env={f"BLOOMSPAN_{command.upper()}_TIMEOUT": "0"})
    assert res.exit_code == 2 and "--timeout" in res.output


def test_a_node_that_is_down_prints_no_retry_noise():
    """Regression: ~176 lines of urllib3/opensearch-py retry tracebacks before the one line."""
    cmd = [sys.executable, "-m", "bloomspan.sidecar.cli.main", "mine", "--index", "crawl", "--url", DOWN]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.strip() == DOWN_LINE
    debug = subprocess.run([*cmd[:3], "--log-level", "DEBUG", *cmd[3:]], capture_output=True, text=True, timeout=120)
    assert debug.returncode == 1 and debug.stderr.strip().splitlines()[-1] == DOWN_LINE
    assert " DEBUG opensearch " in debug.stderr and " WARNING opensearch " not in debug.stderr


def test_a_cluster_lost_mid_command_is_one_line():
    """Any command of the group: a request that fails after the first check is not a traceback."""
    group = BloomspanGroup()

    @group.command()
    def lookup():
        from opensearchpy import OpenSearch

        OpenSearch(hosts=[DOWN], max_retries=0).search(index="x", body={})

    res = CliRunner().invoke(group, ["lookup"])
    assert res.exit_code == 1 and res.exception is not None and not isinstance(res.exception, ConnectionError)
    assert res.output.startswith("Error: cannot reach the cluster (connection refused)")


def test_a_bug_keeps_its_traceback():
    group = BloomspanGroup()

    @group.command()
    def broken():
        raise KeyError("a bug")

    res = CliRunner().invoke(group, ["broken"])
    assert isinstance(res.exception, KeyError)


def test_an_error_answer_is_named_by_its_type_and_reason():
    from opensearchpy.exceptions import NotFoundError

    exc = NotFoundError(404, "index_not_found_exception",
                        {"error": {"root_cause": [{"type": "index_not_found_exception", "reason": "no such index [x]"}],
                                   "type": "index_not_found_exception"}, "status": 404})
    assert cluster_answer_message(exc, "http://node:9200") == \
        "the cluster at http://node:9200 answered 404 (index_not_found_exception): no such index [x]"
