"""The Dask run's worker tasks, one stage after the other in this process: CPU and memory per stage.

    .venv/bin/python -m bench.dask_stage_profile --corpus web42k.jsonl --shards 4

Runs the task functions of :mod:`bloomspan.sidecar.distributed.tasks` on ``--shards`` byte
ranges of the file (4: what ``--dask local:2`` cuts a 183 MiB crawl into) without Dask, in
the order the pipeline runs them, so what each stage costs is the kernels' and numpy's own
work, not Dask's. Per stage: CPU ns per corpus token (user + sys of this process), and the
largest transient memory of one task above what the process held before it, in bytes per
token of the shard the task ran on (RSS sampled every 2 ms from /proc). ``held`` is the
process's RSS after the stage above the start, per corpus token: what the shards and the
stages' results keep. Kernels are loaded (or compiled) first, off the clock.
"""
from __future__ import annotations

import argparse
import os
import resource
import threading
import time

import numpy as np


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


class _Sampler:
    def __init__(self):
        self.peak = _rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, _rss())

    def reset(self) -> int:
        now = _rss()
        self.peak = now
        return now

    def stop(self):
        self._stop.set()
        self._thread.join()


class Stages:
    def __init__(self):
        self.cpu: dict[str, float] = {}
        self.transient: dict[str, float] = {}
        self.sampler = _Sampler()
        self.base = _rss()
        self.held: dict[str, int] = {}

    def run(self, stage: str, fn, *args, tokens: int = 0):
        before = self.sampler.reset()
        c = _cpu()
        out = fn(*args)
        self.cpu[stage] = self.cpu.get(stage, 0.0) + _cpu() - c
        self.sampler.peak = max(self.sampler.peak, _rss())
        if callable(tokens):
            tokens = tokens(out)
        if tokens:
            self.transient[stage] = max(self.transient.get(stage, 0.0), (self.sampler.peak - before) / tokens)
        return out

    def mark(self, stage: str) -> None:
        self.held[stage] = _rss() - self.base


def _run_ids(shards, cut, n_ranges: int) -> list[np.ndarray]:
    """Per shard its run ids, as the pipeline numbers them (:mod:`~bloomspan.sidecar.distributed.run_ids`:
    ranges of the sorted used strings), with the JSON Lines run's first occurrences found against
    the vocabulary partitions (their result is not used here: the route takes run ids)."""
    from bloomspan.sidecar.distributed import run_ids as ri, tasks

    sortings = [ri._sorted_used_of(c) for c in cut]
    splitters = ri.splitters_of([ri.sample_of(x) for x in sortings], n_ranges)
    bounds = [ri.range_bounds(x, splitters) for x in sortings]
    ranges = [ri.rank_range([ri.range_block(x, b, p) for x, b in zip(sortings, bounds)])
              for p in range(len(splitters) + 1)]
    offsets = np.concatenate([[0], np.cumsum([ri.range_size(r) for r in ranges])]).astype(np.int64)
    P = n_ranges
    vps = [tasks.vocabulary_partition([tasks.vocabulary_part(s, p, P) for s in shards]) for p in range(P)]
    counts = np.asarray([tasks.partition_counts(v) for v in vps])
    before_shard = np.concatenate([[0], np.cumsum(counts.sum(axis=0))[:-1]]).astype(np.int64)
    for r in ranges:
        lookups = ri.range_lookups(r, P)
        where = ri.range_where(r, [ri.locate_range(vp, ri.lookup_for(lookups, q)) for q, vp in enumerate(vps)])
        ri.range_global_ids(where, [tasks.first_seen_before(vp, where) for vp in vps], before_shard)
    return [ri.shard_run_ids(x, b, [ri.ranks_for(r, k) for r in ranges], offsets)
            for k, (x, b) in enumerate(zip(sortings, bounds))]


