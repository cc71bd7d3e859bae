"""kill -9 a real `mine` process while it reads and while it publishes, several times; a
restart completes and publishes exactly what an uninterrupted run publishes, and a reader
of the alias only ever sees complete phrase sets."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from bench.published_run import published
from bloomspan.sidecar.cli.main import cli
from bloomspan.sidecar.errors import CheckpointError
from bloomspan.sidecar.publish.template_index import physical_indices
from bloomspan.sidecar.run.mining_run import MineConfig, run_mining
from tests.support.sidecar_helpers import ENGINE, AliasReader, make_source, web_docs

N_DOCS = 300


class FailingClient:
    """The real client, except that its Nth search raises."""

    def __init__(self, client, fail_at):
        self._c, self.calls, self.fail_at = client, 0, fail_at

    def __getattr__(self, name):
        return getattr(self._c, name)

    def search(self, *a, **kw):
        self.calls += 1
        if self.calls == self.fail_at:
            raise ConnectionError("injected failure")
        return self._c.search(*a, **kw)

    def scroll(self, *a, **kw):
        self.calls += 1
        if self.calls == self.fail_at:
            raise ConnectionError("injected failure")
        return self._c.scroll(*a, **kw)


def _command(url, src, tpl, lease, work_dir) -> list[str]:
    return [sys.executable, "-m", "bloomspan.sidecar.cli.cluster", "mine", "--url", url, "--index", src,
            "--template-index", tpl, "--lease-index", lease, "--work-dir", str(work_dir), "--sigma", "5",
            "--min-length", "5", "--engine", ENGINE, "--batch-size", "20", "--slices", "2", "--checkpoint-seconds", "0",
            "--bulk-docs", "10", "--pit-keep-alive", "1m", "--progress", "lines", "--no-report", "--json"]


def _run_until(cmd, stage: str, at_least: float, timeout: float = 120.0) -> tuple[bool, list[str]]:
    """Start ``cmd``; SIGKILL it as soon as it reports ``stage`` with done >= at_least
    (a share of the stage's total when at_least < 1). Returns (killed, stderr lines read)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        for line in proc.stderr:
            lines.append(line)
            parts = line.split()
            if len(parts) >= 3 and parts[0] == "bloomspan:" and parts[1] == stage:
                done, _, total = parts[2].partition("/")
                if int(done) >= (at_least * int(total) if at_least < 1 and total else at_least):
                    os.kill(proc.pid, signal.SIGKILL)
                    proc.wait()
                    return True, lines
            if time.monotonic() > deadline:
                break
        proc.wait(timeout=timeout)
        return False, lines
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_kill_during_scan_and_publish_then_restart(os_client, index_prefix, opensearch_url, tmp_path):
    src, tpl, lease = f"{index_prefix}src", f"{index_prefix}tpl", f"{index_prefix}lease"
    make_source(os_client, src, web_docs(N_DOCS), shards=2)
    # Reference: one uninterrupted run into another template index.
    ref_tpl = f"{index_prefix}ref"
    run_mining(MineConfig.from_flags(index=src, url=opensearch_url, sigma=5, min_length=5, engine=ENGINE, template_index=ref_tpl,
                          work_dir=str(tmp_path / "ref"), lease_index=lease), client=os_client)
    expected = published(os_client, ref_tpl)
    assert expected["phrases"], "the corpus must have boilerplate for this test to mean anything"

    work = tmp_path / "work"
    cmd = _command(opensearch_url, src, tpl, lease, work)
    kills_scan = kills_publish = 0
    with AliasReader(os_client, tpl) as reader:
        for at in (30, 150):  # the first (full) run, killed while reading at two depths
            killed, lines = _run_until(cmd, "scan", at)
            assert killed, "".join(lines[-20:])
            kills_scan += 1
            assert (work / "run" / "checkpoint.json").exists()
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)  # resumes and completes
        assert done.returncode == 0, done.stderr[-3000:]
        assert '"resumed": true' in done.stdout and '"kind": "full"' in done.stdout
        # The next run is incremental (the alias now exists): kill it while listing, then
        # several times while it writes the template index.
        killed, lines = _run_until(cmd, "list", 80)
        assert killed, "".join(lines[-20:])
        kills_scan += 1
        for at in (0.1, 0.4, 0.7):  # shares of the documents to write
            killed, lines = _run_until(cmd, "publish", at)
            if killed:
                kills_publish += 1
                states = physical_indices(os_client, tpl)
                assert not any(s["aliased"] and not s["complete"] for s in states.values())
        assert (work / "run" / "mined" / "meta.json").exists()  # the mine phase ended before the kills
        final = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert final.returncode == 0, final.stderr[-3000:]
        time.sleep(0.2)
    # The restart after kills while publishing publishes the saved mined run: it mines nothing again.
    stages = {line.split()[1] for line in final.stderr.splitlines() if line.startswith("bloomspan: ")}
    assert "publish" in stages and not stages & {"mine", "list", "fetch", "assemble"}, stages
    assert kills_scan == 3 and kills_publish == 3
    assert reader.violations == [], reader.violations[:5]
    assert reader.complete_views > 0 and len(reader.runs_seen) >= 2
    assert '"resumed": true' in final.stdout
    assert published(os_client, tpl) == expected
    # Leftovers of killed attempts are gone, the kept runs are complete.
    states = physical_indices(os_client, tpl)
    assert all(s["complete"] for s in states.values()) and len(states) <= 3
    assert not (work / "run").exists()


