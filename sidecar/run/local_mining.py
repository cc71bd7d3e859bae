"""The mine phase on this node: the snapshot mined in one process, into a :class:`.mined_run.MinedRun`.

Mining, the curation filter, the phrase bitmaps and the template detector all read the
corpus, so they run here, before anything is published; what publication needs of them is
the :class:`~.mined_run.MinedRun` (the other executor, :mod:`.dask_mining`, makes the same
object from the workers' results).
"""
from __future__ import annotations

import logging
import time

import numpy as np

from bloomspan.engine.mining.report import covered_per_doc
from bloomspan.sidecar.curation.run_filter import (
    denied_occurrences,
    filter_mining_result,
    filter_template_documents,
    global_denies,
)
from bloomspan.sidecar.curation.store import load_curation
from bloomspan.sidecar.errors import BloomspanSidecarError
from bloomspan.sidecar.publish.document_figures import document_figures
from bloomspan.sidecar.publish.publication import (
    coverage_for,
    document_sites,
    mine_snapshot,
    phrase_documents_for,
    read_document_fields,
)
from bloomspan.sidecar.publish.template_reader import template_documents

from .mined_run import MinedRun
from .run_guards import check_documents
from .run_templates import detect_run_templates

log = logging.getLogger(__name__)


def mine_on_this_node(config, client, snap, indices: list[str], seconds: dict, progress=None
                      ) -> tuple[MinedRun, np.ndarray]:
    """Mine the snapshot ``snap`` of ``indices`` under ``config`` (a MineConfig); returns the
    mined run and the coverage mask (bool (W,), which ``--annotate`` writes back). Timings go
    into ``seconds`` (``mine``, ``bitmaps``, ``templates``)."""
    c = config
    check_documents(c, client, indices, snap.n_all, snap.n_docs, snap.skipped_by_reason())
    if progress:
        progress("mine", 0, snap.n_tokens)
    t0 = time.perf_counter()
    result = mine_snapshot(snap, c.mining.engine_config())
    seconds["mine"] = time.perf_counter() - t0
    curation = load_curation(client, c.publish.template_index)
    result, curation_report = filter_mining_result(snap, result, curation.entries, c.mining.min_length)
    curation_report.update(curation.summary())
    if progress:
        progress("mine", snap.n_tokens, snap.n_tokens)
    doc_keys = snap.stored_keys()
    t0 = time.perf_counter()
    phrase_docs, _ = phrase_documents_for(snap, result, doc_keys, progress)
    seconds["bitmaps"] = time.perf_counter() - t0
    # One read of the site and URL fields serves the clutter report and the template detector.
    fields = [f for f in (c.templates.site_field, c.templates.url_field if c.templates.enabled else None) if f]
    values = read_document_fields(client, indices, fields, doc_keys, c.scan.batch_size) if fields else {}
    sites = document_sites(values.get(c.templates.site_field), values.get(c.templates.url_field))
    template_docs, template_stats = None, None
    if c.templates.enabled:
        t0 = time.perf_counter()
        template_docs, template_stats = _detect_templates(c, snap, result.coverage, values.get(c.templates.site_field),
                                                          values.get(c.templates.url_field), global_denies(curation.entries),
                                                          progress)
        template_docs, curation_report["filtered_templates"] = filter_template_documents(template_docs,
                                                                                         curation.entries)
        seconds["templates"] = time.perf_counter() - t0
    offsets = np.asarray(snap.doc_offsets, dtype=np.int64)
    figures = document_figures(covered_per_doc(result.coverage, offsets), np.diff(offsets),
                               np.arange(offsets.shape[0] - 1, dtype=np.int64), sites if c.templates.site_field else None,
                               c.publish.top, c.publish.bins)
    mined = MinedRun(phrase_docs=phrase_docs, figures=figures, coverage=coverage_for(result, snap.n_tokens),
                     engine_stats=result.stats, skipped=snap.skipped_by_reason(), docs_seen=snap.n_all,
                     curation=curation_report, template_docs=template_docs, template_stats=template_stats)
    return mined, result.coverage


def _detect_templates(config, snap, mcfp_coverage: np.ndarray, site_values, url_values, denies, progress
                      ) -> tuple[list[tuple[str, dict]], dict]:
    """The detector (:func:`.run_templates.detect_run_templates`) on the snapshot: the index
    documents of its records and the run document's ``templates`` block. ``denies``: the
    global deny entries, whose occurrences no cleaner removes whatever record covers them
    (left out of the reported coverage as well)."""
    blocks = snap.block_offsets()
    if blocks is None:
        raise BloomspanSidecarError(
            f"{snap.folder}: this snapshot keeps no line boundaries; run once with --full to read the documents "
            "again", item=str(snap.folder))
    if progress:
        progress("templates", 0, snap.n_tokens)
    records, stats = detect_run_templates(snap.tokens, snap.doc_offsets, blocks, snap.vocabulary, site_values,
                                          url_values, config.templates, mcfp_coverage,
                                          denied_occurrences(snap, denies) if denies else None)
    if progress:
        progress("templates", snap.n_tokens, snap.n_tokens)
    return template_documents(records), stats
