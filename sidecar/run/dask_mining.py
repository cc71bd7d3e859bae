"""The mine phase on Dask: the workers read the index in slices and mine it, into a
:class:`.mined_run.MinedRun` (the same object :mod:`.local_mining` makes on this node).

The driver opens one point in time per concrete index (so every slice reads the same
moment, and a retried slice reads it again), the workers read slices of it
(:func:`bloomspan.sidecar.distributed.shards.read_index_slice`) and the run is mined by
:func:`bloomspan.sidecar.distributed.pipeline.mine_shards`. Documents are numbered in the
canonical order of :mod:`.snapshot` (ascending key bytes), so the run publishes what the
single-node run publishes: the same phrase documents, bitmaps, doc map, coverage and report.

With ``--templates`` the detector runs on the workers by groups of whole sites
(:mod:`bloomspan.sidecar.distributed.site_templates`). With ``--annotate`` the workers keep the
shards they read (with character offsets) and their occurrences, and after publication each
shard annotates its own documents (:func:`annotate_on_dask`,
:mod:`bloomspan.sidecar.distributed.shard_annotation`): the run's :class:`DaskSession` holds
the Dask client, the shards and the points in time from the mine phase to the end of the run.
With a slice state (incremental runs, :mod:`bloomspan.sidecar.distributed.slice_state`) each
read task lists its slice and fetches only its new and changed documents. What a Dask run
does not do yet (refused with the flag named): a template config with a
cross-site pass, a curation deny entry that would filter a mined
phrase, and global deny entries in a run with templates. Dask re-runs a lost task, so the mine
phase has no checkpoint of its own; once it ends, a killed run publishes again without mining.
"""
from __future__ import annotations

import logging
import operator
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bloomspan.engine.templates.site_partitions import site_partition_refusal
from bloomspan.sidecar.cluster.change_detection import CHANGE_COUNTS
from bloomspan.sidecar.cluster.document_status import SKIP_REASONS
from bloomspan.sidecar.cluster.scroll import delete_pits
from bloomspan.sidecar.curation.run_filter import filter_mining_result, filter_template_documents, global_denies
from bloomspan.sidecar.curation.store import curation_index, load_curation
from bloomspan.sidecar.distributed.cluster import ProgressRelay, dashboard_link, dask_client
from bloomspan.sidecar.distributed.coverage import shard_figures
from bloomspan.sidecar.distributed.doc_layout import numbered_layout
from bloomspan.sidecar.distributed.doc_map import (
    ShardKeys,
    StagedDocMap,
    copy_staged_doc_map,
    create_staging_index,
    stage_doc_map,
)
from bloomspan.sidecar.distributed.doc_numbering import key_block, ranks_in, shard_numbers
from bloomspan.sidecar.distributed.index_slices import index_slices
from bloomspan.sidecar.distributed.pipeline import mine_shards, shard_homes
from bloomspan.sidecar.distributed.shard_annotation import annotate_shard
from bloomspan.sidecar.distributed.shards import read_index_slice
from bloomspan.sidecar.distributed.site_templates import detect_templates_on_dask
from bloomspan.sidecar.distributed.slice_state import SliceState, read_slice_incrementally
from bloomspan.sidecar.errors import ClusterConfigError, PublishError
from bloomspan.sidecar.publish.document_annotation import AnnotateSummary, install_document_mapping
from bloomspan.sidecar.publish.document_figures import DocumentFigures
from bloomspan.sidecar.publish.phrase_records import phrase_document, phrase_document_order, phrase_record
from bloomspan.sidecar.publish.template_reader import iter_template_documents

from .mined_run import MinedRun
from .record_files import CoverageFiles, RecordFile, RecordFileWriter
from .run_guards import check_documents
from .run_templates import TemplateOptions

log = logging.getLogger(__name__)

DOC_MAP_PART = 100_000  # documents per doc map part a worker merges and stages (ten published chunks)


def check_supported(config) -> None:
    """Raise ClusterConfigError for the options a Dask run does not have."""
    if config.templates.enabled:
        refusal = site_partition_refusal(config.templates.detector_config())
        if refusal is not None:
            raise ClusterConfigError("template_config", config.templates.template_config, f"{refusal} (needed by --dask)")


@dataclass
class ShardsToAnnotate:
    """What the annotate phase needs of the mine phase, left on the workers: the shard futures
    (read with offsets), each shard's occurrence futures, and where each shard lives."""

    shards: list
    occurrences: list
    homes: list
    n_docs: int


