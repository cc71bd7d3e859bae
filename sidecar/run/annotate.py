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
from dataclasses import dataclass, field

import numpy as np
from opensearchpy import helpers

from bloomspan.ingest.clean.cleaner import RATIO_FLOOR as MIN_RATIO  # one floor for the cleaner and annotation
from bloomspan.sidecar.cluster.scroll import split_key
from bloomspan.sidecar.errors import AnnotateError
from bloomspan.sidecar.publish.clean_index_template import InstallReport, add_document_fields

log = logging.getLogger(__name__)

BATCH_FACTOR = 4  # documents per checkpointed batch = BATCH_FACTOR * bulk_docs


@dataclass
class AnnotateSummary:
    updated: int = 0
    noop: int = 0
    failed_by_reason: dict = field(default_factory=dict)
    examples: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"updated": self.updated, "noop": self.noop, "failed_by_reason": dict(self.failed_by_reason),
                "examples": list(self.examples)}


def install_document_mapping(client, indices: list[str]) -> list[str]:
    """Add the ``bloomspan.*`` fields to each of the concrete ``indices``; returns them."""
    if not indices:
        raise AnnotateError("no source index to add the bloomspan.* fields to", field="bloomspan")
    report = InstallReport()
    add_document_fields(client, indices, [], report)
    if report.problems:
        raise AnnotateError(f"cannot add the bloomspan.* fields: {report.problems[0]}", index=",".join(indices),
                            field="bloomspan")
    return list(indices)


def covered_char_spans(covered: np.ndarray, char_starts: np.ndarray, char_ends: np.ndarray) -> list[list[int]]:
    """Character spans of the runs of True in ``covered`` (bool (n,)) of one document.

    char_starts/char_ends int64 (n,): offsets of the document's tokens.
    """
    if covered.size == 0 or not covered.any():
        return []
    edges = np.diff(np.concatenate(([0], covered.view(np.int8), [0])))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    return np.stack([char_starts[starts], char_ends[ends - 1]], axis=1).tolist()


def document_update(covered: np.ndarray, char_starts, char_ends, run_id: str) -> dict:
    """The ``bloomspan`` object written onto one document."""
    n = covered.size
    ratio = float(np.count_nonzero(covered)) / n if n else 0.0
    return {"boilerplate_ratio": max(ratio, MIN_RATIO), "run_id": run_id,
            "spans": covered_char_spans(covered, char_starts, char_ends)}


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
        pending: dict[tuple[str, str], int] = {}
        actions = []
        for d in range(b0, b1):
            index, doc_id = split_key(keys[d], indices)
            a, b = int(off[d]), int(off[d + 1])
            action = {"_op_type": "update", "_index": index, "_id": doc_id,
                      "doc": {"bloomspan": document_update(coverage[a:b], cs[a:b], ce[a:b], run_id)}}
            seq, term = int(meta[rows[d], 0]), int(meta[rows[d], 1])
            if seq >= 0 and term > 0:
                action["if_seq_no"], action["if_primary_term"] = seq, term
            pending[(index, doc_id)] = d
            actions.append(action)
        for ok, item in helpers.streaming_bulk(client, actions, chunk_size=bulk_docs, max_chunk_bytes=50 << 20,
                                               raise_on_error=False, raise_on_exception=False, max_retries=3,
                                               initial_backoff=1):
            res = item.get("update", {})
            d = pending.pop((res.get("_index"), res.get("_id")), None)
            if ok and d is not None:
                if res.get("result") == "noop":
                    summary.noop += 1
                else:
                    summary.updated += 1
                if "_seq_no" in res:
                    meta[rows[d], 0], meta[rows[d], 1] = res["_seq_no"], res["_primary_term"]
            elif not ok:
                status = res.get("status")
                reason = {409: "conflict", 404: "missing"}.get(status) or \
                    (res.get("error") or {}).get("type", f"status_{status}")
                summary.failed_by_reason[reason] = summary.failed_by_reason.get(reason, 0) + 1
                if len(summary.examples) < 5:
                    summary.examples.append({"_index": res.get("_index"), "_id": res.get("_id"), "reason": reason})
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
