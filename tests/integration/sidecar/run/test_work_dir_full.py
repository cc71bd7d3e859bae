"""A work directory that runs out of space stops ``mine --index`` with one line naming the
directory (it was an OSError traceback); once there is space again the same command
resumes from its checkpoint and publishes what an uninterrupted run does.

The file system fills here by a budget on ``os.pwrite`` (the writes of the corpus store and
the doc log), so the test needs no mount; ``bench/disk_full_bench.py`` does the same on a
real tmpfs."""
from __future__ import annotations

import errno
import json
import os

import pytest
from click.testing import CliRunner

from bench.published_run import published
from bloomspan.sidecar.cli.main import cli
from bloomspan.sidecar.run.mining_run import MineConfig, run_mining
from tests.support.sidecar_helpers import ENGINE, make_source, web_docs

pytestmark = pytest.mark.integration


def _full_after(budget: int):
    """``os.pwrite`` that fails with ENOSPC once ``budget`` bytes have been written."""
    real = os.pwrite
    written = [0]

    def pwrite(fd, data, offset):
        size = memoryview(data).nbytes
        if written[0] + size > budget:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written[0] += size
        return real(fd, data, offset)
    return pwrite


def test_a_full_work_dir_is_one_line_and_the_rerun_resumes(os_client, index_prefix, opensearch_url, tmp_path,
                                                            monkeypatch):
    src, lease = f"{index_prefix}src", f"{index_prefix}lease"
    make_source(os_client, src, web_docs(300), shards=2)
    run_mining(MineConfig.from_flags(index=src, url=opensearch_url, sigma=5, min_length=5, engine=ENGINE, lease_index=lease,
                          template_index=f"{index_prefix}ref", work_dir=str(tmp_path / "ref")), client=os_client)
    work = tmp_path / "work"
    args = ["mine", "--url", opensearch_url, "--index", src, "--template-index", f"{index_prefix}tpl",
            "--lease-index", lease, "--work-dir", str(work), "--sigma", "5", "--min-length", "5", "--engine", ENGINE,
            "--batch-size", "25", "--checkpoint-seconds", "0", "--progress", "none", "--no-report", "--json"]
    with monkeypatch.context() as m:
        m.setattr(os, "pwrite", _full_after(200_000))
        res = CliRunner().invoke(cli, args)
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and f"no space left in the work dir {work}" in lines[0], res.output
    assert "run the same command again" in lines[0]
    assert (work / "run" / "checkpoint.json").exists()

    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["resumed"] is True
    assert published(os_client, f"{index_prefix}tpl") == published(os_client, f"{index_prefix}ref")