class DaskSession:
    """A run's Dask client, opened by the mine phase and closed with the run (:meth:`close`),
    and what it leaves on the workers for the annotate phase: the shards, their occurrences,
    and the points in time they were read in (a shard lost with its worker is read again in
    the same one; the PITs are deleted on close)."""

    def __init__(self, dask, on_dashboard=None):
        self.dask, self.on_dashboard = dask, on_dashboard
        self._stack = ExitStack()
        self.client = None
        self.pits: dict[str, str | None] = {}
        self.to_annotate: ShardsToAnnotate | None = None
        self.incremental: dict | None = None  # the last mine phase's read counts (incremental reads)

    def open(self):
        if self.client is None:
            self.client = self._stack.enter_context(dask_client(self.dask))
            if self.on_dashboard is not None:
                self.on_dashboard(dashboard_link(self.client))
        return self.client

    def release(self, os_client) -> None:
        """Forget the shards and delete the points in time (the client stays open)."""
        self.to_annotate = None
        pits, self.pits = list(self.pits.values()), {}
        delete_pits(os_client, pits)

    def close(self, os_client) -> None:
        try:
            self.release(os_client)
        finally:
            self.client = None
            self._stack.close()


def mine_index_on_dask(config, client, session: DaskSession, indices: list[str], units, scan_mode: str,
                       seconds: dict, staging: str | None, parts_dir, progress=None, slice_state: SliceState | None = None
                       ) -> MinedRun:
    """Read and mine ``indices`` (their scan ``units``) on the Dask cluster of ``session``;
    returns the mined run. Its ``doc_map`` is a :class:`StagedDocMap`: the workers wrote the
    stored documents' keys in canonical order into the index ``staging``
    (:mod:`bloomspan.sidecar.distributed.doc_map`; None: no doc map is staged, a re-read for
    the annotate phase), the driver keeps the keys of the documents the report names. The mined
    run's phrase documents and template records are written to record files in ``parts_dir``
    as they come from the workers, a batch at a time (:class:`~.record_files.RecordFile`:
    :meth:`MinedRun.save` moves them into the run folder); the driver never holds them whole. With
    ``config.publish.annotate`` the session keeps the shards for :func:`annotate_on_dask` (and
    their points in time), else it releases them. ``slice_state``: each slice is read
    incrementally from its last read kept there
    (:func:`~bloomspan.sidecar.distributed.slice_state.read_slice_incrementally`); the
    summed counts are left in ``session.incremental``."""
    relay = ProgressRelay(progress)
    curation = load_curation(client, config.publish.template_index)
    if config.templates.enabled and global_denies(curation.entries):
        raise PublishError(f"--dask: {len(global_denies(curation.entries))} global deny entr(y/ies) in "
                           f"{curation_index(config.publish.template_index)}; the template figures of a Dask run cannot leave "
                           "their occurrences out yet: mine without --dask, or with --no-templates (nothing was "
                           "published)")
    session.release(client)  # a session mines once: a second mine (a resumed annotate) reads afresh
    t0 = time.perf_counter()
    try:
        if scan_mode == "pit":
            for index in indices:
                session.pits[index] = client.create_pit(index=index, keep_alive=config.scan.pit_keep_alive)["pit_id"]
        dclient = session.open()
        relay.attach(dclient)
        try:
            relay.totals["read"] = client.count(index=",".join(indices))["count"]
            mined = _mine(dclient, client, config, indices, units, session, relay, slice_state, staging,
                          Path(parts_dir), curation, progress)
        except BaseException:
            if staging is not None:  # nothing refers to a half-staged doc map
                client.indices.delete(index=staging, ignore_unavailable=True)
            raise
        finally:
            relay.detach(dclient)
    finally:
        if session.to_annotate is None:
            session.release(client)
    seconds["read_and_mine"] = time.perf_counter() - t0
    return mined


