"""The template detector on Dask workers (2-worker LocalCluster, JSON Lines byte-range shards)
gives exactly the single process' template records and stats (`mine --jsonl --templates`),
and a worker killed with SIGKILL while it detects a partition changes nothing."""
from __future__ import annotations

import json
import os
import signal
import threading

import numpy as np
import pytest

from bloomspan.engine.mining.config import MiningConfig
from bloomspan.sidecar.distributed.cluster import ProgressRelay
from bloomspan.sidecar.distributed.doc_layout import contiguous_layout
from bloomspan.sidecar.distributed.in_worker import PROGRESS_TOPIC
from bloomspan.sidecar.distributed.pipeline import mine_shards, shard_homes
from bloomspan.sidecar.distributed.shards import byte_ranges, read_jsonl_range
from bloomspan.sidecar.distributed.site_templates import detect_templates_on_dask
from bloomspan.sidecar.errors import ClusterConfigError
from bloomspan.sidecar.run.jsonl_mining import mine_jsonl
from bloomspan.sidecar.run.run_templates import TemplateOptions
from tests.support.dask_helpers import local_cluster

MINING = MiningConfig(sigma=20, min_length=10)
OPTIONS = TemplateOptions(site_field="site", url_field="url")


def without_timings(value):
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if not k.startswith("seconds") and k != "seconds"}
    return value


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    """A web crawl of 1,200 pages on 40 sites (some too small for any template) and the single
    process' templates.jsonl records and report["templates"]."""
    from bloomspan.corpora.web import generate_web

    folder = tmp_path_factory.mktemp("crawl")
    path = folder / "web.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for d in generate_web(1200, seed=5, n_sites=40):
            f.write(json.dumps({"id": d["id"], "text": d["text"], "site": d["site"], "url": d["url"]}) + "\n")
    mine_jsonl(str(path), "text", MINING, str(folder / "single"), id_field="id", templates=OPTIONS)
    records = [json.loads(line) for line in (folder / "single" / "templates.jsonl").read_text("utf-8").splitlines()]
    report = json.loads((folder / "single" / "report.json").read_text("utf-8"))
    return path, records, report["templates"]


def on_dask(client, path, n_ranges: int, options=OPTIONS, n_partitions=None):
    ranges = byte_ranges(str(path), n_ranges)
    shards = [client.submit(read_jsonl_range, str(path), a, b, "text", "id", k, OPTIONS.fields,
                            key=f"test-read-{k}-{n_ranges}") for k, (a, b) in enumerate(ranges)]
    relay = ProgressRelay(None)
    result = mine_shards(client, shards, lambda headers: contiguous_layout(client, shards, headers, f"t{n_ranges}"),
                         MINING, relay, global_ids=True, run=f"t{n_ranges}")
    homes = shard_homes(client, shards)
    records, stats, stage = detect_templates_on_dask(client, shards, homes, options, result.layout.global_docs,
                                                     result.covers, relay, run=f"t{n_ranges}", n_partitions=n_partitions)
    # the route's progress bar has its total (it once showed a bare count): every page of the crawl
    assert relay.totals["template-route"] == result.layout.n_docs
    return list(records), stats, stage  # the records stream from the workers: read while the client is open


@pytest.mark.parametrize("n_ranges,n_partitions", [(5, None), (3, 3)])
def test_templates_on_two_workers_equal_the_single_process(crawl, n_ranges, n_partitions):
    from distributed import Client

    path, single_records, single_stats = crawl
    with local_cluster(2) as cluster, Client(cluster) as client:
        records, stats, stage = on_dask(client, path, n_ranges, n_partitions=n_partitions)
    assert records == single_records
    assert sum(r["kind"] == "skeleton" for r in records) >= 10 and len(records) > 100
    file_fields = ("file", "site_field", "url_field")  # what a file run adds to the detector's stats
    assert without_timings(stats) == without_timings({k: v for k, v in single_stats.items() if k not in file_fields})
    assert len(stage.partitions) == (n_partitions or 2)
    assert sum(p["pages"] for p in stage.partitions) == single_stats["detector"]["docs_mined"]
    assert all(p["tokens"] > 0 for p in stage.partitions) and stage.bytes_sent > 0


def test_a_cross_site_config_is_refused_on_dask_naming_the_field(crawl):
    from distributed import Client

    path, _, _ = crawl
    options = TemplateOptions(site_field="site", url_field="url", config={"global_blocks": True})
    with local_cluster(1) as cluster, Client(cluster) as client:
        with pytest.raises(ClusterConfigError, match="global_blocks"):
            detect_templates_on_dask(client, [], [], options, [], None, ProgressRelay(None))


