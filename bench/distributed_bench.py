"""Distributed mining on this machine: the single-node run vs ``--dask local:N`` on one file.

    .venv/bin/python -m bench.distributed_bench --docs 48000 --workers 1 2 --sigma 20 --min-length 10

Generates the web crawl (``bloomspan corpus web``) once, runs ``mine_jsonl`` in a subprocess
(peak RSS of that process) and the distributed run per worker count on a fresh LocalCluster
(peak RSS of each worker process, bytes the workers sent each other, bytes of window counts
shuffled), checks that phrases.jsonl is byte-identical, and prints a Markdown table.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _single(path: Path, out: Path, sigma: int, min_length: int) -> dict:
    code = ("import json, resource, sys, time\n"
            "from bloomspan.engine.mining.config import MiningConfig\n"
            "from bloomspan.sidecar.run.jsonl_mining import mine_jsonl\n"
            "t = time.perf_counter()\n"
            f"s = mine_jsonl({str(path)!r}, 'text', MiningConfig(sigma={sigma}, min_length={min_length}), "
            f"{str(out)!r}, id_field='id')\n"
            "print(json.dumps({'seconds': time.perf_counter() - t, 'tokens': s.tokens, "
            "'peak_rss': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def _distributed(path: Path, out: Path, sigma: int, min_length: int, workers: int, memory: str) -> dict:
    from distributed import Client, LocalCluster

    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.sidecar.distributed.cluster import DaskConfig
    from bloomspan.sidecar.distributed.jsonl import mine_jsonl_dask

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, memory_limit=memory,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        client.wait_for_workers(workers)
        client.run(lambda: __import__("bloomspan.engine.mining.bloomspan"))  # imports (not numba caches) off the clock
        t = time.perf_counter()
        s = mine_jsonl_dask(str(path), "text", MiningConfig(sigma=sigma, min_length=min_length), str(out),
                            DaskConfig(cluster.scheduler_address), id_field="id")
        seconds = time.perf_counter() - t
        peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    stats = s.report["stats"]
    return {"seconds": seconds, "tokens": s.tokens, "peak_rss_per_worker": max(peaks.values()),
            "worker_bytes_sent": stats["worker_bytes_sent"], "windows_sent_bytes": stats["windows_sent_bytes"],
            "reduced_tokens": stats["reduced_tokens"], "stage_seconds": stats["seconds"]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=48000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--min-length", type=int, default=10)
    ap.add_argument("--memory-limit", default="6GiB")
    ap.add_argument("--corpus", default=None, help="Existing JSONL (default: generate the web crawl)")
    a = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bloomspan-dbench-"))
    path = Path(a.corpus) if a.corpus else work / "web.jsonl"
    if not a.corpus:
        from bloomspan.sidecar.corpora import corpus_by_name, write_jsonl

        write_jsonl(corpus_by_name("web", a.docs, a.seed), path)
    one = _single(path, work / "single", a.sigma, a.min_length)
    rows = [("single node", one["seconds"], one["peak_rss"], None, None, None)]
    reference = (work / "single" / "phrases.jsonl").read_bytes()
    for n in a.workers:
        r = _distributed(path, work / f"dask{n}", a.sigma, a.min_length, n, a.memory_limit)
        same = (work / f"dask{n}" / "phrases.jsonl").read_bytes() == reference
        if not same:
            raise SystemExit(f"local:{n}: phrases.jsonl differs from the single-node run")
        rows.append((f"--dask local:{n}", r["seconds"], r["peak_rss_per_worker"],
                     r["worker_bytes_sent"] / r["tokens"], r["windows_sent_bytes"] / r["tokens"],
                     r["reduced_tokens"] / r["tokens"]))
        print(json.dumps({"workers": n, **r}), file=sys.stderr)
    tokens = one["tokens"]
    print(f"\n{tokens / 1e6:.1f} M tokens ({path.stat().st_size / 2**20:.0f} MiB JSONL), sigma={a.sigma}, "
          f"min_length={a.min_length}; phrases.jsonl identical in every run\n")
    print("| run | seconds | ns/token | peak RSS per process | worker bytes sent / token | window counts / token "
          "| reduced share |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, sec, rss, sent, windows, red in rows:
        fmt = lambda x, f: "—" if x is None else f.format(x)  # noqa: E731
        print(f"| {name} | {sec:.1f} | {sec * 1e9 / tokens:.0f} | {rss / 2**20:.0f} MiB | {fmt(sent, '{:.2f}')} "
              f"| {fmt(windows, '{:.2f}')} | {fmt(red, '{:.3f}')} |")


if __name__ == "__main__":
    main()