def _mine(dclient, client, config, indices, units, session, relay, slice_state, staging, parts_dir: Path, curation,
          progress) -> MinedRun:
    dres, keys, doc_map, skipped, n_all, templates, figures, coverage = _read_and_mine(
        dclient, client, config, indices, units, session, relay, slice_state, staging, parts_dir, curation.entries)
    try:
        check_documents(config, client, indices, n_all, doc_map.n_docs, skipped)
        curation_report = _curation_report(config, dres, curation)
        phrase_docs = _phrase_documents(dres, keys, parts_dir / "phrases.jsonl", progress)
    finally:
        keys.release()
    template_docs = template_stats = None
    if templates is not None:
        template_docs, template_stats, curation_report["filtered_templates"] = templates
    return MinedRun(phrase_docs=phrase_docs, figures=figures, coverage=coverage,
                    engine_stats={"engine": "distributed", **dres.stats}, skipped=skipped, docs_seen=n_all,
                    curation=curation_report, template_docs=template_docs, template_stats=template_stats,
                    doc_map=doc_map.to_dict() if staging is not None else None)


def _read_and_mine(dclient, client, config, indices, units, session: DaskSession, relay, slice_state,
                   staging: str | None, parts_dir: Path, curation_entries):
    n_workers = max(1, len(dclient.scheduler_info(n_workers=-1)["workers"]))
    run = uuid.uuid4().hex[:12]
    parts = index_slices(indices, units, n_workers, session.pits, int(relay.totals.get("read") or 0))
    cluster = config.cluster
    options = TemplateOptions(site_field=config.templates.site_field, url_field=config.templates.url_field,
                              config=config.templates.template_config) if config.templates.enabled else None
    # Without templates the site field is still read with the text, for the report's sites.
    fields = options.fields if options is not None else ((config.templates.site_field,) if config.templates.site_field else ())
    read_args = (config.scan.field, len(indices) > 1, config.scan.batch_size, config.scan.pit_keep_alive)
    if slice_state is None:
        shards = [dclient.submit(read_index_slice, cluster, part, *read_args, k, fields, config.publish.annotate,
                                 key=f"bloomspan-read-{run}-{k}", retries=2) for k, part in enumerate(parts)]
    else:
        shards = [dclient.submit(read_slice_incrementally, cluster, part, *read_args, k, fields, config.publish.annotate,
                                 slice_state, key=f"bloomspan-read-{run}-{k}", retries=2)
                  for k, part in enumerate(parts)]
    if slice_state is not None:
        session.incremental = _summed_reads(dclient.gather(
            [dclient.submit(_incremental_counts, s, key=f"bloomspan-reads-{run}-{k}") for k, s in enumerate(shards)]))
    else:
        session.incremental = None
    numbering = number_documents(dclient, shards, run)
    doc_map = StagedDocMap(staging, numbering.n_docs)
    if staging is not None:
        create_staging_index(client, staging)
        stage_doc_map(dclient, cluster, numbering, staging, config.publish.bulk_docs, run, DOC_MAP_PART)
    skipped, n_all, global_docs = numbering.skipped, numbering.n_all, numbering.global_docs
    del numbering  # the shards' sorted keys are freed on the workers: only their numbers stay

    def layout_of(shard_headers):
        return numbered_layout(dclient, shards, global_docs, shard_headers, run, shard_homes(dclient, shards))

    dres = mine_shards(dclient, shards, layout_of, config.mining.engine_config(), relay, global_ids=False,
                       phrase_documents=True, coverage_bitmaps=True, run=run, keep_occurrences=config.publish.annotate)
    templates = None
    homes = shard_homes(dclient, shards)
    keys = ShardKeys(dclient, shards, dres.layout.global_docs, homes, run)
    if options is not None:
        records, stats, stage = detect_templates_on_dask(dclient, shards, homes, options,
                                                         dres.layout.global_docs, dres.covers, relay, run=run)
        dres.stats["templates"] = stage.to_dict()
        # the merged records from the partitions' workers, a batch at a time while they hold them,
        # written as the index documents publication reads
        kept, filtered = filter_template_documents(iter_template_documents(records), curation_entries)
        with RecordFileWriter(parts_dir / "templates.jsonl") as out:
            out.write_all(list(pair) for pair in kept)
        templates = out.close(), stats, filtered
        del records  # the partitions' records are freed on the workers
    if config.publish.annotate:
        session.to_annotate = ShardsToAnnotate(shards, dres.occurrences, homes, doc_map.n_docs)
        dres.occurrences = None
    figures = run_figures(dclient, shards, dres, config, homes, run)
    doc_map.named = keys.keys_of(row[3] for row in figures.cluttered)  # the report's most cluttered documents
    # the coverage bitmaps from the workers, a chunk at a time, while the shards hold them
    coverage = CoverageFiles(dres.coverage_chunks.write(parts_dir))
    dres.stats["coverage_sent_bytes"] += dres.coverage_chunks.bytes_fetched
    dres.coverage_chunks = None
    dres.covers = None  # the shards' per-document covered counts are freed on the workers
    return dres, keys, doc_map, skipped, n_all, templates, figures, coverage