class _Killer:
    """SIGKILLs the worker that first reports ``stage`` (the nanny restarts it)."""

    def __init__(self, cluster, stage: str):
        from distributed import Client

        self.cluster, self.stage = cluster, stage
        self.client = Client(cluster.scheduler_address)
        self.killed: list[int] = []
        self.starts: dict[int, int] = {}
        self.lock = threading.Lock()
        self.client.subscribe_topic(PROGRESS_TOPIC, self.on_event)

    def on_event(self, event) -> None:
        _, msg = event
        with self.lock:
            if msg["stage"] != self.stage:
                return
            self.starts[msg["shard"]] = self.starts.get(msg["shard"], 0) + (msg["done"] == 0)
            if not self.killed and msg["done"] == 0:
                pids = {n.worker_address: n.process.process.pid for n in self.cluster.workers.values()
                        if n.process is not None and n.process.process is not None}
                pid = pids.get(msg["worker"])
                if pid:
                    os.kill(pid, signal.SIGKILL)
                    self.killed.append(pid)
                    self.killed_partition = msg["shard"]

    def close(self) -> None:
        self.client.close()


def test_a_worker_killed_while_detecting_changes_nothing(crawl):
    from distributed import Client

    path, single_records, single_stats = crawl
    with local_cluster(2) as cluster, Client(cluster) as client:
        cluster.wait_for_workers(2)
        killer = _Killer(cluster, "templates")
        try:
            records, stats, _ = on_dask(client, path, 4)
        finally:
            killer.close()
    assert killer.killed, "no worker reported 'templates': nothing was killed"
    assert killer.starts[killer.killed_partition] >= 2  # the killed partition was detected again
    assert records == single_records
    file_fields = ("file", "site_field", "url_field")  # what a file run adds to the detector's stats
    assert without_timings(stats) == without_timings({k: v for k, v in single_stats.items() if k not in file_fields})
    assert np.isclose(stats["covered_share"], single_stats["covered_share"])


def test_index_slices_on_two_workers_equal_the_single_process_index_run(os_client, index_prefix, opensearch_url,
                                                                         tmp_path):
    """``mine --index --site-field --url-field --dask`` (PIT slices of a live 2-shard index read
    with the template fields): the template documents and the run document's template stats
    equal the single-node run's."""
    from opensearchpy import helpers

    from bloomspan.corpora.web import generate_web
    from bloomspan.sidecar.distributed.cluster import DaskConfig
    from bloomspan.sidecar.run.mining_run import MineConfig, run_mining
    from tests.support.sidecar_helpers import make_source

    src = f"{index_prefix}src"
    docs = [{"id": d["id"], "text": d["text"], "site": d["site"], "url": d["url"]}
            for d in generate_web(900, seed=6, n_sites=25)]
    for d in docs[::41]:
        d["site"] = ""  # no site field value: the URL's host is not used (a site field was given)
    make_source(os_client, src, docs, shards=2)
    config = MineConfig.from_flags(index=src, url=opensearch_url, template_index=f"{index_prefix}one", work_dir=str(tmp_path / "one"),
                        lease_index=f"{index_prefix}lease", sigma=10, min_length=8, site_field="site", url_field="url")
    run_mining(config, client=os_client)
    single, run_doc = {}, None
    for hit in helpers.scan(os_client, index=f"{index_prefix}one", query={"query": {"match_all": {}}}):
        source = hit["_source"]
        if source["kind"] in ("template", "template_config", "skeleton", "line_shape"):
            single[hit["_id"]] = {k: v for k, v in source.items() if k != "run_id"}
        elif source["kind"] == "run":
            run_doc = source

    many = MineConfig.from_flags(index=src, url=opensearch_url, template_index=f"{index_prefix}many",
                      work_dir=str(tmp_path / "many"), lease_index=f"{index_prefix}lease", sigma=10, min_length=8,
                      site_field="site", url_field="url")
    with local_cluster(2) as cluster:
        run_mining(many, client=os_client, dask=DaskConfig(cluster.scheduler_address))
    ours, stats = {}, None
    for hit in helpers.scan(os_client, index=f"{index_prefix}many", query={"query": {"match_all": {}}}):
        source = hit["_source"]
        if source["kind"] in ("template", "template_config", "skeleton", "line_shape"):
            ours[hit["_id"]] = {k: v for k, v in source.items() if k != "run_id"}
        elif source["kind"] == "run":
            stats = source["templates"]
    assert ours == single and sum(s["kind"] == "skeleton" for s in single.values()) >= 5
    expected = run_doc["templates"]
    assert without_timings({k: stats[k] for k in expected}) == without_timings(expected)
