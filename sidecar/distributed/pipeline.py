"""The distributed mining run, source-independent: shards in, exact phrases and coverage out.

Stages (``sidecar/distributed/DESIGN.md`` has the reasoning and the costs at scale):

1. ``count``: each shard hashes its min_length-windows and counts, per hash, the distinct
   documents holding it; the counts go to reducers by hash (``window_parts``).
2. ``reduce``: each reducer sums its keys' counts and keeps those >= sigma.
3. ``cut``: each shard keeps the maximal intervals of its frequent windows.
4. ids: the reduced corpus' token ids, numbered where the strings are (:mod:`.run_ids`): the
   strings of the intervals are range-partitioned by a few sampled splitters and each range
   numbers its strings in sorted order, so run ids are the ranks in the sorted union and no
   string passes through the driver. JSON Lines output orders ties by the single-node ids
   (first occurrence in the file), so each range also finds its strings' global first
   occurrences by a vocabulary shuffle (strings compared, so exact); an index run orders ties
   by text. The driver asks the ranges for the strings (and ids) of the phrases' tokens only.
5. ``route`` + ``grow``: each flagged window start goes to the growth shard of its hash,
   with the interval tail after it; every growth shard returns exactly the maximal phrases
   starting with its windows (:mod:`bloomspan.engine.distributed.sharded_growth`).
6. ``cover``: the occurrences go back to their document shards, which build their coverage
   masks and send the driver per-document covered counts and, for an index run, the
   coverage bitmaps of the published shape (:mod:`.coverage`); phrase bitmaps are encoded
   on the growth shards.

The driver keeps futures, small headers (per shard: its documents and tokens), the phrases and
the compressed coverage bitmap: nothing per document or per token. Where each shard's
documents lie in the full corpus (:mod:`.doc_layout`) and their covered counts (:mod:`.coverage`)
stay on the workers.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from bloomspan.engine.distributed.window_filter import local_threshold
from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.phrases import Phrase, phrase_order_key
from bloomspan.sidecar.publish.publication import EXAMPLE_IDS as EXAMPLE_DOCS

from . import tasks
from .cluster import ProgressRelay
from .coverage import CoverageChunks, CoverageReduction, coverage_sent
from .doc_layout import ShardLayout
from .run_ids import RunIdRanges

log = logging.getLogger(__name__)


class TokenStrings:
    """id -> string for the phrases of a result (``token``/``tokens`` as a Vocabulary has)."""

    def __init__(self, strings: dict[int, str] | list[str], size: int | None = None):
        self._strings = strings
        self._size = len(strings) if size is None else size

    def token(self, i: int) -> str:
        return self._strings[int(i)]

    def tokens(self, ids=None) -> list[str]:
        if ids is None:
            return [self._strings[i] for i in range(self._size)]
        return [self._strings[int(i)] for i in ids]

    def __len__(self) -> int:
        return self._size


@dataclass
class DistributedResult:
    """phrases: engine Phrases over ``vocabulary`` ids (global first-occurrence ids with
    ``global_ids``, else ids of the strings in sorted order), in phrase order; coverage: the
    covered tokens of the full corpus; coverage_chunks (``coverage_bitmaps``): its bitmaps, on the
    workers until written (:class:`~.coverage.CoverageChunks`); layout: where each shard's
    documents lie (:mod:`.doc_layout`, on the workers); covers: per document shard the future of
    its :class:`~.coverage.ShardCoverage` (its documents' covered counts stay on the workers; the
    caller releases them); phrase_extras (``phrase_documents``): per phrase its encoded
    document bitmap and first document numbers, built and left on the workers
    (:class:`PhraseExtras`: fetched a batch at a time; the caller releases them)."""

    phrases: list
    coverage: CoverageReduction
    coverage_chunks: CoverageChunks | None  # coverage_bitmaps: written chunk by chunk from the workers
    layout: ShardLayout
    covers: list
    vocabulary: TokenStrings
    vocabulary_size: int | None
    phrase_extras: PhraseExtras | None
    stats: dict = field(default_factory=dict)
    occurrences: list | None = None  # keep_occurrences: per document shard, its futures of (starts, lengths)


class PhraseExtras:
    """Each phrase's encoded document bitmap and first document numbers (the phrase document's
    ``doc_bitmap`` and ``example_ids``), in phrase order, kept in the growth shards' summaries
    on the workers: :meth:`fetch` brings those of a batch of phrases, so the driver never holds
    every phrase's bitmap at once (together they grow with the documents)."""

    def __init__(self, client, summaries: list, where: list[tuple[int, int]]):
        self._client, self._summaries, self._where = client, summaries, where

    def __len__(self) -> int:
        return len(self._where)

    def fetch(self, phrases: list[int]) -> list[tuple[str, list[int]]]:
        """``(bitmap, example document numbers)`` of ``phrases`` (indices in phrase order), in that order."""
        by_shard: dict[int, list[int]] = {}
        for i in phrases:
            by_shard.setdefault(self._where[i][0], []).append(i)
        futures = {g: self._client.submit(tasks.phrase_extras, self._summaries[g], [self._where[i][1] for i in idx])
                   for g, idx in by_shard.items()}
        got = dict(zip(futures, self._client.gather(list(futures.values()))))
        out: dict[int, tuple[str, list[int]]] = {}
        for g, idx in by_shard.items():
            out.update(zip(idx, got[g]))
        return [out[i] for i in phrases]