def run_figures(dclient, shards: list, dres, config, homes: list[dict], run: str) -> DocumentFigures:
    """The report's per-document figures, summed on each shard's worker
    (:func:`~bloomspan.sidecar.distributed.coverage.shard_figures`) and merged here: the
    driver receives O(bins + top + sites) values per shard, nothing per document."""
    parts = dclient.gather([dclient.submit(shard_figures, s, c, g, config.templates.site_field, config.publish.top, config.publish.bins,
                                           key=f"bloomspan-figures-{run}-{k}", **homes[k])
                            for k, (s, c, g) in enumerate(zip(shards, dres.covers, dres.layout.global_docs))])
    return DocumentFigures.merged(parts, config.publish.top, config.publish.bins, with_sites=bool(config.templates.site_field))


def staged_doc_map(mined: MinedRun, session: DaskSession, cluster) -> StagedDocMap:
    """The mined run's staged doc map, which the workers of ``session``'s Dask cluster (opened
    again if a resumed run has none yet) copy into the physical index (its ``write_into``)."""
    def copy(doc_map: StagedDocMap, physical: str, run_id: str) -> int:
        return copy_staged_doc_map(session.open(), cluster, doc_map, physical, run_id, uuid.uuid4().hex[:12])

    doc_map = StagedDocMap.from_dict(mined.doc_map)
    doc_map.copier = copy
    return doc_map


def annotate_on_dask(config, client, session: DaskSession, indices: list[str], run_id: str,
                     progress=None) -> AnnotateSummary:
    """Each shard the mine phase left on the workers annotates its documents
    (:func:`~bloomspan.sidecar.distributed.shard_annotation.annotate_shard`); the summaries
    are folded in shard order. The session's shards and points in time are released after."""
    todo = session.to_annotate
    if todo is None:
        raise ValueError("annotate_on_dask needs a session whose mine phase ran with annotate=True")
    install_document_mapping(client, list(indices))
    dclient = session.client
    relay = ProgressRelay(progress)
    relay.totals["annotate"] = todo.n_docs
    relay.attach(dclient)
    run = uuid.uuid4().hex[:12]
    cluster = config.cluster
    try:
        futures = [dclient.submit(annotate_shard, cluster, shard, occ, list(indices), run_id, config.publish.bulk_docs, k,
                                  key=f"bloomspan-annotate-{run}-{k}", **todo.homes[k])
                   for k, (shard, occ) in enumerate(zip(todo.shards, todo.occurrences))]
        summary = AnnotateSummary()
        for part in dclient.gather(futures):
            summary.add(part)
    finally:
        relay.detach(dclient)
        session.release(client)
    # Our writes visible to the next run's listing, as the single process makes them.
    client.indices.refresh(index=",".join(indices))
    if summary.failed_by_reason:
        log.warning("annotation skipped %s document(s): %s", sum(summary.failed_by_reason.values()),
                    summary.failed_by_reason)
    return summary


def _incremental_counts(shard) -> dict:
    return shard.incremental


def _summed_reads(reads: list[dict]) -> dict:
    """The run's ``incremental`` counts: the slices' read counts summed."""
    return {name: sum(int(r[name]) for r in reads) for name in CHANGE_COUNTS}


@dataclass
class Numbering:
    """The canonical numbering of a run's documents, made on the workers
    (:mod:`bloomspan.sidecar.distributed.doc_numbering`): futures of each shard's global
    numbers (its ``global_docs``), of its sorted keys and of their numbers in key order; its
    stored documents (``shard_docs``) and the run's counts."""

    global_docs: list
    blocks: list
    sorted_numbers: list
    shard_docs: list[int]
    skipped: dict[str, int]
    n_all: int

    @property
    def n_docs(self) -> int:
        return int(sum(self.shard_docs))


