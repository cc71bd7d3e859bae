"""The run's report, run document and summary: built once, from a :class:`.mined_run.MinedRun`,
for every executor (this node or Dask) and every kind of run (full, incremental)."""
from __future__ import annotations

from datetime import UTC, datetime

from bloomspan.sidecar.publish.publication import json_safe, run_report_from_figures


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def run_report(config, mined, doc_keys: list[str]) -> dict:
    """The run document's ``report``: coverage figures from the documents' summed figures
    (:class:`~bloomspan.sidecar.publish.document_figures.DocumentFigures`), the top phrases, the
    most cluttered sites (with a site field) and the curation block."""
    report = run_report_from_figures(mined.figures, mined.skipped_by_reason(), doc_keys, mined.phrase_docs,
                                     config.publish.top)
    if config.templates.site_field and mined.figures.sites is not None:
        report["most_cluttered_sites"] = mined.figures.site_clutter()
    report["curation"] = mined.curation
    return report


def run_document(config, mined, report: dict, *, started_at: str, kind: str, seconds: dict,
                 incremental: dict | None, scan_docs_per_second: float | None) -> dict:
    """The fields of the published run document (:func:`~bloomspan.sidecar.publish.template_index.publish`
    adds ``kind``, ``run_id`` and the coverage)."""
    n_tokens = mined.n_tokens
    covered = mined.covered_tokens
    skipped = mined.skipped_by_reason()
    doc = {"source_index": config.scan.index, "field": config.scan.field, "started_at": started_at,
           "finished_at": now_iso(), "docs_seen": mined.docs_seen, "docs_skipped": sum(skipped.values()),
           "tokens_mined": n_tokens, "covered_tokens": covered,
           "covered_share": covered / n_tokens if n_tokens else 0.0, "phrases": len(mined.phrase_docs),
           "params": config.params(), "report": json_safe(report),
           "stats": json_safe({"engine": mined.engine_stats, "kind": kind, "seconds": seconds,
                               "incremental": incremental, "scan_docs_per_second": scan_docs_per_second})}
    if mined.template_stats is not None:
        doc["templates"] = json_safe(mined.template_stats)
    return doc


def published_count(mined) -> int:
    """Records the run publishes that a cleaner applies: phrases, template phrases, skeletons."""
    return len(mined.phrase_docs) + sum((mined.template_stats or {}).get(k, 0) for k in ("phrases", "skeletons"))


def summary_fields(config, mined, run_doc: dict, *, run_id: str, physical_index: str, kind: str,
                   incremental: dict, deleted_runs: list) -> dict:
    """The run summary (``mine``'s output, ``serve``'s metrics: :class:`~.mining_run.RunSummary`)."""
    skipped = mined.skipped_by_reason()
    t = mined.template_stats
    return {"run_id": run_id, "physical_index": physical_index, "template_index": config.publish.template_index,
            "kind": kind, "docs_seen": mined.docs_seen, "docs_mined": mined.n_docs,
            "docs_skipped": sum(skipped.values()), "skipped_by_reason": skipped, "tokens_mined": mined.n_tokens,
            "covered_tokens": mined.covered_tokens, "covered_share": run_doc["covered_share"],
            "phrases": len(mined.phrase_docs), "incremental": incremental, "deleted_runs": deleted_runs,
            "templates": None if t is None else {k: t[k] for k in ("phrases", "skeletons", "covered_tokens",
                                                                  "covered_share")},
            "dry_run": config.publish.dry_run, "curation": json_safe(mined.curation)}