# Growth shards per partition. A worker's peak is the growth stage: the packed parts of every
# growth shard wait beside one growth task's unpacked fragments and transient; halving the task
# halves those two. 243 M tokens on local:2: worker peak 1,967 MB with 1 (15.0 B/token of its
# share), 1,811 MB with 2 (13.7), 1,700 MB with 4 (12.8, but a slower grow stage); the phrases
# are the same for any count (growth shards partition the routed windows, see DESIGN.md).
GROWTH_SHARDS_PER_PARTITION = 2


def _wait(client, futures, relay: ProgressRelay, stage: str) -> None:
    from distributed import as_completed

    for i, _ in enumerate(as_completed(futures), start=1):
        relay.step(stage, i, len(futures))


def worker_bytes_sent(client) -> int:
    """Bytes the workers have sent each other so far (Dask's own transfer counter)."""
    sent = client.run(lambda dask_worker: int(dask_worker.transfer_outgoing_bytes_total))
    return int(sum(sent.values()))


def _peak_rss() -> int:
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def worker_peak_rss(client) -> int:
    """The largest peak resident memory of any worker process so far (bytes; a worker of an
    existing cluster counts what it held before this run too)."""
    return int(max(client.run(_peak_rss).values(), default=0))


def mine_shards(client, shards: list, layout_of, config: MiningConfig, relay: ProgressRelay, *,
                global_ids: bool, phrase_documents: bool = False, coverage_bitmaps: bool = False,
                n_partitions: int | None = None, run: str = "run", keep_occurrences: bool = False) -> DistributedResult:
    """Mine the shards (futures of :class:`.shards.ShardCorpus`, in global order).

    ``layout_of(headers)`` turns the shards' headers (``(n_docs, n_tokens)`` per shard, in
    order) into a :class:`~.doc_layout.ShardLayout` (futures: nothing per document on the driver). ``global_ids``: number tokens as the single-node run
    over the same input order does (needed for JSON Lines output). ``phrase_documents``:
    build each phrase's document bitmap on the workers (index runs publish them).
    ``coverage_bitmaps``: build the published coverage bitmaps too (:mod:`.coverage`).
    ``keep_occurrences``: hold each document shard's occurrences on the workers for a later
    stage (annotation, :mod:`.shard_annotation`); the caller releases them.
    """
    t_all = time.perf_counter()
    stats: dict = {"shards": len(shards)}
    seconds: dict = {}
    n_workers = max(1, len(client.scheduler_info(n_workers=-1)["workers"]))
    P = n_partitions or max(2, n_workers)
    stats["partitions"] = P
    sent0 = worker_bytes_sent(client)

    G = GROWTH_SHARDS_PER_PARTITION * P
    homes = shard_homes(client, shards)
    units = count_units(homes)
    threshold = local_threshold(config.sigma, len(units))
    if threshold >= 2:
        headers, cut, counts = _pigeonhole_cut(client, shards, homes, units, config, relay, run, seconds, threshold, G)
    else:
        headers, cut, counts = _exact_count_cut(client, shards, homes, config, relay, run, seconds, P, G)
    stats.update(counts)
    t0 = time.perf_counter()
    cut_sizes = client.gather([client.submit(tasks.segment_headers, c, key=f"bloomspan-cutsize-{run}-{k}")
                               for k, c in enumerate(cut)])
    seconds["cut"] += time.perf_counter() - t0

    t0 = time.perf_counter()
    vocabulary_size = first_occurrences = None
    if global_ids:
        first_occurrences, vocabulary_size = _vocabulary_partitions(client, shards, homes, P, run)
    ids = RunIdRanges(client, cut, homes, P, run, first_occurrences)
    del first_occurrences  # the vocabulary partitions are freed once the ranges' first occurrences are found
    seconds["ids"] = time.perf_counter() - t0

    layout = layout_of(headers)
    t0 = time.perf_counter()
    routed = [client.submit(tasks.growth_parts, c, ids.shard_ids[k], layout.global_docs[k], G, k,
                            key=f"bloomspan-route-{run}-{k}", retries=2, **homes[k]) for k, c in enumerate(cut)]
    del cut  # each shard's cut is freed once its route has run
    grown = []
    for g in range(G):
        parts = [client.submit(tasks.pick, r, g, key=f"bloomspan-frag-{run}-{k}-{g}") for k, r in enumerate(routed)]
        grown.append(client.submit(tasks.grow_shard, parts, config, g, key=f"bloomspan-grow-{run}-{g}", retries=2))
    del routed, parts  # the fragments are freed once their growth shard has them
    relay.totals["grow"] = G
    summaries = [client.submit(tasks.phrase_summary, gr, phrase_documents, EXAMPLE_DOCS, key=f"bloomspan-phrases-{run}-{g}",
                               retries=2) for g, gr in enumerate(grown)]
    n_tokens = layout.n_tokens
    covers, occurrences = [], []
    for k in range(len(shards)):
        occ = [client.submit(tasks.occurrences_for, gr, k, key=f"bloomspan-occ-{run}-{g}-{k}") for g, gr in enumerate(grown)]
        # Where the shard's documents start in the full corpus: a task's result (re-run from its
        # inputs when lost with its worker), never scattered data.
        starts = layout.starts[k] if coverage_bitmaps else None
        covers.append(client.submit(tasks.shard_coverage, shards[k], occ, starts, n_tokens,
                                    key=f"bloomspan-cover-{run}-{k}", retries=2, **homes[k]))
        if keep_occurrences:
            occurrences.append(occ)
    _wait(client, grown, relay, "grow")
    seconds["grow"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    summary_futures = summaries if phrase_documents else None  # their bitmaps stay on the workers
    summaries = client.gather([client.submit(tasks.phrase_head, f, key=f"bloomspan-phrasehead-{run}-{g}")
                               for g, f in enumerate(summaries)] if phrase_documents else summaries)
    coverage = CoverageReduction(len(shards), n_tokens, False)  # counts; the bitmaps stay on the workers
    sent = [client.submit(coverage_sent, c, False, key=f"bloomspan-covsent-{run}-{k}") for k, c in enumerate(covers)]
    shard_of = {f.key: k for k, f in enumerate(sent)}
    coverage_bytes = 0
    from distributed import as_completed

    for future in as_completed(sent):
        part = future.result()
        coverage_bytes += part.nbytes
        coverage.add(shard_of[future.key], part)
    del sent
    seconds["coverage"] = time.perf_counter() - t0

    # the strings (and first-occurrence ids) of the phrases' tokens only, from the ranges
    used_ids = np.unique(np.fromiter((x for sm in summaries for t in sm.tokens for x in t), dtype=np.int64))
    used_strings = ids.strings_of(used_ids)
    named = ids.global_ids_of(used_ids) if global_ids else used_ids
    ids.release()
    name_of = dict(zip(used_ids.tolist(), named.tolist()))
    rows = []
    for g, sm in enumerate(summaries):
        for j, t in enumerate(sm.tokens):
            rows.append((Phrase(tuple(name_of[int(x)] for x in t), int(sm.df[j]), int(sm.occurrences[j])), (g, j)))
    rows.sort(key=lambda r: phrase_order_key(r[0]))
    phrases = [r[0] for r in rows]
    vocabulary = TokenStrings(dict(zip(named.tolist(), used_strings)),
                              size=vocabulary_size if global_ids else ids.size)
    growth = {}
    for sm in summaries:
        for name, v in sm.stats.items():
            growth[name] = growth.get(name, 0) + v
    reduced_tokens = int(sum(c[1] for c in cut_sizes))
    stats.update({
        "tokens": n_tokens, "documents": layout.n_docs,
        "intervals": int(sum(c[0] for c in cut_sizes)),
        "reduced_tokens": reduced_tokens,
        "reduced_share": reduced_tokens / n_tokens if n_tokens else 0.0,
        "growth_shards": G,
        "growth_fragment_tokens": int(growth.get("fragment_tokens", 0)),
        "growth": growth,
        "coverage_sent_bytes": coverage_bytes,
        "worker_bytes_sent": worker_bytes_sent(client) - sent0,
        "worker_peak_rss": worker_peak_rss(client),
        "seconds": {**seconds, "total": time.perf_counter() - t_all},
    })
    stats["worker_bytes_sent_per_token"] = stats["worker_bytes_sent"] / n_tokens if n_tokens else 0.0
    log.info("distributed mining: shards=%d growth_shards=%d tokens=%d reduced_tokens=%d phrases=%d "
             "worker_bytes_sent=%d seconds=%.2f", len(shards), G, n_tokens, reduced_tokens, len(phrases),
             stats["worker_bytes_sent"], stats["seconds"]["total"])
    chunks = CoverageChunks(client, covers, n_tokens, run) if coverage_bitmaps else None
    return DistributedResult(phrases, coverage, chunks, layout, covers, vocabulary, vocabulary_size,
                             PhraseExtras(client, summary_futures, [r[1] for r in rows]) if phrase_documents else None,
                             stats,
                             occurrences if keep_occurrences else None)


def _pigeonhole_cut(client, shards, homes, units, config, relay, run, seconds, threshold, n_growth):
    """Count, reduce and cut with one counting filter per count unit (a worker's shards) and
    the pigeonhole (:mod:`bloomspan.engine.distributed.window_filter`): only the heavy windows'
    hashes and one byte per unit and heavy window cross the network."""
    L, sigma = config.min_length, config.sigma
    t0 = time.perf_counter()
    # one pass per unit builds its filter and finds its heavy windows (window_filter steps 1-2)
    filters = [client.submit(tasks.unit_filter, [shards[k] for k in unit], L, threshold, u,
                             key=f"bloomspan-count-{run}-{u}", retries=2, **homes[unit[0]])
               for u, unit in enumerate(units)]
    headers = client.gather([client.submit(_header, s, key=f"bloomspan-header-{run}-{k}") for k, s in enumerate(shards)])
    _wait(client, filters, relay, "count")
    seconds["read_count"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    heavy = [client.submit(tasks.heavy_hashes, f, key=f"bloomspan-heavy-{run}-{u}", **homes[units[u][0]])
             for u, f in enumerate(filters)]
    union = client.submit(tasks.union_of, *heavy, key=f"bloomspan-union-{run}-0", retries=2)
    uppers = [client.submit(tasks.upper_counts, f, union, key=f"bloomspan-upper-{run}-{u}", retries=2,
                            **homes[units[u][0]]) for u, f in enumerate(filters)]
    members = client.submit(tasks.superset_of, union, sigma, *uppers, key=f"bloomspan-reduce-{run}-0", retries=2)
    # each unit's table size: the cut finds its windows' cells in it (one small task per unit)
    sizes = [client.submit(tasks.table_size, f, key=f"bloomspan-cells-{run}-{u}", **homes[units[u][0]])
             for u, f in enumerate(filters)]
    unit_of = {k: u for u, unit in enumerate(units) for k in unit}
    lengths = client.submit(tasks.lengths, heavy, union, members, key=f"bloomspan-nheavy-{run}-0")
    del filters, heavy, uppers  # a unit's filter goes back to its worker once its cells' sizes and counts are read
    _wait(client, [members], relay, "reduce")
    seconds["reduce"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    # submitted without waiting for the statistics: no round trip to the driver between reduce and cut
    cut = [client.submit(tasks.flagged_segments, s, members, L, k, n_growth, sizes[unit_of[k]],
                         key=f"bloomspan-cut-{run}-{k}", retries=2, **homes[k]) for k, s in enumerate(shards)]
    n_heavy, n_union, n_members = lengths.result()
    del sizes, lengths
    _wait(client, cut, relay, "cut")
    seconds["cut"] = time.perf_counter() - t0
    n_shards, n_units = len(shards), len(units)
    counts = {"count_method": "pigeonhole", "count_units": n_units, "heavy_threshold": threshold,
              "heavy_windows": int(n_heavy), "heavy_union": int(n_union), "frequent_windows": int(n_members),
              # heavy hashes up, the union down to every unit, a byte per unit and hash up, the superset
              # down to every shard
              "windows_sent_bytes": int(8 * n_heavy + n_units * 9 * n_union + 8 * n_shards * n_members)}
    return headers, cut, counts


def _exact_count_cut(client, shards, homes, config, relay, run, seconds, n_partitions, n_growth):
    """Count, reduce and cut with every window's exact document count shuffled to
    ``n_partitions`` reducers: the path for more shards than the pigeonhole can take
    (``local_threshold < 2``)."""
    L, sigma, P = config.min_length, config.sigma, n_partitions
    t0 = time.perf_counter()
    counted = [client.submit(tasks.window_parts, s, L, P, k, key=f"bloomspan-count-{run}-{k}", retries=2, **homes[k])
               for k, s in enumerate(shards)]
    headers = client.gather([client.submit(_header, s, key=f"bloomspan-header-{run}-{k}") for k, s in enumerate(shards)])
    _wait(client, counted, relay, "count")
    seconds["read_count"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    frequent = []
    for p in range(P):
        parts = [client.submit(tasks.pick, c, p, key=f"bloomspan-part-{run}-{k}-{p}") for k, c in enumerate(counted)]
        frequent.append(client.submit(tasks.frequent_windows, parts, sigma, key=f"bloomspan-reduce-{run}-{p}", retries=2))
    part_bytes = client.gather([client.submit(_part_bytes, c, key=f"bloomspan-partbytes-{run}-{k}")
                                for k, c in enumerate(counted)])
    _wait(client, frequent, relay, "reduce")
    n_frequent = client.gather([client.submit(len, f, key=f"bloomspan-nfreq-{run}-{p}") for p, f in enumerate(frequent)])
    seconds["reduce"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    cut = [client.submit(tasks.shard_segments, s, frequent, L, P, k, n_growth, key=f"bloomspan-cut-{run}-{k}",
                         retries=2, **homes[k]) for k, s in enumerate(shards)]
    _wait(client, cut, relay, "cut")
    seconds["cut"] = time.perf_counter() - t0
    counts = {"count_method": "exact", "frequent_windows": int(sum(n_frequent)),
              "windows_sent_bytes": int(sum(part_bytes))}
    return headers, cut, counts


def shard_homes(client, shards: list) -> list[dict]:
    """Per shard, the ``client.submit`` options that run its tasks on the worker holding it.

    Data stays where it was read: a shard's tokens never cross the network because a free
    worker took one of its tasks (work stealing moved whole shards: up to 2.2 B/token at
    26.5 M tokens on two workers). The restriction is loose (``allow_other_workers``): if
    that worker is gone the task runs anywhere and Dask fetches or recomputes its inputs.
    """
    from distributed import wait

    wait(shards)
    where = client.who_has(shards)
    out = []
    for s in shards:
        holders = list(where.get(s.key, ()))
        out.append({"workers": holders[:1], "allow_other_workers": True} if holders else {})
    return out


def count_units(homes: list[dict]) -> list[list[int]]:
    """The shards counted together (:func:`tasks.unit_filter`): those held by one worker, in
    shard order, the units ordered by their first shard; a shard without a known holder is a
    unit of its own. Any grouping is exact (counts add over disjoint units); one unit per
    worker keeps the pigeonhole's threshold at ``ceil(sigma / workers)`` at any corpus size."""
    by_worker: dict[str, list[int]] = {}
    units: list[list[int]] = []
    for k, home in enumerate(homes):
        holders = home.get("workers") or []
        if not holders:
            units.append([k])
        elif holders[0] in by_worker:
            by_worker[holders[0]].append(k)
        else:
            by_worker[holders[0]] = [k]
            units.append(by_worker[holders[0]])
    return units


def _header(shard) -> tuple[int, int]:
    """(documents, tokens) of a shard: what the driver needs to place it."""
    return shard.n_docs, int(shard.doc_offsets[-1])


def _part_bytes(parts) -> int:
    return int(sum(p.nbytes for p in parts))


def _vocabulary_partitions(client, shards: list, homes: list[dict], P: int,
                           run: str) -> tuple[tuple[list, np.ndarray], int]:
    """``((vps, before_shard), size)``: the full vocabulary partitioned by hash, each string's
    first shard and local id (futures of
    :class:`~bloomspan.engine.distributed.first_occurrences.FirstOccurrences`), the distinct
    strings of the shards before each shard, and the global vocabulary size."""
    vparts = [[client.submit(tasks.vocabulary_part, s, p, P, key=f"bloomspan-vpart-{run}-{k}-{p}", **homes[k])
               for k, s in enumerate(shards)] for p in range(P)]
    vps = [client.submit(tasks.vocabulary_partition, vparts[p], key=f"bloomspan-vocab-{run}-{p}", retries=2) for p in range(P)]
    counts = np.asarray(client.gather([client.submit(tasks.partition_counts, v, key=f"bloomspan-vcount-{run}-{p}")
                                       for p, v in enumerate(vps)]))  # (P, S)
    per_shard = counts.sum(axis=0)
    before_shard = np.concatenate([[0], np.cumsum(per_shard)[:-1]]).astype(np.int64)
    return (vps, before_shard), int(per_shard.sum())
