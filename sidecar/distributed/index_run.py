"""``bloomspan mine --index NAME --dask ADDRESS``: the workers read the index in slices.

The driver opens one point in time per concrete index (so every slice reads the same
moment, and a retried slice reads it again), the workers read slices of it
(:func:`.shards.read_index_slice`) and the run is mined by :mod:`.pipeline`. Documents are
numbered in the canonical order of :mod:`bloomspan.sidecar.run.snapshot` (ascending key bytes)
and published through the single-node publication code (:mod:`bloomspan.sidecar.publish.publication`,
:func:`bloomspan.sidecar.publish.template_index.publish`), given views of the distributed result in
place of a snapshot. So the template index holds what the single-node run publishes: the
same phrase documents, bitmaps, doc map, coverage and report.

A Dask run always reads everything (no incremental re-read, no checkpoint: Dask re-runs a
lost task instead) and does not support ``--templates`` or ``--annotate``, which need the
whole corpus in one process.
"""
from __future__ import annotations

import logging
import time
import uuid
from datetime import UTC, datetime

import numpy as np

from bloomspan.sidecar.errors import ClusterConfigError, PublishError

from .cluster import DaskConfig, ProgressRelay, dashboard_link, dask_client

log = logging.getLogger(__name__)


class _PhraseStrings:
    """Where curation reads a snapshot: the phrases' strings. It holds no tokens: a run that
    curation would filter is refused before anything needs them (:func:`_curation_report`)."""

    def __init__(self, dres):
        self.tokens = np.zeros(0, dtype=np.uint32)
        self.doc_offsets = np.zeros(1, dtype=np.int64)
        self.vocabulary = dres.vocabulary


def _phrase_documents(dres, doc_keys: list[str], progress=None) -> list[dict]:
    """The phrase documents every run publishes (:func:`bloomspan.sidecar.publish.phrase_records.phrase_document`,
    in its order), from the bitmaps the growth shards encoded."""
    from bloomspan.sidecar.publish.phrase_records import phrase_document, phrase_document_order

    if progress:
        progress("bitmaps", 0, len(dres.phrases))
    out = [phrase_document(p, dres.vocabulary.tokens(p.tokens), [doc_keys[i] for i in examples], bitmap)
           for p, (bitmap, examples) in zip(dres.phrases, dres.phrase_extras)]
    out.sort(key=phrase_document_order)
    if progress:
        progress("bitmaps", len(out), len(out))
    return out


class _CorpusFigures:
    """The full corpus' shape where publication reads a snapshot's figures (the report)."""

    def __init__(self, doc_offsets: np.ndarray, skipped: dict[str, int]):
        self.doc_offsets = doc_offsets
        self.n_tokens = int(doc_offsets[-1])
        self._skipped = skipped

    def skipped_by_reason(self) -> dict[str, int]:
        return dict(self._skipped)


class _Result:
    def __init__(self, phrases, coverage, stats):
        self.phrases, self.coverage, self.stats = phrases, coverage, stats


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def check_supported(config) -> None:
    """Raise ClusterConfigError for the options a Dask run does not have."""
    if config.templates:
        raise ClusterConfigError("templates", True, "the template detector needs the whole corpus in one process; "
                                                    "run it without --dask")
    if config.annotate:
        raise ClusterConfigError("annotate", True, "annotation needs the run's snapshot on one node; run it "
                                                   "without --dask")


SLICE_DOCS = 16_000  # at most about this many documents per read task (~10 M tokens of web pages)
MAX_SLICES_PER_PIT = 1024  # the default index.max_slices_per_pit of OpenSearch and Elasticsearch


