"""The template detector on Dask workers: shards' pages routed to partitions of whole sites,
each partition detected on one worker, the records and stats merged on the driver.

Exact by :mod:`bloomspan.engine.templates.site_partitions` (every pass of the detector works
inside one site for the configs it accepts): the records equal
:func:`bloomspan.sidecar.run.run_templates.detect_run_templates`'s and so do its stats, but
for timings (summed CPU seconds over the partitions here).

Stages (every task a pure function of its arguments, retried by Dask when its worker dies):

1. ``site loads`` (on each shard's worker): per routing key (:func:`route_key` of each
   document's site) its pages and tokens; only these, one row per site of the shard, reach
   the driver, which assigns the keys to P partitions, largest first onto the least loaded
   (:func:`assign_partitions`). A site is never split: its level-0 passes (block miner, page
   skeleton, line shapes) need all its pages, and the section-level rules need the site's
   coverage on each page; the report gives the largest key's share of the tokens.
2. ``site pages`` (on each shard's worker): the shard's pages cut into P parts
   (:class:`SitePages`): per document its global number, length, site and section (codes
   into one string block), its tokens as ids into the part's own used strings (4 B per token
   + each used string once as UTF-8), its line starts as bits and the tokens the run's exact
   phrases cover on it (read beside the shard from its coverage, :mod:`.coverage`). Pages
   without a site are spread over the partitions by document number (they only count in the
   stats).
3. ``detect`` (one task per partition, on whichever worker Dask gives it): the parts joined
   in global document order, one vocabulary, :func:`detect_partition`, summed into a
   :class:`PartitionSummary` (records, stats, documents, covered tokens: nothing per document).
4. The driver merges: the stats and the covered figure from each partition's head
   (:class:`PartitionHead`: everything but its records), the records in the canonical order
   as a :class:`TemplateRecordStream` (:func:`~bloomspan.engine.templates.site_partitions.merged_records`
   over batches fetched from the partitions' workers while it is read), so the driver never
   holds the records of a partition whole.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from bloomspan.engine.templates.blocks import block_offsets_from_flags
from bloomspan.engine.templates.config import TemplateConfig
from bloomspan.engine.templates.detector import scope_levels
from bloomspan.engine.templates.site_partitions import (
    PartitionSummary,
    assign_partitions,
    detect_partition,
    merge_detector_stats,
    merged_records,
    route_key,
    site_partition_refusal,
    summarize_partition,
)
from bloomspan.sidecar.errors import ClusterConfigError
from bloomspan.sidecar.publish.publication import document_sites

from .cluster import ProgressRelay
from .in_worker import worker_progress
from .pipeline import worker_bytes_sent
from .shards import ShardCorpus
from .tasks import StringBlock

log = logging.getLogger(__name__)

STAGE = "templates"
RECORD_BATCH = 2_000  # template records per fetch from a partition's worker while the stream is read


def shard_levels(shard: ShardCorpus, site_field: str | None, url_field: str | None, section_depth: int
                 ) -> list[list[str | None]]:
    """The scope levels of a shard's documents (sites, then URL sections), computed as the
    single process computes them for the whole corpus (:func:`document_sites`, :func:`scope_levels`)."""
    if shard.fields is None or shard.line_starts is None:
        raise ValueError("shard: read without the template fields (read_jsonl_range(..., template_fields=...))")
    sites_of = shard.fields.get(site_field) if site_field else None
    urls = shard.fields.get(url_field) if url_field else None
    sites = document_sites(sites_of, urls)
    if sites is None:
        raise ValueError("templates on Dask: give a site field or a URL field")
    return scope_levels(sites, urls, section_depth)


@dataclass
class SiteLoads:
    """One shard's pages and tokens per routing key (keys ascending), and its pages without a site."""

    keys: list[str]
    pages: np.ndarray
    tokens: np.ndarray
    siteless_pages: int
    siteless_tokens: int


