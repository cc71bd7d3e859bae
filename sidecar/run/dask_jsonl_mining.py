"""``bloomspan mine --jsonl FILE --dask ADDRESS``: the workers read partitions of the file (byte
ranges of plain JSON Lines; a compressed file or WARC whole; Parquet by row group: :mod:`.file_partitions`).

Writes the same ``phrases.jsonl`` and ``report.json`` as the single-node run
(:mod:`bloomspan.sidecar.run.jsonl_mining`): same phrases in the same order, df, occurrences,
coverage figures, token ids and document ids. Only the timings and ``stats`` differ
(``stats`` holds the distributed stages and the engine's stats on the reduced corpus).
"""
from __future__ import annotations

import logging
import os
import time
import uuid

import numpy as np

from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.report import coverage_report_from_counts
from bloomspan.sidecar.distributed.cluster import DaskConfig, ProgressRelay, dashboard_link, dask_client
from bloomspan.sidecar.distributed.doc_layout import contiguous_layout
from bloomspan.sidecar.distributed.pipeline import mine_shards, shard_homes
from bloomspan.sidecar.distributed.shards import byte_ranges, read_jsonl_range
from bloomspan.sidecar.distributed.site_templates import detect_templates_on_dask

from .file_partitions import BYTE_RANGES, file_partitions, read_file_partition
from .jsonl_mining import JsonlInputError, JsonlMiningSummary
from .output_files import file_report_fields, write_outputs
from .run_templates import TEMPLATES_FILE

log = logging.getLogger(__name__)

RANGE_BYTES = 64 << 20  # at most this much of the file per read task


