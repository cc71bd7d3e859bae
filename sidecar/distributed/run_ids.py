"""The run's token ids, numbered where the strings are: the driver never holds the vocabulary.

Growth numbers a token by its **run id**: the rank of its string among the distinct strings
the shards' intervals use (their ``used_strings``), in sorted order. An index run orders ties
of phrases by these ids, so they must be the ranks of one sorted list over all shards. Before
this module the driver gathered every shard's strings, sorted their union and sent each route
task its ids: the vocabulary of the reduced corpus passed through the driver (5.6 MiB of the
32,000-page driver peak, growing with the corpus). Now it is a range partition:

1. each shard sorts its strings (:func:`sorted_used`, kept on its worker) and sends the driver
   a fixed number of evenly spaced ones (:func:`sample_of`);
2. the driver picks ``P - 1`` splitters from the samples (:func:`splitters_of`): a few strings
   per shard, whatever the corpus' size;
3. range partition ``p`` takes every shard's strings in its range and numbers their distinct
   strings in sorted order (:func:`rank_range`); the driver gathers each range's size;
4. a string's run id is its range's offset (the sizes of the ranges before it) plus its rank
   in the range, and each shard's route task gets the run ids of its own strings
   (:func:`shard_run_ids`) from the ranges' answers for it;
5. the driver asks the ranges only for the strings of the phrases' tokens (:func:`strings_at`).

Ranges split the sorted order, so the ids equal the ranks in the sorted union
(:func:`run_ids_reference`, the plain twin the property tests compare with). A splitter only
decides balance, never an id: strings are compared whole, so every string lands in exactly one
range. JSON Lines output numbers tokens by their first occurrence in the file instead
(``global_ids``); the ranges then find their strings' first occurrences against the vocabulary
partitions (:func:`range_lookups`, :func:`range_global_ids`) and the driver asks them for the
phrases' tokens' ids only.
"""
from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass

import numpy as np

from bloomspan.engine.distributed.first_occurrences import FirstOccurrences
from bloomspan.engine.distributed.windows import partition_of, string_hashes

from .tasks import StringBlock, first_seen_before

SAMPLE_SIZE = 64  # evenly spaced strings per shard the splitters are picked from


@dataclass
class SortedUsed:
    """A shard's used strings in sorted order, on its worker: ``strings[i]`` is
    ``used_strings[order[i]]``."""

    strings: list[str]
    order: np.ndarray  # int64 (U,)


def sorted_used(used_strings: list[str]) -> SortedUsed:
    order = sorted(range(len(used_strings)), key=used_strings.__getitem__)
    return SortedUsed([used_strings[i] for i in order], np.asarray(order, dtype=np.int64))