def site_loads(shard: ShardCorpus, site_field: str | None, url_field: str | None, section_depth: int) -> SiteLoads:
    sites = shard_levels(shard, site_field, url_field, section_depth)[0]
    lengths = np.diff(shard.doc_offsets)
    pages: dict[str, int] = {}
    tokens: dict[str, int] = {}
    siteless = [0, 0]
    for site, n in zip(sites, lengths.tolist()):
        if site is None:
            siteless[0] += 1
            siteless[1] += n
            continue
        k = route_key(site)
        pages[k] = pages.get(k, 0) + 1
        tokens[k] = tokens.get(k, 0) + n
    keys = sorted(pages)
    return SiteLoads(keys, np.asarray([pages[k] for k in keys], dtype=np.int64),
                     np.asarray([tokens[k] for k in keys], dtype=np.int64), siteless[0], siteless[1])


@dataclass
class SitePages:
    """One shard's pages for one partition.

    docs:        int64 (d,) global document numbers, ascending
    lengths:     int64 (d,) their token counts
    ids:         uint16 (w,) their tokens, ids into ``strings`` (uint32 beyond 65,536 strings)
    strings:     the strings the part uses, once each
    line_starts: uint8 (ceil(w/8),) the line-start flags as bits (np.packbits)
    names:       the level names the part uses; levels int32 (L, d): each document's code per
                 level (-1: None)
    exact:       int64 (d,) tokens the run's exact phrases cover on each, or None (no exact phrases)
    """

    docs: np.ndarray
    lengths: np.ndarray
    ids: np.ndarray
    strings: StringBlock
    line_starts: np.ndarray
    names: StringBlock
    levels: np.ndarray
    exact: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        return int(self.docs.nbytes + self.lengths.nbytes + self.ids.nbytes + len(self.strings.data)
                   + self.line_starts.nbytes + len(self.names.data) + self.levels.nbytes
                   + (0 if self.exact is None else self.exact.nbytes))


def site_pages(shard: ShardCorpus, site_field: str | None, url_field: str | None, section_depth: int,
               partition_of_key: dict[str, int], n_partitions: int, global_docs: np.ndarray, shard_no: int,
               cover=None) -> list[SitePages]:
    """The shard's pages cut into ``n_partitions`` parts: a page goes to its site's partition
    (``partition_of_key``, by :func:`route_key`), a page without a site to its global
    document number modulo ``n_partitions``. global_docs int64 (D_k,): the shard's documents'
    global numbers; cover: the shard's :class:`~.coverage.ShardCoverage` (the exact phrases'
    covered tokens of each document), or None without exact phrases."""
    levels = shard_levels(shard, site_field, url_field, section_depth)
    global_docs = np.asarray(global_docs, dtype=np.int64)
    part = np.asarray([partition_of_key[route_key(s)] if s is not None else int(g) % n_partitions
                       for s, g in zip(levels[0], global_docs.tolist())], dtype=np.int64)
    offsets = shard.doc_offsets
    lengths = np.diff(offsets)
    line_starts = np.asarray(shard.line_starts, dtype=np.uint8)
    exact = None if cover is None else np.asarray(cover.covered, dtype=np.int64)
    out = []
    for p in range(n_partitions):
        docs = np.flatnonzero(part == p)
        docs = docs[np.argsort(global_docs[docs], kind="stable")]
        starts, lens = offsets[docs], lengths[docs]
        total = int(lens.sum())
        at = (np.arange(total, dtype=np.int64) + np.repeat(starts - (np.cumsum(lens) - lens), lens)) if total else \
            np.zeros(0, dtype=np.int64)
        used, local = np.unique(shard.ids[at], return_inverse=True)
        names: dict[str, int] = {}
        codes = np.asarray([[-1 if level[d] is None else names.setdefault(level[d], len(names)) for d in docs.tolist()]
                            for level in levels], dtype=np.int32).reshape(len(levels), docs.shape[0])
        out.append(SitePages(docs=global_docs[docs], lengths=lens.astype(np.int64),
                             ids=local.astype(np.uint16 if used.shape[0] <= 1 << 16 else np.uint32).reshape(-1),
                             strings=StringBlock.of([shard.strings[i] for i in used.tolist()]),
                             line_starts=np.packbits(line_starts[at]), names=StringBlock.of(list(names)),
                             levels=codes, exact=None if exact is None else exact[docs]))
    worker_progress("template-route", shard_no, shard.n_docs)
    return out


def pick(parts: list, p: int):
    return parts[p]