def number_documents(dclient, shards: list, run: str) -> Numbering:
    """Number the shards' stored documents in canonical order on the workers: each shard's key
    block is ranked in every block (S² small tasks, each beside its inputs), the ranks summed
    per shard. The driver receives counts only: no key and no document number."""
    blocks = [dclient.submit(key_block, s, key=f"bloomspan-keys-{run}-{k}") for k, s in enumerate(shards)]
    numbered = []
    for k, block in enumerate(blocks):
        ranks = [dclient.submit(ranks_in, other, block, j == k, key=f"bloomspan-rank-{run}-{k}-{j}")
                 for j, other in enumerate(blocks)]
        numbered.append(dclient.submit(shard_numbers, block, *ranks, key=f"bloomspan-number-{run}-{k}"))
    global_docs = [dclient.submit(operator.itemgetter(0), f, key=f"bloomspan-global-{run}-{k}")
                   for k, f in enumerate(numbered)]
    repeated = sum(dclient.gather([dclient.submit(operator.itemgetter(2), f, key=f"bloomspan-repeated-{run}-{k}")
                                   for k, f in enumerate(numbered)]))
    if repeated:
        raise ClusterConfigError("index", "?", "the slices returned a document twice; is a slice count above "
                                               "the index's max_slices_per_pit?")
    counts = dclient.gather([dclient.submit(_block_counts, b, key=f"bloomspan-counts-{run}-{k}")
                             for k, b in enumerate(blocks)])
    skipped = {name: sum(c[0][name] for c in counts) for name in SKIP_REASONS.values()}
    sorted_numbers = [dclient.submit(operator.itemgetter(1), f, key=f"bloomspan-sorted-{run}-{k}")
                      for k, f in enumerate(numbered)]
    return Numbering(global_docs, blocks, sorted_numbers, [c[2] for c in counts], skipped, sum(c[1] for c in counts))


def _block_counts(block) -> tuple[dict[str, int], int, int]:
    return block.skipped, block.n_all, int(np.count_nonzero(block.stored))


PHRASE_BATCH = 256  # phrase documents whose bitmaps the driver fetches from the workers at once


def _phrase_documents(dres, keys: ShardKeys, path: Path, progress=None) -> RecordFile:
    """The phrase documents every run publishes, in its order (:func:`phrase_document_order`),
    written to ``path`` a batch at a time with the bitmaps the growth shards encoded (fetched
    from the workers per batch, then released there) and the keys of their example documents
    (looked up where the shards are, per batch)."""
    if progress:
        progress("bitmaps", 0, len(dres.phrases))
    strings = [dres.vocabulary.tokens(p.tokens) for p in dres.phrases]
    order = sorted(range(len(dres.phrases)), key=lambda i: phrase_document_order(phrase_record(dres.phrases[i],
                                                                                               strings[i])))
    with RecordFileWriter(path) as out:
        for first in range(0, len(order), PHRASE_BATCH):
            batch = order[first:first + PHRASE_BATCH]
            extras = dres.phrase_extras.fetch(batch)
            named = keys.keys_of(d for _, examples in extras for d in examples)
            for i, (bitmap, examples) in zip(batch, extras):
                out.write(phrase_document(dres.phrases[i], strings[i], [named[d] for d in examples], bitmap))
            if progress:
                progress("bitmaps", first + len(batch), len(order))
    dres.phrase_extras = None  # the bitmaps are freed on the workers
    if progress:
        progress("bitmaps", len(order), len(order))
    return out.close()


class _PhraseStrings:
    """Where curation reads a snapshot: the phrases' strings. It holds no tokens: a run that
    curation would filter is refused before anything needs them (:func:`_curation_report`)."""

    def __init__(self, dres):
        self.tokens = np.zeros(0, dtype=np.uint32)
        self.doc_offsets = np.zeros(1, dtype=np.int64)
        self.vocabulary = dres.vocabulary


class _Phrases:
    def __init__(self, phrases):
        self.phrases, self.coverage, self.stats = phrases, None, {}


def _curation_report(config, dres, curation) -> dict:
    """The run report's ``curation``, as the single-node run writes it. A run whose phrases a
    deny entry would filter is refused before anything is published: filtering here would need
    the coverage recomputed on the full corpus, which no process of a Dask run holds."""
    _, report = filter_mining_result(_PhraseStrings(dres), _Phrases(dres.phrases), curation.entries,
                                     config.mining.min_length)
    if report["filtered"]:
        raise PublishError(f"--dask: {report['filtered']} mined phrase(s) are denied in "
                           f"{curation_index(config.publish.template_index)}; a Dask run cannot filter them yet: "
                           "mine without --dask (nothing was published)")
    report.update(curation.summary())
    return report
