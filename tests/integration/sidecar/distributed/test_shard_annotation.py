"""`mine --index --dask --annotate`: the workers write the same ``bloomspan.*`` fields as the
single process (ratio, spans; the run id of their own run), on a 2-worker LocalCluster and on an
external ``dask scheduler`` + ``dask worker`` pair, and a page the crawler rewrote after the read
is not annotated (conflict), as in one process; a worker SIGKILLed while it annotates leaves
the same values on every document."""
from __future__ import annotations

import os
import signal
import threading

import pytest
from opensearchpy import helpers

from bench.published_run import published
from bloomspan.sidecar.distributed.cluster import DaskConfig
from bloomspan.sidecar.distributed.in_worker import PROGRESS_TOPIC
from bloomspan.sidecar.run.mining_run import MineConfig, run_mining
from tests.support.dask_helpers import ExternalCluster, local_cluster
from tests.support.sidecar_helpers import ENGINE, IndicesCallRaises, make_source, web_docs


@pytest.fixture(scope="module")
def cluster():
    with local_cluster(2) as c:
        yield c


def _config(prefix, url, tmp_path, name, **kw):
    return MineConfig.from_flags(index=f"{prefix}src", url=url, sigma=5, min_length=5, engine=ENGINE,
                      template_index=f"{prefix}{name}", work_dir=str(tmp_path / name), lease_index=f"{prefix}lease",
                      annotate=True, bulk_docs=50, **kw)


def _annotations(client, index: str) -> dict:
    return {h["_id"]: h["_source"].get("bloomspan")
            for h in helpers.scan(client, index=index, query={"query": {"match_all": {}}})}


def _single_then_dask(os_client, index_prefix, opensearch_url, tmp_path, dask, **kw):
    """Annotations of the single process, then of the Dask run over the same documents."""
    src = f"{index_prefix}src"
    one = run_mining(_config(index_prefix, opensearch_url, tmp_path, "one", **kw), client=os_client)
    single = _annotations(os_client, src)
    many = run_mining(_config(index_prefix, opensearch_url, tmp_path, "many", **kw), dask=dask, client=os_client)
    dist = _annotations(os_client, src)
    assert published(os_client, f"{index_prefix}many")["phrases"] == published(os_client, f"{index_prefix}one")["phrases"]
    return one, single, many, dist


def _same_but_run_id(single: dict, dist: dict, one_run: str, many_run: str) -> None:
    assert single.keys() == dist.keys()
    for doc_id, a in single.items():
        b = dist[doc_id]
        if a is None:
            assert b is None, doc_id
            continue
        assert (a["run_id"], b["run_id"]) == (one_run, many_run), doc_id
        assert {**a, "run_id": None} == {**b, "run_id": None}, doc_id


def test_workers_write_the_single_process_annotations(cluster, os_client, index_prefix, opensearch_url, tmp_path):
    docs = list(web_docs(300))
    make_source(os_client, f"{index_prefix}src", docs + [{"id": "no-text", "site": "x"}], shards=2)
    one, single, many, dist = _single_then_dask(os_client, index_prefix, opensearch_url, tmp_path,
                                                DaskConfig(cluster.scheduler_address))
    assert one.annotate == {"updated": 300, "noop": 0, "failed_by_reason": {}}
    assert many.annotate == {"updated": 300, "noop": 0, "failed_by_reason": {}}
    assert dist["no-text"] is None and sum(a["spans"] != [] for a in dist.values() if a) > 100
    _same_but_run_id(single, dist, one.run_id, many.run_id)


def test_an_external_scheduler_and_worker_annotate_as_one_process(os_client, index_prefix, opensearch_url,
                                                                   tmp_path):
    make_source(os_client, f"{index_prefix}src", list(web_docs(200)), shards=2)
    with ExternalCluster(n_workers=2) as ext:
        one, single, many, dist = _single_then_dask(os_client, index_prefix, opensearch_url, tmp_path,
                                                    DaskConfig(ext.address))
    assert many.annotate == {"updated": 200, "noop": 0, "failed_by_reason": {}}
    _same_but_run_id(single, dist, one.run_id, many.run_id)