def detect_site_partition(parts: list[SitePages], config: dict, partition: int) -> PartitionSummary:
    """Join one partition's parts in global document order, detect its templates and sum
    what the merge needs of them (:func:`summarize_partition`)."""
    worker_progress(STAGE, partition, 0, 1)
    vocabulary: dict[str, int] = {}
    tokens, lengths, docs, flags = [], [], [], []
    n_levels = max((pt.levels.shape[0] for pt in parts), default=1)
    levels: list[list[str | None]] = [[] for _ in range(n_levels)]
    for pt in parts:
        to_partition = np.asarray([vocabulary.setdefault(s, len(vocabulary)) for s in pt.strings.strings()],
                                  dtype=np.uint32)
        tokens.append(to_partition[pt.ids] if pt.ids.shape[0] else np.zeros(0, dtype=np.uint32))
        lengths.append(pt.lengths)
        docs.append(pt.docs)
        flags.append(np.unpackbits(pt.line_starts, count=pt.ids.shape[0]))
        names = pt.names.strings()
        for k in range(n_levels):
            levels[k].extend(None if c < 0 else names[c] for c in pt.levels[k].tolist())
    docs_all = np.concatenate(docs) if docs else np.zeros(0, dtype=np.int64)
    lengths_all = np.concatenate(lengths) if lengths else np.zeros(0, dtype=np.int64)
    tokens_all = np.concatenate(tokens) if tokens else np.zeros(0, dtype=np.uint32)
    flags_all = np.concatenate(flags) if flags else np.zeros(0, dtype=np.uint8)
    # Global document order (the parts' documents interleave): reorder documents and tokens.
    order = np.argsort(docs_all, kind="stable")
    starts = np.concatenate([[0], np.cumsum(lengths_all)[:-1]]).astype(np.int64) if lengths_all.shape[0] else \
        np.zeros(0, dtype=np.int64)
    lens = lengths_all[order]
    total = int(lens.sum())
    at = (np.arange(total, dtype=np.int64) + np.repeat(starts[order] - (np.cumsum(lens) - lens), lens)) if total else \
        np.zeros(0, dtype=np.int64)
    doc_offsets = np.zeros(lens.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=doc_offsets[1:])
    levels = [[level[i] for i in order.tolist()] for level in levels]
    blocks = block_offsets_from_flags(flags_all[at].view(np.bool_), doc_offsets)
    strings = [None] * len(vocabulary)
    for s, i in vocabulary.items():
        strings[i] = s
    result = detect_partition(np.ascontiguousarray(tokens_all[at]), doc_offsets, blocks, strings, levels,
                              TemplateConfig.from_dict(config), docs_all[order])
    exact = None
    if parts and all(pt.exact is not None for pt in parts):
        exact = np.concatenate([pt.exact for pt in parts])[order]
    worker_progress(STAGE, partition, 1, 1)
    return summarize_partition(result, exact)


@dataclass
class PartitionHead:
    """What the driver gathers of a partition's :class:`PartitionSummary`: all but its records
    (their count by kind stands for them)."""

    stats: dict
    documents: int
    covered_tokens: int
    kinds: dict[str, int]

    @property
    def n_records(self) -> int:
        return sum(self.kinds.values())


def partition_head(summary: PartitionSummary) -> PartitionHead:
    kinds: dict[str, int] = {}
    for r in summary.records:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
    return PartitionHead(summary.stats, summary.documents, summary.covered_tokens, kinds)


def record_batch(summary: PartitionSummary, start: int, stop: int) -> list[dict]:
    return summary.records[start:stop]


class TemplateRecordStream:
    """The merged records of a run's template partitions, config record first, in the
    canonical order: each iteration fetches them from the partitions' workers
    :data:`RECORD_BATCH` at a time per partition and merges them as they come, so the driver
    holds one batch per partition. ``len()`` is their count. Read it while the Dask client
    that ran the stage is open (it holds the partitions' futures)."""

    def __init__(self, client, summaries: list, heads: list[PartitionHead], config: TemplateConfig):
        kept = [(f, h) for f, h in zip(summaries, heads) if h.documents]  # what merge_summaries merges
        self._client, self._config = client, config
        self._summaries = [f for f, _ in kept]
        self._counts = [h.n_records for _, h in kept]

    def __len__(self) -> int:
        return 1 + sum(self._counts)

    def __iter__(self) -> Iterator[dict]:
        return merged_records([self._partition(f, n) for f, n in zip(self._summaries, self._counts)], self._config)

    def _partition(self, summary, n: int) -> Iterator[dict]:
        for start in range(0, n, RECORD_BATCH):
            yield from self._client.submit(record_batch, summary, start, min(n, start + RECORD_BATCH)).result()


