"""Annotation from the workers: each document shard writes ``bloomspan.*`` onto the documents
it read, through the same writer as the single process
(:func:`bloomspan.sidecar.publish.document_annotation.annotate_batch`: the same update per
document, the same ``if_seq_no``/``if_primary_term`` guard from the version the shard read,
the same retries and per-item reasons).

The shard's coverage mask is rebuilt where the shard is, from the occurrences the growth
shards sent it (:func:`.coverage.shard_mask`, what its coverage summary was made of): the
driver sends nothing per document and receives one :class:`AnnotateSummary` per shard.

A task that writes is not a pure function: Dask re-running it (its worker died mid-task)
writes the same values again; the documents it had already updated then fail their guard
(their version moved) and count as ``conflict``, which the driver's summary reports.
A shard read incrementally records its writes' versions in the slice's kept read
(:func:`.slice_state.record_own_writes`): the next run does not fetch those documents again.
"""
from __future__ import annotations

import numpy as np

from bloomspan.sidecar.cluster.document_status import STORED
from bloomspan.sidecar.cluster.scroll import split_key
from bloomspan.sidecar.publish.document_annotation import (
    AnnotateSummary,
    AnnotationItem,
    annotate_batch,
    document_update,
)

from .coverage import shard_mask
from .in_worker import worker_progress
from .shards import ShardCorpus
from .slice_state import record_own_writes

BATCH_FACTOR = 4  # documents built per bulk stream = BATCH_FACTOR * bulk_docs (their updates stay small)


def shard_annotation_items(shard: ShardCorpus, mask: np.ndarray, indices: list[str], run_id: str,
                           first: int, last: int) -> list[AnnotationItem]:
    """The updates of the shard's stored documents ``first..last-1`` (shard order).

    mask: bool (W_k,) the shard's coverage; the shard must have been read with offsets.
    """
    stored = np.flatnonzero(shard.meta[:, 3] == STORED)
    off, cs, ce = shard.doc_offsets, shard.char_starts, shard.char_ends
    items = []
    for d in range(first, last):
        row = int(stored[d])
        index, doc_id = split_key(shard.keys[row], indices)
        a, b = int(off[d]), int(off[d + 1])
        items.append(AnnotationItem(index, doc_id, document_update(mask[a:b], cs[a:b], ce[a:b], run_id),
                                    int(shard.meta[row, 0]), int(shard.meta[row, 1])))
    return items


def annotate_shard(cluster, shard: ShardCorpus, parts: list[tuple[np.ndarray, np.ndarray]], indices: list[str],
                   run_id: str, bulk_docs: int, shard_no: int) -> AnnotateSummary:
    """Annotate the documents of one shard (runs where the shard is); ``cluster`` is the
    run's :class:`~bloomspan.sidecar.cluster.connection.ClusterConfig`."""
    if shard.n_docs and shard.char_starts is None:
        raise ValueError(f"shard {shard_no} was read without character offsets (read_index_slice(with_offsets=True))")
    mask = shard_mask(shard.doc_offsets, parts)
    summary = AnnotateSummary()
    step = max(1, BATCH_FACTOR * bulk_docs)
    stored = np.flatnonzero(shard.meta[:, 3] == STORED)
    written: list[tuple[int, tuple[int, int] | None]] = []
    client = cluster.client()
    try:
        worker_progress("annotate", shard_no, 0, shard.n_docs)
        for b0 in range(0, shard.n_docs, step):
            b1 = min(b0 + step, shard.n_docs)
            batch, versions = annotate_batch(client, shard_annotation_items(shard, mask, indices, run_id, b0, b1),
                                             bulk_docs=bulk_docs)
            summary.add(batch)
            written.extend(zip(stored[b0:b1].tolist(), versions))
            worker_progress("annotate", shard_no, b1, shard.n_docs)
    finally:
        client.close()
    if shard.state_file is not None:  # read incrementally: its kept read learns our writes' versions
        record_own_writes(shard.state_file, shard.keys, written)
    return summary