def mine_jsonl_dask(path: str, field: str, config: MiningConfig, out_dir: str, dask: DaskConfig,
                    id_field: str | None = None, progress=None, top: int = 20, n_ranges: int | None = None,
                    on_dashboard=None, templates=None):
    """Mine ``path`` on a Dask cluster; returns a :class:`~bloomspan.sidecar.run.jsonl_mining.JsonlMiningSummary`.

    progress(stage, done, total); n_ranges: read tasks (default: 2 per worker, and at most
    RANGE_BYTES each); on_dashboard(link) is called once the client is up; templates: a
    :class:`~.run_templates.TemplateOptions` to run the template detector on the workers
    (:func:`bloomspan.sidecar.distributed.site_templates.detect_templates_on_dask`: groups of
    whole sites), writing the same ``templates.jsonl`` as one process.
    """
    fields = tuple(templates.fields) if templates is not None and templates.enabled else ()
    if not os.path.isfile(path):
        raise FileNotFoundError(f"--jsonl {path}: no such file")
    relay = ProgressRelay(progress)
    with dask_client(dask) as client:
        if on_dashboard is not None:
            on_dashboard(dashboard_link(client))
        relay.attach(client)
        try:
            n_workers = max(1, len(client.scheduler_info(n_workers=-1)["workers"]))
            size = os.path.getsize(path)
            n_wanted = n_ranges or max(2 * n_workers, -(-size // RANGE_BYTES))
            partitions = file_partitions(path, lambda p: byte_ranges(p, n_wanted))
            log.info("dask partitions path=%s kind=%s count=%d", path, partitions.kind, len(partitions.parts))
            run = uuid.uuid4().hex[:12]
            t0 = time.perf_counter()
            if partitions.kind == BYTE_RANGES:
                relay.totals["read"] = size
                shards = [client.submit(read_jsonl_range, path, a, b, field, id_field, k, fields,
                                        key=f"bloomspan-read-{run}-{k}", retries=2)
                          for k, (a, b) in enumerate(partitions.parts)]
            else:
                relay.totals["read"] = len(partitions.parts)
                shards = [client.submit(read_file_partition, path, groups, field, id_field, k, fields,
                                        key=f"bloomspan-read-{run}-{k}", retries=2)
                          for k, groups in enumerate(partitions.parts)]
            checks = client.gather([client.submit(_check, s, key=f"bloomspan-check-{run}-{k}")
                                    for k, s in enumerate(shards)])
            for error, _, _ in checks:
                if error is not None:
                    raise JsonlInputError(path, *error)
            n_tokens = sum(c[2] for c in checks)
            if sum(c[1] for c in checks) == 0 or n_tokens == 0:
                raise JsonlInputError(path, 0, f"empty corpus: no document has any token in field {field!r}")
            dres = mine_shards(client, shards, lambda headers: contiguous_layout(client, shards, headers, run), config,
                               relay, global_ids=True, run=run)
            report = _report(client, shards, dres, top, run)
            template_records = None
            if fields:
                t1 = time.perf_counter()
                template_records, stats, stage = detect_templates_on_dask(
                    client, shards, shard_homes(client, shards), templates, dres.layout.global_docs,
                    dres.covers, relay, run=run)
                template_records = list(template_records)  # streamed from the workers: read before the client closes
                dres.stats["templates"] = stage.to_dict()
                report["templates"] = {"file": TEMPLATES_FILE, **stats, "site_field": templates.site_field,
                                       "url_field": templates.url_field,
                                       "seconds": round(time.perf_counter() - t1, 4)}
            wanted = [int(entry["doc"]) for entry in report.get("most_cluttered_docs", [])]
            id_of = _document_ids(client, shards, [c[1] for c in checks], wanted, run,
                                  id_field is not None or partitions.ids_in_shards)
        finally:
            relay.detach(client)
    seconds = time.perf_counter() - t0
    for entry in report.get("most_cluttered_docs", []):
        entry["id"] = id_of[int(entry["doc"])]
    return _write(path, config, out_dir, dres, report, seconds, JsonlMiningSummary, template_records)


def _check(shard) -> tuple[tuple[int, str] | None, int, int]:
    return shard.error, shard.n_docs, shard.n_tokens


def _shard_ids(shard, local: np.ndarray, with_id_field: bool) -> list[str]:
    """The external ids of the shard's documents ``local``: the id field, else their 1-based
    line numbers within the range."""
    if with_id_field:
        return [shard.external_ids[i] for i in local.tolist()]
    return [str(int(x)) for x in shard.line_numbers[local].tolist()]


def _n_lines(shard) -> int:
    return shard.n_lines


def _document_ids(client, shards, docs_per_shard: list[int], wanted: list[int], run: str,
                  with_id_field: bool) -> dict[int, str]:
    """doc number -> external id (the id field, else the 1-based line number in the file) of
    the ``wanted`` documents only: the driver never holds an id per document."""
    base = np.concatenate([[0], np.cumsum(docs_per_shard)]).astype(np.int64)
    wanted_arr = np.asarray(sorted(set(wanted)), dtype=np.int64)
    shard_of = np.searchsorted(base, wanted_arr, side="right") - 1
    lines = [0] if with_id_field else client.gather(
        [client.submit(_n_lines, s, key=f"bloomspan-nlines-{run}-{k}") for k, s in enumerate(shards)])
    line_base = np.concatenate([[0], np.cumsum(lines)]).astype(np.int64)
    out: dict[int, str] = {}
    for k in np.unique(shard_of).tolist():
        docs = wanted_arr[shard_of == k]
        ids = client.submit(_shard_ids, shards[k], docs - base[k], with_id_field,
                            key=f"bloomspan-ids-{run}-{k}").result()
        for d, x in zip(docs.tolist(), ids):
            out[d] = x if with_id_field else str(int(line_base[k]) + int(x))
    return out


def _covered_and_lengths(shard, cover) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(cover.covered, dtype=np.int64), np.diff(shard.doc_offsets)


def _report(client, shards: list, dres, top: int, run: str) -> dict:
    """The file run's report, the single process's (:func:`coverage_report_from_counts`: its
    float mean sums the documents' fractions in file order, so the counts come to the driver:
    12 B per document, the one per-document array of a file run's driver)."""
    parts = client.gather([client.submit(_covered_and_lengths, s, c, key=f"bloomspan-doccounts-{run}-{k}")
                           for k, (s, c) in enumerate(zip(shards, dres.covers))])
    covered = np.concatenate([p[0] for p in parts])
    offsets = np.zeros(covered.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.concatenate([p[1] for p in parts]), out=offsets[1:])
    del parts
    return coverage_report_from_counts(covered, offsets, dres.phrases, dres.vocabulary, top=top)


def _write(path, config, out_dir, dres, report, seconds, summary_type, template_records=None):
    n_tokens = dres.layout.n_tokens
    n_docs = dres.layout.n_docs
    # Reading and mining overlap on the workers, so both timings are the whole distributed run.
    engine = "bloomspan" if config.engine == "auto" else config.engine
    report.update(file_report_fields(path, engine, config, dres.vocabulary_size, len(dres.phrases), seconds, seconds,
                                     n_tokens, {"engine": "distributed", **dres.stats}))
    write_outputs(out_dir, dres.phrases, dres.vocabulary, report, template_records)
    log.info("mined on dask phrases=%d covered_share=%.4f seconds=%.2f out=%s", len(dres.phrases),
             report["covered_share"], seconds, out_dir)
    return summary_type(out_dir, n_docs, n_tokens, len(dres.phrases), float(report["covered_share"]), seconds,
                        seconds, report)
