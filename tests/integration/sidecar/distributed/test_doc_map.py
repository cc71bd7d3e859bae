"""A Dask run's doc map is written into the cluster by the workers (staged, then copied into
the run's index), never through the driver: the staged and copied documents equal the ones a
single process writes from the sorted keys, across several parts and chunks; a run killed after
mining publishes from the staged doc map; the staging index is gone once the run is published,
and a later run deletes the ones earlier runs left."""
from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest
from opensearchpy import helpers

from bench.published_run import published
from bloomspan.mappings import load
from bloomspan.sidecar.cluster.connection import ClusterConfig
from bloomspan.sidecar.cluster.document_status import SKIP_REASONS, STORED
from bloomspan.sidecar.distributed.cluster import DaskConfig
from bloomspan.sidecar.distributed.doc_map import (
    ShardKeys,
    StagedDocMap,
    copy_staged_doc_map,
    create_staging_index,
    stage_doc_map,
    staging_index_name,
    staging_indices,
)
from bloomspan.sidecar.errors import CheckpointError
from bloomspan.sidecar.publish.template_index import DOCMAP_CHUNK, docmap_documents, new_run_id
from bloomspan.sidecar.run.dask_mining import number_documents
from bloomspan.sidecar.run.mining_run import MineConfig, run_mining
from tests.support.dask_helpers import local_cluster
from tests.support.sidecar_helpers import IndicesCallRaises, make_source, web_docs

N_KEYS = 2 * DOCMAP_CHUNK + 4_321  # three docmap documents, the last one partial


@pytest.fixture(scope="module")
def cluster():
    with local_cluster(2) as c:
        yield c


@pytest.fixture(scope="module")
def dclient(cluster):
    from distributed import Client

    with Client(cluster.scheduler_address) as c:
        yield c


def _shards(seed: int = 3):
    """Three slices' reads of N_KEYS keys (unicode, surrogate-free), about one in 40 skipped;
    and the stored keys in canonical (byte) order."""
    rng = random.Random(seed)
    keys = sorted({f"doc-{rng.randrange(10**9)}-{rng.choice(['a', 'é', '文'])}" for _ in range(N_KEYS + 500)})[:N_KEYS]
    rng.shuffle(keys)
    skip_code = next(iter(SKIP_REASONS))
    shards, stored = [], []
    for part in (keys[:9_000], keys[9_000:9_001], keys[9_001:]):
        status = np.array([skip_code if rng.random() < 0.025 else STORED for _ in part], dtype=np.int64)
        meta = np.zeros((len(part), 4), dtype=np.int64)
        meta[:, 3] = status
        shards.append(SimpleNamespace(keys=part, meta=meta))
        stored += [k for k, s in zip(part, status) if s == STORED]
    return shards, sorted(stored, key=lambda k: k.encode("utf-8"))


def _docmap_docs(client, index: str) -> list[dict]:
    hits = helpers.scan(client, index=index, query={"query": {"term": {"kind": "docmap"}}})
    return sorted(({"_id": h["_id"], "_source": h["_source"]} for h in hits), key=lambda d: d["_id"])


def test_the_workers_stage_and_copy_the_doc_map_a_single_process_writes(dclient, os_client, index_prefix,
                                                                       opensearch_url):
    shards, stored = _shards()
    futures = dclient.scatter(shards)
    numbering = number_documents(dclient, futures, "t")
    assert numbering.n_docs == len(stored)
    cluster = ClusterConfig(url=opensearch_url)
    staging = staging_index_name(f"{index_prefix}tpl", new_run_id())
    create_staging_index(os_client, staging)
    # parts of two docmap documents: the second part starts at a chunk boundary mid-corpus
    assert stage_doc_map(dclient, cluster, numbering, staging, 2, "t", 2 * DOCMAP_CHUNK) == 3
    os_client.indices.refresh(index=staging)
    assert _docmap_docs(os_client, staging) == list(docmap_documents(stored, 0))

    physical = f"{index_prefix}physical"
    os_client.indices.create(index=physical, body=load("template-index")["template"])
    doc_map = StagedDocMap(staging, len(stored))
    assert copy_staged_doc_map(dclient, cluster, doc_map, physical, "run-1", "t") == 3
    os_client.indices.refresh(index=physical)
    assert _docmap_docs(os_client, physical) == list(docmap_documents(stored, 0, "run-1"))

    # the keys the driver asks for, looked up where the shards are
    keys = ShardKeys(dclient, futures, numbering.global_docs, [{}] * len(futures), "t")
    wanted = [0, 1, 9_999, 10_000, len(stored) - 1, 17, 17]
    assert keys.keys_of(wanted) == {n: stored[n] for n in wanted}
    with pytest.raises(ValueError, match="held by no shard"):
        keys.keys_of([len(stored)])

    os_client.delete(index=staging, id="docmap-000001", refresh=True)
    with pytest.raises(CheckpointError, match="lacks docmap-000001.*mine again"):
        copy_staged_doc_map(dclient, cluster, doc_map, f"{index_prefix}physical2", "run-2", "t")


def _config(index_prefix, url, tmp_path, name, **kw):
    return MineConfig.from_flags(index=f"{index_prefix}src", url=url, template_index=f"{index_prefix}{name}",
                                 work_dir=str(tmp_path / name), lease_index=f"{index_prefix}lease", sigma=8,
                                 min_length=8, site_field="site", **kw)


def test_a_run_killed_after_mining_publishes_from_the_staged_doc_map(cluster, os_client, index_prefix,
                                                                     opensearch_url, tmp_path):
    make_source(os_client, f"{index_prefix}src", list(web_docs(300)), shards=2)
    run_mining(_config(index_prefix, opensearch_url, tmp_path, "one"), client=os_client)
    tpl = f"{index_prefix}many"
    left = staging_index_name(tpl, "20200101t000000000-abcd")  # an abandoned run's
    create_staging_index(os_client, left)
    dask = DaskConfig(cluster.scheduler_address)
    config = _config(index_prefix, opensearch_url, tmp_path, "many")
    with pytest.raises(RuntimeError, match="driver died"):
        run_mining(config, dask=dask, client=IndicesCallRaises(  # the run's physical index: killed before publishing
            os_client, "create", when=lambda index=None, **kw: not index.endswith("-docmap")))
    staged = staging_indices(os_client, tpl)
    assert len(staged) == 1 and staged[0] != left, "the run's own doc map is staged, the abandoned one deleted"
    assert not list((tmp_path / "many").rglob("doc_map*")), "the driver's run folder holds no doc map"
    many = run_mining(config, dask=dask, client=os_client)
    assert many.resumed
    one, got = published(os_client, f"{index_prefix}one"), published(os_client, tpl)
    assert got["doc_ids"] == one["doc_ids"] and got["phrases"] == one["phrases"] and got["report"] == one["report"]
    assert staging_indices(os_client, tpl) == []