@pytest.mark.parametrize("mode", ["pit", "scroll"])
def test_resume_in_process_after_a_failing_page(os_client, index_prefix, opensearch_url, tmp_path, mode):
    """An exception mid-scan (the 5th search fails) that the run does not wait out
    (outage_seconds=0) leaves a checkpoint; the next run resumes from it (PIT: from the saved
    _seq_no positions; scroll: unfinished units re-read, the duplicates dropped) and
    publishes what an uninterrupted run does."""
    src = f"{index_prefix}src"
    make_source(os_client, src, web_docs(300), shards=3)
    base = dict(index=src, url=opensearch_url, sigma=5, min_length=5, engine=ENGINE, lease_index=f"{index_prefix}lease",
                batch_size=25, slices=2, checkpoint_seconds=0, scan_mode=mode, outage_seconds=0)
    run_mining(MineConfig.from_flags(**base, template_index=f"{index_prefix}ref", work_dir=str(tmp_path / "ref")),
               client=os_client)

    cfg = MineConfig.from_flags(**base, template_index=f"{index_prefix}tpl", work_dir=str(tmp_path / "w"))
    with pytest.raises(Exception, match="injected failure"):
        run_mining(cfg, client=FailingClient(os_client, 5))
    assert (tmp_path / "w" / "run" / "checkpoint.json").exists()
    summary = run_mining(cfg, client=os_client)
    assert summary.resumed and summary.docs_seen == 300
    assert published(os_client, f"{index_prefix}tpl") == published(os_client, f"{index_prefix}ref")


class OutageClient:
    """The real client, except that from its Nth search on the cluster is "down" for
    ``seconds``: every search, scroll and new point in time is refused as by a closed port,
    and the points in time opened before are gone afterwards, as after a node restart."""

    def __init__(self, client, fail_at: int, seconds: float):
        self._c, self.calls, self.fail_at, self.seconds = client, 0, fail_at, seconds
        self.down_since: float | None = None
        self.pits: list[str] = []
        self.refused = 0

    def __getattr__(self, name):
        return getattr(self._c, name)

    def _gate(self) -> None:
        from opensearchpy.exceptions import ConnectionError as ClientConnectionError

        self.calls += 1
        if self.down_since is None and self.calls >= self.fail_at:
            self.down_since = time.monotonic()
            if self.pits:
                self._c.delete_pit(body={"pit_id": self.pits})  # a restart loses every point in time
        if self.down_since is not None and time.monotonic() - self.down_since < self.seconds:
            self.refused += 1
            raise ClientConnectionError("N/A", "[Errno 111] Connection refused (injected)", None)

    def search(self, *a, **kw):
        self._gate()
        return self._c.search(*a, **kw)

    def scroll(self, *a, **kw):
        self._gate()
        return self._c.scroll(*a, **kw)

    def create_pit(self, *a, **kw):
        if self.down_since is not None:
            self._gate()
        pit = self._c.create_pit(*a, **kw)
        self.pits.append(pit["pit_id"])
        return pit


@pytest.mark.parametrize("mode", ["pit", "scroll"])
def test_a_cluster_that_goes_away_mid_scan_is_waited_for_in_the_same_run(os_client, index_prefix, opensearch_url,
                                                                         tmp_path, mode, caplog):
    """The cluster refuses connections for 3 s from the 5th search on and forgets its points
    in time (a restart): the run waits, goes on in new points in time from the saved
    positions (scroll: re-reads the units), and publishes what an uninterrupted run does,
    in one run, with a line when the wait starts (it was a failed run to start again)."""
    src = f"{index_prefix}src"
    make_source(os_client, src, web_docs(300), shards=3)
    base = dict(index=src, url=opensearch_url, sigma=5, min_length=5, engine=ENGINE, lease_index=f"{index_prefix}lease",
                batch_size=25, slices=2, checkpoint_seconds=0, scan_mode=mode)
    run_mining(MineConfig.from_flags(**base, template_index=f"{index_prefix}ref", work_dir=str(tmp_path / "ref")),
               client=os_client)
    client = OutageClient(os_client, 5, seconds=3.0)
    with caplog.at_level("INFO", logger="bloomspan"):
        summary = run_mining(MineConfig.from_flags(**base, template_index=f"{index_prefix}tpl", work_dir=str(tmp_path / "w")),
                             client=client)
    assert client.refused > 0 and not summary.resumed and summary.docs_seen == 300
    assert published(os_client, f"{index_prefix}tpl") == published(os_client, f"{index_prefix}ref")
    waits = [r.getMessage() for r in caplog.records if "waiting up to" in r.getMessage()]
    # one line per unit that met the outage (a page in flight when the contexts went sees them lost)
    assert 1 <= len(waits) <= 2 and all("\n" not in w for w in waits), waits
    assert any("Connection refused" in w for w in waits), waits
    if mode == "pit":
        assert any("new point in time" in r.getMessage() for r in caplog.records)


