"""The one writer of annotations onto source documents: what a document gets
(``bloomspan.boilerplate_ratio``, ``bloomspan.spans``, ``bloomspan.run_id``) and the bulk
updates that write a batch of them, with their retries and per-item errors.

The single process (:mod:`bloomspan.sidecar.run.annotate`, from its snapshot) and the Dask
workers (:mod:`bloomspan.sidecar.distributed.shard_annotation`, for the documents each read)
both call :func:`annotate_batch`, so the two executors write the same bytes and count the same
outcomes.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
from opensearchpy import helpers

from bloomspan.ingest.clean.cleaner import RATIO_FLOOR as MIN_RATIO  # one floor for the cleaner and annotation
from bloomspan.sidecar.errors import AnnotateError

from .clean_index_template import InstallReport, add_document_fields

log = logging.getLogger(__name__)

EXAMPLES = 5  # failed documents named in a summary


@dataclass
class AnnotateSummary:
    updated: int = 0
    noop: int = 0
    failed_by_reason: dict = field(default_factory=dict)
    examples: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"updated": self.updated, "noop": self.noop, "failed_by_reason": dict(self.failed_by_reason),
                "examples": list(self.examples)}

    def add(self, other: AnnotateSummary) -> None:
        """Fold ``other`` (another batch or shard) into this summary."""
        self.updated += other.updated
        self.noop += other.noop
        for reason, n in other.failed_by_reason.items():
            self.failed_by_reason[reason] = self.failed_by_reason.get(reason, 0) + n
        self.examples.extend(other.examples[:max(0, EXAMPLES - len(self.examples))])


@dataclass
class AnnotationItem:
    """One document's update: where it is, what it gets, and the version that was mined
    (``seq_no`` < 0 or ``primary_term`` <= 0: unknown, the update is not guarded)."""

    index: str
    doc_id: str
    update: dict
    seq_no: int = -1
    primary_term: int = 0


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


def _failure_reason(res: dict) -> str:
    status = res.get("status")
    error = res.get("error")  # a dict from the node; a string when the whole request failed
    return {409: "conflict", 404: "missing"}.get(status) or \
        (error.get("type") if isinstance(error, dict) else None) or f"status_{status}"


def annotate_batch(client, items: list[AnnotationItem], *, bulk_docs: int = 500
                   ) -> tuple[AnnotateSummary, list[tuple[int, int] | None]]:
    """Write ``items`` as partial bulk updates, each guarded by ``if_seq_no``/``if_primary_term``
    of its mined version (a document changed since fails as ``conflict``); chunks of
    ``bulk_docs``, throttled (429) items retried with backoff.

    Returns the summary and, per item, the (seq_no, primary_term) its update produced (None
    when it failed or the response had none). Every response item is counted once: an item
    whose response does not name a document of the batch (a response that names it otherwise
    than its action did) still counts as updated, noop or failed, only its version is lost.
    """
    summary = AnnotateSummary()
    versions: list[tuple[int, int] | None] = [None] * len(items)
    pending: dict[tuple[str, str], int] = {}
    actions = []
    for i, it in enumerate(items):
        action = {"_op_type": "update", "_index": it.index, "_id": it.doc_id, "doc": {"bloomspan": it.update}}
        if it.seq_no >= 0 and it.primary_term > 0:
            action["if_seq_no"], action["if_primary_term"] = it.seq_no, it.primary_term
        pending[(it.index, it.doc_id)] = i
        actions.append(action)
    for ok, item in helpers.streaming_bulk(client, actions, chunk_size=bulk_docs, max_chunk_bytes=50 << 20,
                                           raise_on_error=False, raise_on_exception=False, max_retries=3,
                                           initial_backoff=1):
        res = item.get("update", {})
        i = pending.pop((res.get("_index"), res.get("_id")), None)
        if ok:
            if res.get("result") == "noop":
                summary.noop += 1
            else:
                summary.updated += 1
            if i is None:
                log.warning("annotation response names no document of its batch: _index=%s _id=%s (counted, its "
                            "version not recorded)", res.get("_index"), res.get("_id"))
            elif "_seq_no" in res:
                versions[i] = (int(res["_seq_no"]), int(res["_primary_term"]))
        else:
            reason = _failure_reason(res)
            summary.failed_by_reason[reason] = summary.failed_by_reason.get(reason, 0) + 1
            if len(summary.examples) < EXAMPLES:
                summary.examples.append({"_index": res.get("_index"), "_id": res.get("_id"), "reason": reason})
    return summary, versions