def profile(path: str, n_shards: int, sigma: int, min_length: int, n_units: int = 2) -> dict:
    from bloomspan.engine.distributed.window_filter import local_threshold
    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.sidecar.distributed import tasks
    from bloomspan.sidecar.distributed.shards import byte_ranges, read_jsonl_range

    tasks.warm_kernels(min_length)
    config = MiningConfig(sigma=sigma, min_length=min_length)
    L, G = min_length, max(2, n_shards // 2)
    st = Stages()
    ranges = byte_ranges(path, n_shards)
    shards = []
    for k, (a, b) in enumerate(ranges):
        shards.append(st.run("read + tokenize", read_jsonl_range, path, a, b, "text", "id", k,
                             tokens=lambda s: max(1, s.n_tokens)))
    sizes = [s.n_tokens for s in shards]
    n_tokens = sum(sizes)
    st.mark("read + tokenize")
    # count units as the pipeline makes them: the shards of one worker counted together
    n_units = max(1, min(n_units, n_shards))
    bounds = np.linspace(0, n_shards, n_units + 1).astype(int)
    units = [shards[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    threshold = local_threshold(sigma, n_units)
    filters = [st.run("count + heavy", tasks.unit_filter, u, L, threshold, k, tokens=sum(s.n_tokens for s in u))
               for k, u in enumerate(units)]
    heavy = [tasks.heavy_hashes(f) for f in filters]
    union = st.run("reduce (union, cells, superset)", tasks.union_of, *heavy)
    uppers = [st.run("reduce (union, cells, superset)", tasks.upper_counts, f, union) for f in filters]
    members = st.run("reduce (union, cells, superset)", tasks.superset_of, union, sigma, *uppers)
    st.mark("count + reduce (filters held)")
    sizes = [tasks.table_size(f) for f, u in zip(filters, units) for _ in range(len(u))]
    del filters, heavy, uppers
    cut = [st.run("cut", tasks.flagged_segments, s, members, L, k, G, sizes[k], tokens=s.n_tokens)
           for k, s in enumerate(shards)]
    st.mark("cut")
    run_ids = st.run("run ids and first occurrences", _run_ids, shards, cut, G)
    base = np.concatenate([[0], np.cumsum([s.n_docs for s in shards])]).astype(np.int64)
    routed = []
    for k, c in enumerate(cut):
        docs = np.arange(base[k], base[k + 1], dtype=np.int64)
        routed.append(st.run("route", tasks.growth_parts, c, run_ids[k], docs, G, k, tokens=shards[k].n_tokens))
    del cut
    st.mark("route (cuts freed)")
    grown = []
    for g in range(G):
        parts = [r[g] for r in routed]
        grown.append(st.run("grow", tasks.grow_shard, parts, config, g, tokens=n_tokens // G))
    del routed, parts
    st.mark("grow (fragments freed)")
    for k, s in enumerate(shards):
        occ = [tasks.occurrences_for(gr, k) for gr in grown]
        st.run("cover", tasks.shard_coverage, s, occ, None, n_tokens, tokens=s.n_tokens)
    st.sampler.stop()
    return {"tokens": n_tokens, "shards": n_shards, "shard_tokens": sizes, "cpu": st.cpu,
            "transient": st.transient, "held": st.held,
            "phrases": int(sum(len(gr.tokens) for gr in grown))}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--units", type=int, default=2, help="count units (workers) the shards are grouped into")
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--min-length", type=int, default=10)
    a = ap.parse_args(argv)
    t = time.perf_counter()
    r = profile(a.corpus, a.shards, a.sigma, a.min_length, a.units)
    n = r["tokens"]
    print(f"{n / 1e6:.1f} M tokens, {r['shards']} shards in {a.units} count units, sigma={a.sigma}, min_length={a.min_length}, "
          f"{r['phrases']} phrases, {time.perf_counter() - t:.1f} s wall, load {os.getloadavg()[0]:.1f}\n")
    print("| stage | CPU ns / token | largest task's transient B / token of its shard |")
    print("| --- | ---: | ---: |")
    for stage, c in r["cpu"].items():
        tr = r["transient"].get(stage)
        print(f"| {stage} | {c * 1e9 / n:.1f} | {'—' if tr is None else f'{tr:.1f}'} |")
    print(f"| all | {sum(r['cpu'].values()) * 1e9 / n:.1f} | |\n")
    print("| after | held B / corpus token |")
    print("| --- | ---: |")
    for stage, h in r["held"].items():
        print(f"| {stage} | {h / n:.1f} |")


if __name__ == "__main__":
    main()
