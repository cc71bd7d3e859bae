"""A Dask run's doc map (document number -> key), written into the cluster by the workers: the
driver never holds a document's key, only the few the run names.

The keys of an index run live on the workers that read them (each shard's ``keys`` and its
global numbers, :mod:`.doc_numbering`). Three steps use them:

* **staging** (mine phase): each doc map part (``part`` documents, a multiple of
  DOCMAP_CHUNK) is merged on a worker from every shard's piece of it
  (:func:`~.doc_numbering.doc_map_part`) and written by that worker as ``kind=docmap``
  documents into the run's *staging index* (:func:`staging_index_name`), in the cluster,
  so it outlives the workers and the driver: a run killed after mining publishes again
  from it without reading the source again;
* **named keys** (mine phase): the keys the driver must write itself (the phrase documents'
  ``example_ids``, the report's most cluttered documents) are looked up where the shards
  are (:func:`shard_keys_of`), a batch of numbers at a time;
* **copying** (publish phase): :class:`StagedDocMap` is the :class:`WrittenDocMap` that
  :func:`~bloomspan.sidecar.publish.template_index.publish` hands the physical index to: the
  workers copy the staged documents into it, the run id added (:func:`copy_doc_map_chunks`).

The staging index is named after the run's template index and the id the run had when it
mined, ``<template index>-<run id>-docmap``: it never matches a physical run index
(``<alias>-<run id>``), so retention and history never see it. The run deletes it once its
physical index is complete; a later Dask run of the same template index deletes the ones
earlier runs left (the lease lets one run at a time mine a template index).

A staging or copying task that Dask re-runs writes the same documents under the same ids.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from bloomspan.mappings import load
from bloomspan.sidecar.cluster.document_status import STORED
from bloomspan.sidecar.errors import CheckpointError
from bloomspan.sidecar.publish.template_index import (
    DOCMAP_CHUNK,
    RUN_ID_PATTERN,
    docmap_chunks,
    docmap_documents,
    docmap_id,
    write_documents,
)

from .doc_numbering import doc_map_part, doc_map_piece

log = logging.getLogger(__name__)

STAGING_SUFFIX = "-docmap"
COPY_CHUNKS_PER_TASK = 8   # docmap documents (DOCMAP_CHUNK keys each) one copy task moves
COPY_CHUNKS_PER_GET = 2    # docmap documents fetched per mget (each ~0.5-1 MB of keys)


def staging_index_name(template_index: str, run_id: str) -> str:
    """The staging index of the run ``run_id`` (its id when it mined) of ``template_index``."""
    return f"{template_index}-{run_id}{STAGING_SUFFIX}"


def staging_indices(client, template_index: str) -> list[str]:
    """The staging indices of ``template_index`` in the cluster (any run's)."""
    pattern = re.escape(template_index) + "-" + RUN_ID_PATTERN + re.escape(STAGING_SUFFIX)
    found = client.indices.get_settings(index=f"{template_index}-*{STAGING_SUFFIX}", name="index.number_of_shards",
                                        expand_wildcards="all", ignore=[404])
    return sorted(i for i in (found or {}) if isinstance(found[i], dict) and re.fullmatch(pattern, i))


def delete_staging_indices(client, template_index: str, keep: str | None = None) -> list[str]:
    """Delete the staging indices of ``template_index`` except ``keep``; returns their names."""
    doomed = [i for i in staging_indices(client, template_index) if i != keep]
    for index in doomed:
        client.indices.delete(index=index, ignore_unavailable=True)
        log.info("deleted %s (an earlier run's staged doc map)", index)
    return doomed


def create_staging_index(client, staging: str) -> None:
    """(Re-)create ``staging`` with the template index's mapping, hidden from wildcards."""
    client.indices.delete(index=staging, ignore_unavailable=True)
    body = load("template-index")["template"]
    body = {**body, "settings": {**body["settings"], "index.hidden": True}}
    client.indices.create(index=staging, body=body)


# ---------------------------------------------------------------------- on the workers
def stage_doc_map_part(cluster, staging: str, lo: int, hi: int, bulk_docs: int, *pieces) -> int:
    """Merge the doc map part of documents ``lo .. hi-1`` from every shard's piece and write
    it into ``staging`` as docmap documents (runs on a worker); returns how many."""
    keys = doc_map_part(lo, hi, *pieces)
    client = cluster.client()
    try:
        return write_documents(client, staging, docmap_documents(keys, lo), bulk_docs)
    finally:
        client.close()


def copy_doc_map_chunks(cluster, staging: str, physical: str, run_id: str, chunks: list[int]) -> int:
    """Copy the docmap documents ``chunks`` from ``staging`` into ``physical`` with ``run_id``
    (runs on a worker); returns how many. CheckpointError if one is missing (the staging index
    was deleted or damaged)."""
    client = cluster.client()
    try:
        written = 0
        for a in range(0, len(chunks), COPY_CHUNKS_PER_GET):
            ids = [docmap_id(k) for k in chunks[a:a + COPY_CHUNKS_PER_GET]]
            got = client.mget(index=staging, body={"ids": ids})["docs"]
            missing = [d["_id"] for d in got if not d.get("found")]
            if missing:
                raise CheckpointError(f"{staging}: the staged doc map lacks {missing[0]} ({len(missing)} missing); "
                                      "mine again (delete the run folder under --work-dir)", index=staging)
            written += write_documents(client, physical, ({"_id": d["_id"], "_source": {**d["_source"], "run_id": run_id}}
                                                          for d in got), len(ids))
        return written
    finally:
        client.close()


def shard_keys_of(shard, global_docs: np.ndarray, number_order: np.ndarray, wanted: np.ndarray
                  ) -> tuple[np.ndarray, list[str]]:
    """(numbers, keys) of the shard's stored documents among ``wanted`` (int64, ascending).
    ``global_docs``: the shard's global numbers in its order; ``number_order``: its argsort."""
    ranked = global_docs[number_order]
    at = np.searchsorted(ranked, wanted)
    inside = at < ranked.shape[0]
    hit = np.zeros(wanted.shape[0], dtype=bool)
    hit[inside] = ranked[at[inside]] == wanted[inside]
    stored = np.flatnonzero(shard.meta[:, 3] == STORED)
    rows = stored[number_order[at[hit]]]
    return wanted[hit], [shard.keys[r] for r in rows.tolist()]


def _argsort(numbers: np.ndarray) -> np.ndarray:
    return np.argsort(numbers, kind="stable")


# ---------------------------------------------------------------------- on the driver
class ShardKeys:
    """The keys of given document numbers, looked up on the workers holding the shards
    (:func:`shard_keys_of`); the driver receives only the keys it asks for."""

    def __init__(self, dclient, shards: list, global_docs: list, homes: list[dict], run: str):
        self._client, self._shards, self._global, self._homes, self._run = dclient, shards, global_docs, homes, run
        self._orders = [dclient.submit(_argsort, g, key=f"bloomspan-numorder-{run}-{k}", **homes[k])
                        for k, g in enumerate(global_docs)]
        self._calls = 0

    def keys_of(self, numbers) -> dict[int, str]:
        """``{number: key}`` of ``numbers`` (each must be a stored document's)."""
        wanted = np.unique(np.asarray(list(numbers), dtype=np.int64))
        if wanted.size == 0:
            return {}
        self._calls += 1
        futures = [self._client.submit(shard_keys_of, s, g, o, wanted, key=f"bloomspan-keysof-{self._run}-{self._calls}-{k}",
                                       **self._homes[k])
                   for k, (s, g, o) in enumerate(zip(self._shards, self._global, self._orders))]
        out: dict[int, str] = {}
        for numbers_found, keys in self._client.gather(futures):
            out.update(zip(numbers_found.tolist(), keys))
        if len(out) != wanted.size:
            raise ValueError(f"{wanted.size - len(out)} document number(s) held by no shard (first asked: {int(wanted[0])})")
        return out

    def release(self) -> None:
        """Let the workers free the shards and numbers this object holds."""
        self._shards = self._global = self._orders = []


def stage_doc_map(dclient, cluster, numbering, staging: str, bulk_docs: int, run: str, part: int) -> int:
    """Write the doc map of ``numbering`` (:class:`~bloomspan.sidecar.run.dask_mining.Numbering`)
    into ``staging`` from the workers, ``part`` documents per task (a multiple of DOCMAP_CHUNK);
    returns the docmap documents written. The driver receives counts only."""
    if part % DOCMAP_CHUNK:
        raise ValueError(f"doc map parts of {part} documents: must be a multiple of {DOCMAP_CHUNK}")
    from distributed import as_completed

    futures = []
    for p, lo in enumerate(range(0, numbering.n_docs, part)):
        hi = min(lo + part, numbering.n_docs)
        pieces = [dclient.submit(doc_map_piece, b, n, lo, hi, key=f"bloomspan-docmap-{run}-{p}-{k}")
                  for k, (b, n) in enumerate(zip(numbering.blocks, numbering.sorted_numbers))]
        futures.append(dclient.submit(stage_doc_map_part, cluster, staging, lo, hi, bulk_docs, *pieces,
                                      key=f"bloomspan-docmap-{run}-{p}", retries=2))
    written = sum(f.result() for f in as_completed(futures))
    if written != docmap_chunks(numbering.n_docs):
        raise ValueError(f"{staging}: {written} docmap documents staged for {numbering.n_docs} documents")
    return written


@dataclass
class StagedDocMap:
    """A Dask run's doc map as the publish phase sees it: staged in ``index`` (``n_docs``
    documents), plus the keys of the documents the report names (``named``: number -> key).
    ``doc_keys[i]`` answers the named numbers only. :meth:`write_into` has the workers copy it
    into the run's physical index (``copier``: set by the publish phase, see
    :func:`bloomspan.sidecar.run.dask_mining.doc_map_copier`)."""

    index: str
    n_docs: int
    named: dict[int, str] = field(default_factory=dict)
    copier: Callable[[StagedDocMap, str, str], int] | None = None

    def __len__(self) -> int:
        return self.n_docs

    def __getitem__(self, number: int) -> str:
        try:
            return self.named[int(number)]
        except KeyError:
            raise KeyError(f"document {number}: the run folder holds the keys of the documents its report "
                           f"names only (the doc map is in {self.index})") from None

    def write_into(self, physical: str, run_id: str) -> int:
        if self.copier is None:
            raise ValueError(f"{self.index}: no Dask client to copy the staged doc map with")
        return self.copier(self, physical, run_id)

    def to_dict(self) -> dict:
        return {"index": self.index, "n_docs": self.n_docs, "named": {str(k): v for k, v in self.named.items()}}

    @classmethod
    def from_dict(cls, d: dict) -> StagedDocMap:
        return cls(d["index"], int(d["n_docs"]), {int(k): v for k, v in d["named"].items()})


def copy_staged_doc_map(dclient, cluster, doc_map: StagedDocMap, physical: str, run_id: str, run: str) -> int:
    """Have the workers copy ``doc_map`` into ``physical``; returns the documents written."""
    n = docmap_chunks(doc_map.n_docs)
    futures = [dclient.submit(copy_doc_map_chunks, cluster, doc_map.index, physical, run_id,
                              list(range(a, min(a + COPY_CHUNKS_PER_TASK, n))), key=f"bloomspan-docmapcopy-{run}-{a}",
                              retries=2)
               for a in range(0, n, COPY_CHUNKS_PER_TASK)]
    written = sum(dclient.gather(futures))
    if written != n:
        raise ValueError(f"{physical}: {written} docmap documents copied from {doc_map.index}, expected {n}")
    return written