def sample_of(su: SortedUsed, size: int = SAMPLE_SIZE) -> list[str]:
    """Up to ``size`` evenly spaced strings of the sorted list (all of them when fewer)."""
    n = len(su.strings)
    if n <= size:
        return list(su.strings)
    return [su.strings[(i * n) // size] for i in range(size)]


def splitters_of(samples: list[list[str]], n_ranges: int) -> list[str]:
    """``n_ranges - 1`` ascending strings splitting the merged samples into equal parts (fewer
    when the samples hold fewer distinct strings; range ``p`` holds the strings ``s`` with
    ``splitters[p - 1] <= s < splitters[p]``)."""
    merged = sorted(set().union(*samples)) if samples else []
    if n_ranges <= 1 or not merged:
        return []
    picks = sorted({merged[(p * len(merged)) // n_ranges] for p in range(1, n_ranges)})
    return [s for s in picks if s != merged[0]]  # an empty first range helps nobody


def range_bounds(su: SortedUsed, splitters: list[str]) -> np.ndarray:
    """int64 (R + 1,): where each range's strings start in the sorted list (R = splitters + 1)."""
    cuts = [bisect.bisect_left(su.strings, s) for s in splitters]
    return np.asarray([0, *cuts, len(su.strings)], dtype=np.int64)


def range_block(su: SortedUsed, bounds: np.ndarray, p: int) -> StringBlock:
    """The shard's strings of range ``p``, packed for the trip to the range's worker."""
    return StringBlock.of(su.strings[int(bounds[p]):int(bounds[p + 1])])


@dataclass
class RangeRanks:
    """Range partition's answer: its distinct strings in sorted order (packed) and, per shard,
    the rank among them of each of that shard's strings of the range (in the shard's order)."""

    strings: StringBlock
    ranks: list[np.ndarray]  # per shard: uint32, ascending (both lists are sorted)

    @property
    def size(self) -> int:
        return self.strings.count


def rank_range(blocks: list[StringBlock]) -> RangeRanks:
    """Merge the shards' sorted strings of one range: the distinct strings, and each shard's
    ranks in them."""
    lists = [b.strings() for b in blocks]
    distinct: list[str] = []
    for s in heapq.merge(*lists):
        if not distinct or distinct[-1] != s:
            distinct.append(s)
    rank_of = {s: i for i, s in enumerate(distinct)}
    ranks = [np.fromiter((rank_of[s] for s in strings), dtype=np.uint32, count=len(strings)) for strings in lists]
    return RangeRanks(StringBlock.of(distinct), ranks)


def range_size(rr: RangeRanks) -> int:
    return rr.size


def ranks_for(rr: RangeRanks, k: int) -> np.ndarray:
    """Shard ``k``'s ranks in this range (what its route task needs of it)."""
    return rr.ranks[k]


def shard_run_ids(su: SortedUsed, bounds: np.ndarray, ranks: list[np.ndarray], offsets: np.ndarray) -> np.ndarray:
    """uint32 (U,): the run id of each of the shard's ``used_strings``, in their order:
    ``offsets[p]`` (the strings of the ranges before ``p``) plus its rank in range ``p``."""
    ids = np.empty(su.order.shape[0], dtype=np.uint32)
    for p, r in enumerate(ranks):
        ids[su.order[int(bounds[p]):int(bounds[p + 1])]] = np.asarray(r, dtype=np.uint32) + np.uint32(offsets[p])
    return ids


def strings_at(rr: RangeRanks, ranks: np.ndarray) -> list[str]:
    """The strings of the given ranks of this range."""
    strings = rr.strings.strings()
    return [strings[int(i)] for i in ranks]


def range_of(run_ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """int64: the range holding each run id (``offsets``: int64 (R + 1,), the ranges' starts)."""
    return np.searchsorted(offsets, np.asarray(run_ids, dtype=np.int64), side="right") - 1


def run_ids_reference(used: list[list[str]]) -> list[np.ndarray]:
    """Plain twin: per shard, the rank of each of its strings in the sorted union of all."""
    union = sorted(set().union(*used)) if used else []
    rank = {s: i for i, s in enumerate(union)}
    return [np.asarray([rank[s] for s in strings], dtype=np.uint32) for strings in used]


# ---------------------------------------------------------------------- first-occurrence ids
@dataclass
class RangeLookup:
    """The strings of one range that hash into one vocabulary partition: their ranks in the
    range, themselves and their hashes."""

    ranks: np.ndarray  # int64 (n,)
    strings: list[str]
    hashes: np.ndarray  # uint64 (n,)


def range_lookups(rr: RangeRanks, n_partitions: int) -> list[RangeLookup]:
    """Per vocabulary partition, the range's strings that hash into it (each string decoded and
    hashed once, whatever the number of partitions)."""
    strings = rr.strings.strings()
    hashes = string_hashes(strings) if strings else np.zeros(0, dtype=np.uint64)
    part = partition_of(hashes, n_partitions)
    out = []
    for q in range(n_partitions):
        mine = np.flatnonzero(part == q)
        out.append(RangeLookup(mine, [strings[i] for i in mine.tolist()], hashes[mine]))
    return out


def lookup_for(lookups: list[RangeLookup], q: int) -> RangeLookup:
    return lookups[q]


def locate_range(vp: FirstOccurrences, lookup: RangeLookup) -> tuple[np.ndarray, np.ndarray]:
    """(ranks, where): where each string of ``lookup`` first occurs, (shard, local id)."""
    return lookup.ranks, vp.locate(lookup.strings, lookup.hashes)


def range_where(rr: RangeRanks, located: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """int64 (n, 2): (first shard, local id) of every string of the range, in rank order."""
    where = np.zeros((rr.size, 2), dtype=np.int64)
    for ranks, found in located:
        where[ranks] = found
    return where


def range_global_ids(where: np.ndarray, below: list[np.ndarray], before_shard: np.ndarray) -> np.ndarray:
    """int64 (n,): each string's first-occurrence id in the whole input: the distinct strings
    of the shards before its first shard, plus those of its first shard first seen earlier
    (``below``: per vocabulary partition, :func:`.tasks.first_seen_before` of ``where``)."""
    if where.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return np.asarray(before_shard, dtype=np.int64)[where[:, 0]] + np.sum(below, axis=0, dtype=np.int64)


def global_ids_at(global_ids: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    return np.asarray(global_ids, dtype=np.int64)[np.asarray(ranks, dtype=np.int64)]


# ---------------------------------------------------------------------- the driver's side
class RunIdRanges:
    """The driver's handle on a run's ids: per shard the future of its run ids (what its route
    task takes), the ranges' offsets and futures; it holds no string but those it is asked for.

    ``first_occurrences`` (``global_ids``): the vocabulary partitions and the distinct strings
    before each shard, ``(vps, before_shard)``, that first occurrences are found in."""

    def __init__(self, client, cut: list, homes: list[dict], n_ranges: int, run: str, first_occurrences=None):
        self._client = client
        sortings = [client.submit(_sorted_used_of, c, key=f"bloomspan-sortused-{run}-{k}", **homes[k])
                    for k, c in enumerate(cut)]
        samples = client.gather([client.submit(sample_of, s, key=f"bloomspan-sample-{run}-{k}")
                                 for k, s in enumerate(sortings)])
        splitters = splitters_of(samples, n_ranges)
        R = len(splitters) + 1
        bounds = [client.submit(range_bounds, s, splitters, key=f"bloomspan-bounds-{run}-{k}", **homes[k])
                  for k, s in enumerate(sortings)]
        self.ranges = [client.submit(rank_range, [client.submit(range_block, s, b, p, key=f"bloomspan-rblock-{run}-{k}-{p}",
                                                                **homes[k])
                                                  for k, (s, b) in enumerate(zip(sortings, bounds))],
                                     key=f"bloomspan-range-{run}-{p}", retries=2) for p in range(R)]
        sizes = client.gather([client.submit(range_size, r, key=f"bloomspan-rsize-{run}-{p}")
                               for p, r in enumerate(self.ranges)])
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.size = int(self.offsets[-1])
        self.shard_ids = [client.submit(shard_run_ids, s, b,
                                        [client.submit(ranks_for, r, k, key=f"bloomspan-rranks-{run}-{k}-{p}")
                                         for p, r in enumerate(self.ranges)],
                                        self.offsets, key=f"bloomspan-runids-{run}-{k}", retries=2, **homes[k])
                          for k, (s, b) in enumerate(zip(sortings, bounds))]
        self.global_ids = None
        if first_occurrences is not None:
            self.global_ids = self._first_occurrences(*first_occurrences, run)

    def _first_occurrences(self, vps: list, before_shard: np.ndarray, run: str) -> list:
        client, P = self._client, len(vps)
        out = []
        for p, r in enumerate(self.ranges):
            lookups = client.submit(range_lookups, r, P, key=f"bloomspan-rlookups-{run}-{p}")
            located = [client.submit(locate_range, vp,
                                     client.submit(lookup_for, lookups, q, key=f"bloomspan-rlookup-{run}-{p}-{q}"),
                                     key=f"bloomspan-locate-{run}-{p}-{q}") for q, vp in enumerate(vps)]
            where = client.submit(range_where, r, located, key=f"bloomspan-where-{run}-{p}")
            below = [client.submit(first_seen_before, vp, where, key=f"bloomspan-below-{run}-{p}-{q}")
                     for q, vp in enumerate(vps)]
            out.append(client.submit(range_global_ids, where, below, before_shard, key=f"bloomspan-gids-{run}-{p}",
                                     retries=2))
        return out

    def _per_range(self, fn, sources: list, run_ids: np.ndarray) -> list:
        """``(positions, answer)`` per range holding any of ``run_ids``: ``fn`` of that range's
        ``sources`` entry and the ranks of those ids in it (all asked before one gather)."""
        run_ids = np.asarray(run_ids, dtype=np.int64)
        at = range_of(run_ids, self.offsets)
        asked = []
        for p in range(len(sources)):
            mine = np.flatnonzero(at == p)
            if mine.size:
                asked.append((mine, self._client.submit(fn, sources[p], run_ids[mine] - self.offsets[p])))
        return list(zip([mine for mine, _ in asked], self._client.gather([f for _, f in asked])))

    def strings_of(self, run_ids: np.ndarray) -> list[str]:
        """The strings of ``run_ids`` (one request per range holding any)."""
        out: list = [None] * len(run_ids)
        for mine, found in self._per_range(strings_at, self.ranges, run_ids):
            for i, s in zip(mine.tolist(), found):
                out[i] = s
        return out

    def global_ids_of(self, run_ids: np.ndarray) -> np.ndarray:
        """int64: the first-occurrence id of each of ``run_ids`` (a run with ``first_occurrences``)."""
        out = np.zeros(len(run_ids), dtype=np.int64)
        for mine, found in self._per_range(global_ids_at, self.global_ids, run_ids):
            out[mine] = found
        return out

    def release(self) -> None:
        """Free the ranges on the workers (the route tasks hold their own ids)."""
        self.ranges = self.shard_ids = self.global_ids = None


def _sorted_used_of(part) -> SortedUsed:
    return sorted_used(part.used_strings)
