"""Opt-in annotation: write each document's boilerplate share and covered spans back to it.

Fields (mapping ``mappings/documents.json``, installed on the source with ``put_mapping``):

* ``bloomspan.boilerplate_ratio`` — covered tokens / tokens, a ``rank_feature`` with
  ``positive_score_impact: false``, so a ``rank_feature`` clause down-weights cluttered
  pages. Lucene stores such a feature as 1/value and rejects 0, so the value written is
  ``max(ratio, MIN_RATIO)`` (1e-4): a clean page scores as "1e-4 cluttered";
* ``bloomspan.spans`` — ``[[start, end], ...]`` character spans (end exclusive) of the
  covered token runs, from the first covered token's first character to the last one's
  last character (punctuation between tokens of a run is inside);
* ``bloomspan.run_id`` — the run that wrote them.

Updates are partial bulk updates guarded by ``if_seq_no``/``if_primary_term`` of the
version that was mined: a document the crawler changed since is not annotated with stale
numbers (reason ``conflict``; the next incremental run re-reads it). The versions the
updates produce are recorded in the snapshot, so the next incremental run does not mistake
our own write for a crawler update.

Example query (give the pivot: the default one is estimated per shard, so the scores of
two shards would not be comparable)::

    {"query": {"bool": {"must": {"match": {"text": "..."}},
                        "should": {"rank_feature": {"field": "bloomspan.boilerplate_ratio",
                                                    "saturation": {"pivot": 0.1}}}}}}
"""
from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np

from bloomspan.sidecar.cluster.scroll import split_key
from bloomspan.sidecar.errors import AnnotateError
from bloomspan.sidecar.publish.document_annotation import (
    AnnotateSummary,
    AnnotationItem,
    annotate_batch,
    document_update,
    install_document_mapping,
)

log = logging.getLogger(__name__)

BATCH_FACTOR = 4  # documents per checkpointed batch = BATCH_FACTOR * bulk_docs


def annotate(client, snapshot, coverage: np.ndarray, run_id: str, *, bulk_docs: int = 500, start: int = 0,
             progress: Callable[[str, int, int | None], None] | None = None,
             on_batch: Callable[[int], None] | None = None) -> AnnotateSummary:
    """Annotate stored documents ``start..`` of ``snapshot`` (canonical numbers) from the
    coverage mask (bool (W,), canonical positions).

    ``on_batch(done)`` is called after each batch, once its new versions are in the
    snapshot: the caller checkpoints ``done`` and resumes with ``start=done``.
    """
    if not snapshot.with_offsets:
        raise AnnotateError("the corpus was read without character offsets; re-run with --annotate from the "
                            "start (the work directory's snapshot lacks them)", field="annotate")
    indices = snapshot.manifest["indices"]
    install_document_mapping(client, list(indices))
    off = snapshot.doc_offsets
    cs, ce = snapshot.char_starts, snapshot.char_ends
    keys = snapshot.stored_keys()
    rows = snapshot.stored_rows()
    meta = snapshot.meta(writable=True)
    summary = AnnotateSummary()
    n_docs = snapshot.n_docs
    step = max(1, BATCH_FACTOR * bulk_docs)
    for b0 in range(start, n_docs, step):
        b1 = min(b0 + step, n_docs)
        items = []
        for d in range(b0, b1):
            index, doc_id = split_key(keys[d], indices)
            a, b = int(off[d]), int(off[d + 1])
            items.append(AnnotationItem(index, doc_id, document_update(coverage[a:b], cs[a:b], ce[a:b], run_id),
                                        int(meta[rows[d], 0]), int(meta[rows[d], 1])))
        batch, versions = annotate_batch(client, items, bulk_docs=bulk_docs)
        summary.add(batch)
        for d, version in zip(range(b0, b1), versions):
            if version is not None:
                meta[rows[d], 0], meta[rows[d], 1] = version
        if isinstance(meta, np.memmap):
            meta.flush()
        if on_batch:
            on_batch(b1)
        if progress:
            progress("annotate", b1, n_docs)
    # Make our writes visible to the next run's listing (a point in time sees refreshed
    # data only); otherwise it would take its own annotations for crawler updates.
    client.indices.refresh(index=",".join(indices))
    if summary.failed_by_reason:
        log.warning("annotation skipped %s document(s): %s", sum(summary.failed_by_reason.values()),
                    summary.failed_by_reason)
    return summary