def slices_per_shard(n_docs: int, n_units: int, n_workers: int) -> int:
    """Slices of each index shard: enough to keep every worker busy twice, and small enough
    that one read task holds at most ~SLICE_DOCS documents (a worker's memory while counting
    grows with the shard it counts, so a few large shards would not fit where many small
    ones do)."""
    units = max(1, n_units)
    by_workers = -(-2 * n_workers // units)
    by_size = -(-max(0, n_docs) // (SLICE_DOCS * units))
    return max(1, min(max(by_workers, by_size), MAX_SLICES_PER_PIT // units))


def _slices(indices: list[str], units, n_workers: int, pits: dict[str, str | None], n_docs: int):
    """Read tasks: every shard, split into :func:`slices_per_shard` slices."""
    from .shards import IndexSlice

    per_shard = slices_per_shard(n_docs, len(units), n_workers)
    shards_of: dict[str, int] = {}
    for u in units:
        shards_of[u.index] = u.n_shards
    return [IndexSlice(index, i, shards_of[index] * per_shard, pits.get(index))
            for index in indices for i in range(shards_of[index] * per_shard)]


def _index_header(shard) -> tuple[list[str], np.ndarray]:
    return shard.keys, shard.meta[:, 3].copy()


def _canonical_layout(headers):
    """Canonical numbering: (stored keys in order, global number of each shard's documents,
    counts by skip reason, documents seen)."""
    from bloomspan.sidecar.run.checkpoint import SKIP_REASONS, STORED, keys_array
    from bloomspan.sidecar.run.snapshot import canonical_rows

    keys = [k for ks, _ in headers for k in ks]
    status = np.concatenate([s for _, s in headers]) if headers else np.zeros(0, dtype=np.int64)
    shard_of = np.concatenate([np.full(len(ks), k, dtype=np.int64) for k, (ks, _) in enumerate(headers)]) \
        if headers else np.zeros(0, dtype=np.int64)
    arr = keys_array([k.encode("utf-8", "surrogatepass") for k in keys])
    rows = canonical_rows(arr)
    if rows.shape[0] != len(keys):
        raise ClusterConfigError("index", "?", "the slices returned a document twice; is a slice count above "
                                               "the index's max_slices_per_pit?")
    stored_rows = rows[status[rows] == STORED]
    number = np.full(len(keys), -1, dtype=np.int64)
    number[stored_rows] = np.arange(stored_rows.shape[0])
    global_docs = []
    for k in range(len(headers)):
        mine = np.flatnonzero(shard_of == k)
        global_docs.append(number[mine][status[mine] == STORED])
    skipped = {name: int(np.count_nonzero(status == code)) for code, name in SKIP_REASONS.items()}
    return [keys[i] for i in stored_rows.tolist()], global_docs, skipped, len(keys)


def run_mining_dask(config, dask: DaskConfig, progress=None, client=None, on_dashboard=None):
    """One mining run of ``config`` (a :class:`~bloomspan.sidecar.run.mining_run.MineConfig`) on
    Dask; returns the same :class:`~bloomspan.sidecar.run.mining_run.RunSummary` as ``run_mining``."""
    from bloomspan.sidecar.cluster.scroll import _delete_pits, pit_supported, resolve_units
    from bloomspan.sidecar.publish.template_index import new_run_id
    from bloomspan.sidecar.run.lease import Lease, new_holder

    check_supported(config)
    if client is None:
        client = config.cluster_config().checked_client()
    indices, units = resolve_units(client, config.index)
    run_id = new_run_id()
    started_at = _now_iso()
    t_total = time.perf_counter()
    relay = ProgressRelay(progress)
    with Lease(client, config.lease_index, config.template_index, holder=new_holder(), ttl=config.lease_ttl,
               run_id=run_id) as lease:
        mode = config.scan_mode
        if mode == "auto":
            mode = "pit" if pit_supported(client, indices[0], config.pit_keep_alive) else "scroll"
        pits: dict[str, str | None] = {}
        try:
            if mode == "pit":
                for index in indices:
                    pits[index] = client.create_pit(index=index, keep_alive=config.pit_keep_alive)["pit_id"]
            with dask_client(dask) as dclient:
                if on_dashboard is not None:
                    on_dashboard(dashboard_link(dclient))
                relay.attach(dclient)
                try:
                    relay.totals["read"] = client.count(index=",".join(indices))["count"]
                    dres, doc_keys, skipped, n_all, seconds_read = _mine(dclient, config, indices, units, pits, relay)
                finally:
                    relay.detach(dclient)
        finally:
            _delete_pits(client, list(pits.values()))
        return _publish(client, config, lease, run_id, started_at, indices, dres, doc_keys, skipped, n_all,
                        {"read_and_mine": seconds_read}, t_total, progress)


def _mine(dclient, config, indices, units, pits, relay):
    from .pipeline import ShardLayout, mine_shards
    from .shards import read_index_slice

    t0 = time.perf_counter()
    n_workers = max(1, len(dclient.scheduler_info(n_workers=-1)["workers"]))
    run = uuid.uuid4().hex[:12]
    parts = _slices(indices, units, n_workers, pits, int(relay.totals.get("read") or 0))
    cluster = config.cluster_config()
    shards = [dclient.submit(read_index_slice, cluster, part, config.field, len(indices) > 1, config.batch_size,
                             config.pit_keep_alive, k, key=f"bloomspan-read-{run}-{k}", retries=2)
              for k, part in enumerate(parts)]
    headers = dclient.gather([dclient.submit(_index_header, s, key=f"bloomspan-keys-{run}-{k}")
                              for k, s in enumerate(shards)])
    doc_keys, global_docs, skipped, n_all = _canonical_layout(headers)

    def layout_of(shard_headers):
        return ShardLayout(global_docs, [h[1] for h in shard_headers])

    dres = mine_shards(dclient, shards, layout_of, config.mining_config(), relay, global_ids=False,
                       phrase_documents=True, coverage_bitmaps=True, run=run)
    return dres, doc_keys, skipped, n_all, time.perf_counter() - t0


def _curation_report(client, config, result, dres) -> dict:
    """The run report's ``curation``, as the single-node run writes it. A run whose phrases a
    deny entry would filter is refused before anything is published: filtering here would need
    the coverage recomputed on the full corpus, which no process of a Dask run holds."""
    from bloomspan.sidecar.curation.run_filter import filter_mining_result
    from bloomspan.sidecar.curation.store import curation_index, load_curation

    curation = load_curation(client, config.template_index)
    _, report = filter_mining_result(_PhraseStrings(dres), result, curation.entries, config.min_length)
    if report["filtered"]:
        raise PublishError(f"--dask: {report['filtered']} mined phrase(s) are denied in "
                           f"{curation_index(config.template_index)}; a Dask run cannot filter them yet: "
                           "mine without --dask (nothing was published)")
    report.update(curation.summary())
    return report


def _publish(client, config, lease, run_id, started_at, indices, dres, doc_keys, skipped, n_all, seconds,
             t_total, progress):
    from bloomspan.sidecar.publish.publication import (
        document_sites,
        json_safe,
        read_document_fields,
        run_report_from_counts,
        site_clutter_from_counts,
    )
    from bloomspan.sidecar.publish.template_index import publish
    from bloomspan.sidecar.run.mining_run import RunSummary

    c = config
    figures = _CorpusFigures(dres.doc_offsets, skipped)
    # No process holds the mask: the report and the published coverage come from the
    # shards' per-document counts and bitmaps (curation only reads it to filter, refused here).
    result = _Result(dres.phrases, None, {"engine": "distributed", **dres.stats})
    phrase_docs = _phrase_documents(dres, doc_keys, progress)
    report = run_report_from_counts(figures, dres.coverage.covered, doc_keys, phrase_docs, c.top, c.bins)
    if c.site_field:
        values = read_document_fields(client, indices, [c.site_field], doc_keys, c.batch_size)
        sites = document_sites(values.get(c.site_field), None)
        report["most_cluttered_sites"] = site_clutter_from_counts(
            {d: s for d, s in enumerate(sites) if s is not None}, dres.coverage.covered, dres.doc_offsets, c.top)
    report["curation"] = _curation_report(client, c, result, dres)
    n_tokens = figures.n_tokens
    covered = dres.coverage.covered_tokens
    # The run document of mining_run._Run._phase_publish, field for field.
    run_doc = {"source_index": c.index, "field": c.field, "started_at": started_at, "finished_at": _now_iso(),
               "docs_seen": n_all, "docs_skipped": sum(skipped.values()), "tokens_mined": n_tokens,
               "covered_tokens": covered, "covered_share": covered / n_tokens if n_tokens else 0.0,
               "phrases": len(phrase_docs), "params": c.params(), "report": json_safe(report),
               "stats": json_safe({"engine": result.stats, "kind": "full", "seconds": seconds, "incremental": None,
                                   "scan_docs_per_second": None})}
    res = publish(client, c.template_index, run_id, phrase_docs=phrase_docs, doc_keys=doc_keys,
                  coverage=dres.coverage.bitmaps(), run_doc=run_doc, keep_runs=c.keep_runs,
                  bulk_docs=c.bulk_docs, before_swap=lease.check, progress=progress)
    seconds = {**seconds, "total": time.perf_counter() - t_total}
    log.info("dask run %s published %s: docs=%d tokens=%d phrases=%d covered_share=%.4f", run_id,
             res.physical_index, len(doc_keys), n_tokens, len(phrase_docs), run_doc["covered_share"])
    return RunSummary(run_id=run_id, physical_index=res.physical_index, template_index=c.template_index,
                      kind="full", resumed=False, docs_seen=n_all, docs_mined=len(doc_keys),
                      docs_skipped=sum(skipped.values()), skipped_by_reason=skipped, tokens_mined=n_tokens,
                      covered_tokens=covered, covered_share=run_doc["covered_share"], phrases=len(phrase_docs),
                      incremental={}, deleted_runs=res.deleted, seconds=seconds, templates=None)