def test_a_page_rewritten_after_the_read_is_not_annotated_on_dask(cluster, os_client, index_prefix, opensearch_url,
                                                                 tmp_path):
    docs = list(web_docs(80))
    src = f"{index_prefix}src"
    make_source(os_client, src, docs, shards=2)
    victim = docs[3]["id"]

    class CrawlerRace:
        """The real client; when the run publishes (after every worker has read), the crawler
        rewrites a page."""

        def __init__(self, client):
            self._c, self.raced = client, False

        def __getattr__(self, name):
            return getattr(self._c, name)

        def bulk(self, *a, **kw):
            if not self.raced:
                self.raced = True
                self._c.index(index=src, id=victim, body={"text": "rewritten by the crawler"}, refresh=True)
            return self._c.bulk(*a, **kw)

    client = CrawlerRace(os_client)
    summary = run_mining(_config(index_prefix, opensearch_url, tmp_path, "many"),
                         dask=DaskConfig(cluster.scheduler_address), client=client)
    assert client.raced and summary.annotate == {"updated": 79, "noop": 0, "failed_by_reason": {"conflict": 1}}
    assert "bloomspan" not in os_client.get(index=src, id=victim)["_source"]


class _KillFirstAnnotator:
    """SIGKILLs the worker that reports the first annotate task starting (its nanny restarts it)."""

    def __init__(self, cluster):
        from distributed import Client

        self.cluster = cluster
        self.client = Client(cluster.scheduler_address)
        self.killed: list[int] = []
        self.lock = threading.Lock()
        self.client.subscribe_topic(PROGRESS_TOPIC, self.on_event)

    def on_event(self, event) -> None:
        _, msg = event
        with self.lock:
            if msg["stage"] != "annotate" or msg["done"] != 0 or self.killed:
                return
            pids = {n.worker_address: n.process.process.pid for n in self.cluster.workers.values()
                    if n.process is not None and n.process.process is not None}
            if pids.get(msg["worker"]):
                os.kill(pids[msg["worker"]], signal.SIGKILL)
                self.killed.append(pids[msg["worker"]])

    def close(self) -> None:
        self.client.close()


def test_a_worker_killed_while_annotating_leaves_the_same_values(os_client, index_prefix, opensearch_url,
                                                                 tmp_path):
    make_source(os_client, f"{index_prefix}src", list(web_docs(300)), shards=2)
    with local_cluster(2) as c:
        c.wait_for_workers(2)
        killer = _KillFirstAnnotator(c)
        try:
            one, single, many, dist = _single_then_dask(os_client, index_prefix, opensearch_url, tmp_path,
                                                        DaskConfig(c.scheduler_address))
        finally:
            killer.close()
    assert killer.killed, "no worker reported 'annotate': nothing was killed"
    _same_but_run_id(single, dist, one.run_id, many.run_id)
    # what the killed task wrote before it died fails its guard when the task runs again
    failed = many.annotate["failed_by_reason"]
    assert set(failed) <= {"conflict"} and many.annotate["updated"] + failed.get("conflict", 0) == 300


def test_a_run_that_died_before_annotating_resumes_and_annotates_as_one_process(cluster, os_client, index_prefix,
                                                                                opensearch_url, tmp_path):
    make_source(os_client, f"{index_prefix}src", list(web_docs(150)), shards=2)
    src = f"{index_prefix}src"
    one = run_mining(_config(index_prefix, opensearch_url, tmp_path, "one"), client=os_client)
    single = _annotations(os_client, src)

    dask = DaskConfig(cluster.scheduler_address)
    config = _config(index_prefix, opensearch_url, tmp_path, "many")
    with pytest.raises(RuntimeError, match="driver died"):
        run_mining(config, dask=dask, client=IndicesCallRaises(os_client, "put_mapping"))  # annotation installs its fields first
    assert all(a is None or a["run_id"] == one.run_id for a in _annotations(os_client, src).values())
    many = run_mining(config, dask=dask, client=os_client)
    assert many.resumed and many.annotate == {"updated": 150, "noop": 0, "failed_by_reason": {}}
    _same_but_run_id(single, _annotations(os_client, src), one.run_id, many.run_id)
