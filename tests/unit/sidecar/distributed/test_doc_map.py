"""The pieces of a Dask run's staged doc map that need no cluster: the per-shard key lookup
against a plain dictionary, the staging index's name (never a run index), the docmap
documents' layout, and what the run folder keeps of the doc map."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.sidecar.cluster.document_status import SKIP_REASONS, STORED
from bloomspan.sidecar.distributed.doc_map import StagedDocMap, shard_keys_of, staging_index_name
from bloomspan.sidecar.publish.template_index import (
    DOCMAP_CHUNK,
    docmap_chunks,
    docmap_documents,
    new_run_id,
    run_id_of,
    template_alias_of,
)

SKIPPED = next(iter(SKIP_REASONS))


@st.composite
def shards_and_wanted(draw):
    n = draw(st.integers(0, 40))
    stored = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    n_stored = sum(stored)
    numbers = draw(st.permutations(list(range(0, 3 * n_stored, 3))))  # the shard's global numbers, any order
    meta = np.zeros((n, 4), dtype=np.int64)
    meta[:, 3] = [STORED if s else SKIPPED for s in stored]
    shard = SimpleNamespace(keys=[f"k{i}" for i in range(n)], meta=meta)
    wanted = sorted(set(draw(st.lists(st.integers(0, 3 * n_stored + 2), max_size=20))))
    return shard, np.array(numbers, dtype=np.int64), np.array(wanted, dtype=np.int64)


def _plain_keys_of(shard, global_docs, wanted) -> dict[int, str]:
    rows = [r for r in range(len(shard.keys)) if shard.meta[r, 3] == STORED]
    by_number = {int(global_docs[d]): shard.keys[rows[d]] for d in range(len(rows))}
    return {int(w): by_number[int(w)] for w in wanted if int(w) in by_number}


@settings(max_examples=200, derandomize=True, deadline=None)
@given(shards_and_wanted())
def test_shard_keys_of_equals_a_plain_lookup(case):
    shard, global_docs, wanted = case
    numbers, keys = shard_keys_of(shard, global_docs, np.argsort(global_docs, kind="stable"), wanted)
    assert dict(zip(numbers.tolist(), keys)) == _plain_keys_of(shard, global_docs, wanted)
    assert numbers.tolist() == sorted(numbers.tolist())


def test_a_staging_index_is_never_a_run_index_of_any_alias():
    run_id = new_run_id()
    staging = staging_index_name("tpl", run_id)
    assert staging == f"tpl-{run_id}-docmap"
    assert run_id_of("tpl", staging) is None and template_alias_of(staging) is None
    assert run_id_of(f"tpl-{run_id}", staging) is None  # not even of an alias named like the run index


def test_docmap_documents_chunk_the_keys_from_a_chunk_boundary():
    keys = [f"d{i}" for i in range(DOCMAP_CHUNK + 3)]
    docs = list(docmap_documents(keys, DOCMAP_CHUNK, "r"))
    assert [d["_id"] for d in docs] == ["docmap-000001", "docmap-000002"]
    assert docs[1]["_source"] == {"kind": "docmap", "chunk": 2, "first_member": 2 * DOCMAP_CHUNK,
                                  "ids": keys[DOCMAP_CHUNK:], "run_id": "r"}
    assert "run_id" not in next(docmap_documents(keys, 0))["_source"]
    assert docmap_chunks(0) == 0 and docmap_chunks(DOCMAP_CHUNK) == 1 and docmap_chunks(DOCMAP_CHUNK + 1) == 2
    with pytest.raises(ValueError, match="multiple of"):
        next(docmap_documents(keys, 5))


def test_the_run_folder_keeps_only_the_named_keys():
    doc_map = StagedDocMap.from_dict(StagedDocMap("tpl-x-docmap", 10, {3: "a", 7: "b"}).to_dict())
    assert len(doc_map) == 10 and doc_map[3] == "a" and doc_map[np.int64(7)] == "b"
    with pytest.raises(KeyError, match="document 4: .*tpl-x-docmap"):
        doc_map[4]
    with pytest.raises(ValueError, match="no Dask client"):
        doc_map.write_into("tpl-x", "r")