def test_a_checkpoint_of_another_version_is_refused_and_kept(os_client, index_prefix, opensearch_url, tmp_path):
    """The checkpoint of a run stopped mid-scan, rewritten with another version (an older or a
    newer bloomspan's), is refused with a one-line message naming the file and the fix, and
    stays on disk untouched; put back, it resumes and publishes what an uninterrupted run does."""
    from bloomspan.sidecar.run.run_state import VERSION

    src = f"{index_prefix}src"
    make_source(os_client, src, web_docs(200), shards=2)
    base = dict(index=src, url=opensearch_url, sigma=5, min_length=5, engine=ENGINE, lease_index=f"{index_prefix}lease",
                batch_size=25, slices=2, checkpoint_seconds=0, outage_seconds=0)
    run_mining(MineConfig.from_flags(**base, template_index=f"{index_prefix}ref", work_dir=str(tmp_path / "ref")),
               client=os_client)
    cfg = MineConfig.from_flags(**base, template_index=f"{index_prefix}tpl", work_dir=str(tmp_path / "w"))
    with pytest.raises(Exception, match="injected failure"):
        run_mining(cfg, client=FailingClient(os_client, 4))
    path = tmp_path / "w" / "run" / "checkpoint.json"
    saved = json.loads(path.read_text())
    assert saved["version"] == VERSION and saved["phase"] == "scan"

    for other in (VERSION - 1, VERSION + 1):
        path.write_text(json.dumps({**saved, "version": other}))
        with pytest.raises(CheckpointError) as info:
            run_mining(cfg, client=os_client)
        message = str(info.value)
        assert f"checkpoint version {other}, this bloomspan reads {VERSION}" in message and str(path) in message
        assert f"delete {path.parent}" in message and "\n" not in message
        # `bloomspan mine` says the same in one line, no traceback.
        res = CliRunner().invoke(cli, ["mine", "--url", opensearch_url, "--index", src, "--template-index",
                                       f"{index_prefix}tpl", "--work-dir", str(tmp_path / "w"), "--lease-index",
                                       f"{index_prefix}lease", "--sigma", "5", "--min-length", "5", "--engine",
                                       ENGINE, "--progress", "none"])
        assert res.exit_code == 1 and "Traceback" not in res.output, res.output
        assert f"checkpoint version {other}, this bloomspan reads {VERSION}" in res.output
        assert json.loads(path.read_text())["version"] == other

    path.write_text(json.dumps(saved))
    summary = run_mining(cfg, client=os_client)
    assert summary.resumed and summary.docs_seen == 200
    assert published(os_client, f"{index_prefix}tpl") == published(os_client, f"{index_prefix}ref")


def test_a_run_killed_right_after_publishing_is_aliased_as_it_is(os_client, index_prefix, opensearch_url, tmp_path):
    """kill -9 right after ``publish N/N`` (the run index complete, the alias not moved yet):
    ``runs`` marks that index ``interrupted``, never as a finished run beside the current one,
    and the restart moves the alias to it without reading, mining or writing anything again."""
    from bloomspan.sidecar.publish.template_index import list_runs

    src, tpl, lease = f"{index_prefix}src", f"{index_prefix}tpl", f"{index_prefix}lease"
    make_source(os_client, src, web_docs(200), shards=2)
    work = tmp_path / "work"
    cmd = _command(opensearch_url, src, tpl, lease, work)
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=300)  # a published run to start from
    assert first.returncode == 0, first.stderr[-3000:]
    os_client.index(index=src, id="new-doc", body={"text": "a page added after the first run"}, refresh=True)
    killed, lines = _run_until(cmd, "publish", 0.9999)
    assert killed, "".join(lines[-20:])
    states = physical_indices(os_client, tpl)
    complete = [i for i, s in states.items() if s["complete"] and not s["aliased"]]
    rows = {r["physical_index"]: r for r in list_runs(os_client, tpl)}
    for index in complete:
        assert rows[index]["status"] == "interrupted" and not rows[index]["current"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert summary["resumed"] and summary["docs_seen"] == 201
    stages = {line.split()[1] for line in done.stderr.splitlines() if line.startswith("bloomspan: ")}
    assert not stages & {"scan", "list", "fetch", "assemble", "mine"}, stages
    if complete:  # killed after the index was complete: that very index is published
        assert summary["physical_index"] == complete[0]
    assert all(r["status"] != "interrupted" for r in list_runs(os_client, tpl))