@dataclass
class TemplateStage:
    """How the stage ran (for the run's ``stats`` block; none of it is a result).

    partitions: per partition its pages, tokens, sites and worker; largest_site_share: the
    largest routing key's share of the tokens (a site is one partition's work); bytes_sent:
    what the workers sent each other during the stage (Dask's counter), bytes_sent_per_token
    over the corpus' tokens; parts_bytes: the routed parts' own size, crossing_bytes: those
    of them whose partition ran on another worker than their shard (what the routing must
    send, whatever else Dask moves); seconds: driver wall time.
    """

    partitions: list[dict]
    largest_site_share: float
    bytes_sent: int
    bytes_sent_per_token: float
    parts_bytes: int
    crossing_bytes: int
    seconds: float

    def to_dict(self) -> dict:
        return {"partitions": self.partitions, "largest_site_share": self.largest_site_share,
                "bytes_sent": self.bytes_sent, "bytes_sent_per_token": self.bytes_sent_per_token,
                "parts_bytes": self.parts_bytes, "crossing_bytes": self.crossing_bytes, "seconds": self.seconds}


def detect_templates_on_dask(client, shards: list, homes: list[dict], options, global_docs: list,
                             exact_covers: list | None, relay: ProgressRelay, *, run: str = "run",
                             n_partitions: int | None = None) -> tuple[TemplateRecordStream, dict, TemplateStage]:
    """``(records, stats, stage)`` of the template detector on the shards (futures of
    :class:`~.shards.ShardCorpus` read with ``template_fields=options.fields``), equal to
    :func:`~bloomspan.sidecar.run.run_templates.detect_run_templates` on the same corpus
    but for timings. ``records`` is a :class:`TemplateRecordStream`: read it (or ``list()``
    it) before the client closes.

    homes: :func:`.pipeline.shard_homes`; options: the run's
    :class:`~bloomspan.sidecar.run.run_templates.TemplateOptions`; global_docs: per shard (futures
    of) its documents' global numbers (:class:`.doc_layout.ShardLayout`); exact_covers: per shard
    (futures of) its :class:`~.coverage.ShardCoverage`, the tokens the run's exact phrases cover
    (``DistributedResult.covers``), or None without exact phrases;
    n_partitions: template partitions (default: one per worker).
    ``stats`` are :func:`~bloomspan.sidecar.run.run_templates.detect_run_templates`'s (a file
    run adds the file and field names). Raises ClusterConfigError (one line, naming the field)
    for a config with a cross-site pass.
    """
    from distributed import as_completed

    t0 = time.perf_counter()
    config = options.detector_config()
    refusal = site_partition_refusal(config)
    if refusal is not None:
        raise ClusterConfigError("template_config", options.config, f"{refusal} (needed by --dask)")
    if not (options.site_field or options.url_field):
        raise ClusterConfigError("templates", True, "the template detector on Dask works per site: give --site-field "
                                                    "and/or --url-field")
    sent0 = worker_bytes_sent(client)
    fields = (options.site_field, options.url_field, config.section_depth)
    loads = client.gather([client.submit(site_loads, s, *fields, key=f"bloomspan-siteload-{run}-{k}", retries=2,
                                         **homes[k]) for k, s in enumerate(shards)])
    totals: dict[str, list[int]] = {}
    for ld in loads:
        for key, pages, tokens in zip(ld.keys, ld.pages.tolist(), ld.tokens.tolist()):
            t = totals.setdefault(key, [0, 0])
            t[0] += pages
            t[1] += tokens
    n_workers = max(1, len(client.scheduler_info(n_workers=-1)["workers"]))
    P = max(1, n_partitions or n_workers)
    keys = sorted(totals)
    where = dict(zip(keys, assign_partitions(keys, np.asarray([totals[k][1] for k in keys], dtype=np.int64),
                                             P).tolist()))
    relay.totals["template-route"] = int(sum(int(ld.pages.sum()) + ld.siteless_pages for ld in loads))
    routed = [client.submit(site_pages, s, *fields, {k: where[k] for k in loads[i].keys}, P, global_docs[i], i,
                            None if exact_covers is None else exact_covers[i], key=f"bloomspan-sitepages-{run}-{i}",
                            retries=2, **homes[i]) for i, s in enumerate(shards)]
    detected = []
    for p in range(P):
        parts = [client.submit(pick, r, p, key=f"bloomspan-sitepart-{run}-{k}-{p}") for k, r in enumerate(routed)]
        detected.append(client.submit(detect_site_partition, parts, config.to_dict(), p,
                                      key=f"bloomspan-templates-{run}-{p}", retries=2))
    sizes = client.gather([client.submit(_parts_bytes, r, key=f"bloomspan-sitebytes-{run}-{k}")
                           for k, r in enumerate(routed)])  # (S, P)
    held = client.who_has(shards)
    shard_worker = [next(iter(held.get(s.key, ())), None) for s in shards]
    del routed, parts
    relay.totals[STAGE] = P
    head_futures = [client.submit(partition_head, f, key=f"bloomspan-templatehead-{run}-{p}")
                    for p, f in enumerate(detected)]
    partition_of_future = {f.key: p for p, f in enumerate(head_futures)}
    part_results: dict[int, PartitionHead] = {}
    for i, future in enumerate(as_completed(head_futures), start=1):
        part_results[partition_of_future[future.key]] = future.result()
        relay.step(STAGE, i, P)
    del head_futures
    heads = [part_results[p] for p in range(P)]
    records = TemplateRecordStream(client, detected, heads, config)
    documents = sum(h.documents for h in heads)
    covered_tokens = sum(h.covered_tokens for h in heads)
    n_tokens = int(sum(int(ld.tokens.sum()) + ld.siteless_tokens for ld in loads))
    n_docs = int(sum(int(ld.pages.sum()) + ld.siteless_pages for ld in loads))
    if documents != n_docs:
        raise RuntimeError(f"template partitions hold {documents} documents of {n_docs}")
    kinds: dict[str, int] = {}
    for h in heads:
        for k, n in h.kinds.items():
            kinds[k] = kinds.get(k, 0) + n
    stats = {"phrases": kinds.get("mcfp", 0) + kinds.get("block", 0),
             "skeletons": kinds.get("skeleton", 0), "line_shapes": kinds.get("line_shape", 0),
             "title_navs": kinds.get("title_nav", 0), "own_facts": kinds.get("own_facts", 0),
             "covered_tokens": covered_tokens,
             "covered_share": covered_tokens / n_tokens if n_tokens else 0.0,
             "documents_with_site": int(sum(int(ld.pages.sum()) for ld in loads)),
             "detector": merge_detector_stats([h.stats for h in heads if h.documents])}
    per_part = [{"pages": 0, "tokens": 0, "sites": 0} for _ in range(P)]
    ran_on = client.who_has(detected)
    for p, r in part_results.items():  # pages without a site included
        per_part[p].update(pages=r.documents, tokens=int(r.stats.get("tokens_mined", 0)),
                           worker=next(iter(ran_on.get(detected[p].key, ())), None))
    crossing = sum(sizes[k][p] for k in range(len(shards)) for p in range(P)
                   if per_part[p]["worker"] is None or per_part[p]["worker"] != shard_worker[k])
    del detected
    for key in keys:
        per_part[where[key]]["sites"] += 1
    sent = worker_bytes_sent(client) - sent0
    stage = TemplateStage(per_part, max((t[1] for t in totals.values()), default=0) / n_tokens if n_tokens else 0.0,
                          sent, sent / n_tokens if n_tokens else 0.0, int(sum(map(sum, sizes))), int(crossing),
                          time.perf_counter() - t0)
    log.info("templates on dask: partitions=%d phrases=%d skeletons=%d covered_share=%.4f bytes_sent_per_token=%.3f",
             P, stats["phrases"], stats["skeletons"], stats["covered_share"], stage.bytes_sent_per_token)
    return records, stats, stage


def _parts_bytes(parts: list[SitePages]) -> list[int]:
    return [p.nbytes for p in parts]
