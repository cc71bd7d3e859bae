"""`mine --index --dask`: the template index a distributed run publishes equals the
single-node one (phrases, bitmaps, doc map, coverage, report), and a worker killed with
SIGKILL while counting or while growing one of the growth shards changes nothing."""
from __future__ import annotations

import os
import signal
import threading

import pytest

from bench.published_run import published
from bloomspan.sidecar.distributed.cluster import DaskConfig
from bloomspan.sidecar.distributed.in_worker import PROGRESS_TOPIC
from bloomspan.sidecar.errors import ClusterConfigError
from bloomspan.sidecar.run.mining_run import MineConfig, run_mining
from tests.support.dask_helpers import local_cluster, planted_docs
from tests.support.sidecar_helpers import make_source, template_records, web_docs


@pytest.fixture(scope="module")
def cluster():
    with local_cluster(2) as c:
        yield c


def _config(index_prefix, url, tmp_path, name, **kw):
    return MineConfig.from_flags(index=f"{index_prefix}src", url=url, template_index=f"{index_prefix}{name}",
                      work_dir=str(tmp_path / name), lease_index=f"{index_prefix}lease", **kw)


def _compare(os_client, index_prefix, opensearch_url, tmp_path, dask, progress=None, **kw):
    run_mining(_config(index_prefix, opensearch_url, tmp_path, "one", **kw), client=os_client)
    summary = run_mining(_config(index_prefix, opensearch_url, tmp_path, "many", **kw), dask=dask,
                         progress=progress, client=os_client)
    one, many = published(os_client, f"{index_prefix}one"), published(os_client, f"{index_prefix}many")
    assert many["phrases"] == one["phrases"] and len(one["phrases"]) > 3
    assert many["doc_ids"] == one["doc_ids"]
    assert many["run"] == one["run"]  # counts, coverage bitmap, doc-id chunks
    assert many["report"] == one["report"]
    return summary


def test_random_corpus_with_skipped_documents(cluster, os_client, index_prefix, opensearch_url, tmp_path):
    docs = planted_docs(5, 500)
    docs[7]["text"] = "   "      # skipped: empty
    docs[9]["text"] = 42         # skipped: not text
    del docs[11]["text"]         # skipped: missing
    make_source(os_client, f"{index_prefix}src", docs, shards=3)
    events = []
    summary = _compare(os_client, index_prefix, opensearch_url, tmp_path, DaskConfig(cluster.scheduler_address),
                       progress=lambda *a: events.append(a), sigma=5, min_length=6)
    assert summary.docs_skipped == 3 and summary.docs_seen == 500
    assert max(e[1] for e in events if e[0] == "read") == 500


def test_web_crawl_with_site_clutter(cluster, os_client, index_prefix, opensearch_url, tmp_path):
    make_source(os_client, f"{index_prefix}src", list(web_docs(400)), shards=2)
    _compare(os_client, index_prefix, opensearch_url, tmp_path, DaskConfig(cluster.scheduler_address),
             sigma=8, min_length=8, site_field="site", templates=False)


def test_the_default_path_with_site_templates_publishes_what_one_node_publishes(cluster, os_client, index_prefix,
                                                                                opensearch_url, tmp_path):
    """A site field (the default path: exact phrases and the template detector): the Dask run
    publishes the same phrases, template records, run document and report as one node."""
    make_source(os_client, f"{index_prefix}src", list(web_docs(400)), shards=2)
    summary = _compare(os_client, index_prefix, opensearch_url, tmp_path, DaskConfig(cluster.scheduler_address),
                       sigma=8, min_length=8, site_field="site")
    one = template_records(os_client, f"{index_prefix}one")
    assert summary.templates and summary.templates["phrases"] > 0 and len(one) > 3
    assert template_records(os_client, f"{index_prefix}many") == one


def test_a_dry_run_on_dask_publishes_the_run_and_leaves_the_alias(cluster, os_client, index_prefix, opensearch_url,
                                                                  tmp_path):
    """The Dask run is the same run as on one node (phases, lease, publication), so
    ``--dry-run`` works there too: the run index is written complete, the alias stays."""
    from bloomspan.sidecar.publish.template_index import physical_indices

    make_source(os_client, f"{index_prefix}src", planted_docs(5, 200), shards=2)
    summary = run_mining(_config(index_prefix, opensearch_url, tmp_path, "dry", sigma=5, min_length=6,
                                 dry_run=True), dask=DaskConfig(cluster.scheduler_address), client=os_client)
    states = physical_indices(os_client, f"{index_prefix}dry")
    assert summary.dry_run and summary.phrases > 0
    assert states[summary.physical_index]["complete"] and not states[summary.physical_index]["aliased"]
    assert not (tmp_path / "dry" / "run").exists()  # finished: the run folder is gone


def test_options_that_need_one_process_are_refused(cluster, opensearch_url, index_prefix, tmp_path):
    with pytest.raises(ClusterConfigError, match="global_blocks"):
        run_mining(_config(index_prefix, opensearch_url, tmp_path, "x", site_field="site",
                           template_config_path={"global_blocks": True}), dask=DaskConfig(cluster.scheduler_address))


class _Killer:
    """Kills (SIGKILL) the worker process that reports ``stage`` first; the nanny restarts it."""

    def __init__(self, cluster, stage: str):
        from distributed import Client

        self.cluster, self.stage = cluster, stage
        self.client = Client(cluster.scheduler_address)
        self.killed: list[int] = []
        self.killed_shard: int | None = None
        self.starts: dict[tuple[str, int], int] = {}  # (stage, shard) -> tasks started
        self.lock = threading.Lock()
        self.client.subscribe_topic(PROGRESS_TOPIC, self.on_event)

    def on_event(self, event) -> None:
        _, msg = event
        with self.lock:
            at = (msg["stage"], msg["shard"])
            self.starts[at] = self.starts.get(at, 0) + (msg["done"] == 0)
            if msg["stage"] == self.stage and not self.killed:
                pid = self.pids().get(msg["worker"])
                if pid:
                    os.kill(pid, signal.SIGKILL)
                    self.killed.append(pid)
                    self.killed_shard = msg["shard"]

    def pids(self) -> dict[str, int]:
        return {n.worker_address: n.process.process.pid for n in self.cluster.workers.values()
                if n.process is not None and n.process.process is not None}

    def close(self) -> None:
        self.client.close()


@pytest.mark.parametrize("stage,kw", [("count", {}), ("grow", {}), ("templates", {"site_field": "site"})])
def test_a_worker_killed_mid_run_changes_nothing(os_client, index_prefix, opensearch_url, tmp_path, stage, kw):
    make_source(os_client, f"{index_prefix}src", list(web_docs(400)), shards=2)
    with local_cluster(2) as c:
        c.wait_for_workers(2)
        killer = _Killer(c, stage)
        try:
            _compare(os_client, index_prefix, opensearch_url, tmp_path, DaskConfig(c.scheduler_address),
                     sigma=6, min_length=8, **kw)
        finally:
            killer.close()
    assert killer.killed, f"no worker reported {stage!r}: nothing was killed"
    if stage in ("grow", "templates"):  # the growth shard / site partition whose worker died ran again
        assert killer.starts[(stage, killer.killed_shard)] >= 2
    if stage == "templates":
        assert template_records(os_client, f"{index_prefix}many") == template_records(os_client,
                                                                                        f"{index_prefix}one")
