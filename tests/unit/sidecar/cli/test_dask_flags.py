"""`mine --dask local:N` with N far beyond the machine's cores is one line before Dask starts
anything (local:100000 spawned processes until the command hung or died with a traceback)."""
from __future__ import annotations

from click.testing import CliRunner

from bloomspan.corpora import generate_web, write_jsonl
from bloomspan.sidecar.cli import dask_flags
from bloomspan.sidecar.cli.main import cli


def _mine(tmp_path, address):
    corpus = tmp_path / "web.jsonl"
    write_jsonl(generate_web(30, 1), corpus)
    return CliRunner().invoke(cli, ["mine", "--jsonl", str(corpus), "--field", "text", "--id-field", "id",
                                    "--out", str(tmp_path / "out"), "--dask", address, "--progress", "none"])


def test_local_workers_beyond_four_per_core_are_refused_naming_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(dask_flags.os, "cpu_count", lambda: 2)
    res = _mine(tmp_path, "local:100000")
    assert res.exit_code == 2 and "Traceback" not in res.output
    line = [x for x in res.output.splitlines() if x.startswith("Error:")]
    assert line == ["Error: Invalid value for '--dask': local:100000 starts 100,000 worker processes on this "
                    "machine's 2 core(s); give local:N with N <= 8, or a scheduler address such as "
                    "tcp://scheduler:8786 for a larger cluster"]
    assert not (tmp_path / "out").exists()


def test_the_limit_and_other_addresses_pass_the_check(monkeypatch):
    monkeypatch.setattr(dask_flags.os, "cpu_count", lambda: 3)
    assert dask_flags.most_local_workers() == 12
    for address in ("local:12", "tcp://scheduler:8786", None, "local:0"):  # local:0 is DaskConfig's to refuse
        assert dask_flags.check_dask_address(None, None, address) == address
