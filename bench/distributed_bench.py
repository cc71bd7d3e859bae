"""Distributed mining on this machine: the single-node run vs ``--dask local:N``, from a file or a live index.

    .venv/bin/python -m bench.distributed_bench --corpus web48k.jsonl --workers 1 2 --sigma 20 --min-length 10
    .venv/bin/python -m bench.distributed_bench --corpus web48k.jsonl --workers 1 2 --index-url http://127.0.0.1:9200

Without ``--corpus`` it generates the web crawl (``bloomspan corpus web``). File mode runs
``mine_jsonl`` in a subprocess and the distributed run per worker count on a fresh
LocalCluster, and checks that phrases.jsonl is byte-identical. Index mode bulk-loads the
file into ``bstest-dask-<random>`` (2 shards), runs ``run_mining`` in a subprocess and
``run_mining(config, dask=...)`` per worker count, checks that the published phrase documents, doc map
and coverage are identical, and deletes every index it made. Per run: wall seconds, CPU
seconds (user + sys of every process of the run: the single-node subprocess; the driver,
which hosts the scheduler, plus the workers), peak RSS per process, bytes the workers sent
each other, bytes of window counts shuffled, the reduced share and the tokens shipped to
the growth shards. Prints a Markdown table; one JSON line per run on stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from bench.result_file import command_line, write_section


def _cpu(usage) -> float:
    return usage.ru_utime + usage.ru_stime


def _child(code: str) -> dict:
    before = _cpu(resource.getrusage(resource.RUSAGE_CHILDREN))
    load0 = os.getloadavg()[0]
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if res.returncode:
        raise SystemExit(f"single-node run failed:\n{res.stderr[-3000:]}")
    out = json.loads(res.stdout.strip().splitlines()[-1])
    out["cpu_seconds"] = _cpu(resource.getrusage(resource.RUSAGE_CHILDREN)) - before
    out["load_average"] = [load0, os.getloadavg()[0]]
    return out


_PEAK = ("import json, resource, sys, time\n"
         "t = time.perf_counter()\n")
_REPORT = ("print(json.dumps({'seconds': time.perf_counter() - t, 'tokens': TOKENS, "
           "'peak_rss': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))\n")


def _single_file(path: Path, out: Path, sigma: int, min_length: int) -> dict:
    return _child(_PEAK + "from bloomspan.engine.mining.config import MiningConfig\n"
                  "from bloomspan.sidecar.run.jsonl_mining import mine_jsonl\n"
                  f"s = mine_jsonl({str(path)!r}, 'text', MiningConfig(sigma={sigma}, min_length={min_length}), "
                  f"{str(out)!r}, id_field='id')\n" + _REPORT.replace("TOKENS", "s.tokens"))


def _mine_kwargs(url: str, prefix: str, name: str, work: Path, sigma: int, min_length: int) -> dict:
    return {"index": prefix + "src", "url": url, "template_index": prefix + name, "work_dir": str(work / name),
            "lease_index": prefix + "lease", "sigma": sigma, "min_length": min_length, "templates": False}


def _single_index(url: str, prefix: str, work: Path, sigma: int, min_length: int) -> dict:
    kwargs = json.dumps(_mine_kwargs(url, prefix, "one", work, sigma, min_length))
    return _child(_PEAK + "from bloomspan.sidecar.run.mining_run import MineConfig, run_mining\n"
                  f"s = run_mining(MineConfig.from_flags(**json.loads({kwargs!r})))\n" + _REPORT.replace("TOKENS", "s.tokens_mined"))


class _PeakRSS:
    """Peak resident memory of this process (the driver, which hosts the local scheduler)
    while a run is in flight, sampled every 50 ms from /proc (ru_maxrss would include the
    bench's own bulk load before the run)."""

    def __init__(self):
        self.peak = self.base = self._now()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    @staticmethod
    def _now() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, self._now())

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._now())


def _stage_seconds(task_stream: list[dict]) -> dict:
    """Seconds the workers' threads spent per stage (task key ``bloomspan-<stage>-<run>-...``):
    computing, and receiving task inputs from other workers."""
    out: dict[str, float] = {}
    for t in task_stream:
        parts = str(t["key"]).strip("()'").split("-")  # bloomspan-<stage>-<run>-<shard>...
        stage = parts[1] if len(parts) > 1 and parts[0].endswith("bloomspan") else "other"
        for ss in t.get("startstops", ()):
            name = stage if ss["action"] == "compute" else f"{ss['action']}"
            out[name] = out.get(name, 0.0) + ss["stop"] - ss["start"]
    return {k: round(v, 2) for k, v in sorted(out.items(), key=lambda kv: -kv[1])}


def _task_cpu(before: dict, after: dict) -> dict:
    """CPU seconds of the workers' task threads per stage (Dask's fine performance metrics,
    ``("execute", "bloomspan-<stage>", "thread-cpu", "seconds")``), and the seconds of
    everything else the workers timed (transfers, (de)serialisation, spilling) by activity."""
    out: dict[str, float] = {}
    for key, value in after.items():
        if isinstance(key, tuple) and key[0] == "get-data" and key[-1] == "bytes":  # bytes workers served
            out["bytes:get-data"] = out.get("bytes:get-data", 0.0) + value - before.get(key, 0.0)
        if not isinstance(key, tuple) or key[-1] != "seconds":
            continue
        delta = value - before.get(key, 0.0)
        if key[0] == "execute" and key[2] == "thread-cpu":
            name = f"cpu:{str(key[1]).removeprefix('bloomspan-')}"
        elif key[0] == "execute":
            continue
        else:
            name = f"{key[0]}:{key[-2]}"
        out[name] = out.get(name, 0.0) + delta
    return {k: round(v, 2) for k, v in sorted(out.items(), key=lambda kv: -kv[1]) if v >= 0.005}


def _distributed(workers: int, memory: str, run) -> dict:
    """``run(scheduler_address)`` on a fresh LocalCluster of ``workers`` processes."""
    from distributed import Client, LocalCluster, get_task_stream

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, memory_limit=memory,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        client.wait_for_workers(workers)
        client.run(lambda: __import__("bloomspan.engine.mining.bloomspan"))  # imports (not numba caches) off the clock
        cpu = lambda: client.run(lambda: _cpu(resource.getrusage(resource.RUSAGE_SELF)))  # noqa: E731
        w0, d0 = cpu(), _cpu(resource.getrusage(resource.RUSAGE_SELF))
        load0 = os.getloadavg()[0]
        t = time.perf_counter()
        metrics0 = dict(cluster.scheduler.cumulative_worker_metrics)
        with _PeakRSS() as driver_rss, get_task_stream(client) as ts:
            tokens, stats = run(cluster.scheduler_address)
        seconds = time.perf_counter() - t
        time.sleep(1.5)  # workers send their metrics with the next heartbeat
        metrics1 = dict(cluster.scheduler.cumulative_worker_metrics)
        w1, d1 = cpu(), _cpu(resource.getrusage(resource.RUSAGE_SELF))
        peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    workers_cpu = sum(w1[k] - w0[k] for k in w1)
    return {"seconds": seconds, "cpu_seconds": (d1 - d0) + workers_cpu, "driver_cpu_seconds": d1 - d0,
            "workers_cpu_seconds": workers_cpu, "tokens": tokens, "load_average": [load0, os.getloadavg()[0]],
            "peak_rss_per_worker": max(peaks.values()), "driver_peak_rss": driver_rss.peak,
            "driver_rss_growth": driver_rss.peak - driver_rss.base, "worker_bytes_sent": stats["worker_bytes_sent"],
            "windows_sent_bytes": stats["windows_sent_bytes"], "reduced_tokens": stats["reduced_tokens"],
            "growth_fragment_tokens": stats["growth_fragment_tokens"], "stage_seconds": stats["seconds"],
            "task_seconds": _stage_seconds(ts.data), "task_cpu_seconds": _task_cpu(metrics0, metrics1)}


def _file_runs(a, path: Path, work: Path) -> list[tuple]:
    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.sidecar.distributed.cluster import DaskConfig
    from bloomspan.sidecar.run.dask_jsonl_mining import mine_jsonl_dask

    one = _single_file(path, work / "single", a.sigma, a.min_length)
    rows = [("single node (`mine_jsonl`)", one)]
    reference = (work / "single" / "phrases.jsonl").read_bytes()
    for n in a.workers:
        out = work / f"dask{n}"

        def run(address, out=out):
            s = mine_jsonl_dask(str(path), "text", MiningConfig(sigma=a.sigma, min_length=a.min_length), str(out),
                                DaskConfig(address), id_field="id")
            return s.tokens, s.report["stats"]

        r = _distributed(n, _memory(a, n), run)
        if (out / "phrases.jsonl").read_bytes() != reference:
            raise SystemExit(f"local:{n}: phrases.jsonl differs from the single-node run")
        rows.append((f"`--dask local:{n}`", r))
    return rows


def _published(client, alias: str) -> dict:
    from opensearchpy import helpers

    out = {}
    for hit in helpers.scan(client, index=alias, query={"query": {"match_all": {}}}):
        src = dict(hit["_source"])
        src.pop("run_id", None)
        if src["kind"] == "run":
            out["run"] = {k: src.get(k) for k in ("tokens_mined", "covered_tokens", "phrases", "docs_seen")}
            out["coverage"] = src.get("coverage")
        elif src["kind"] in ("phrase", "docmap"):
            out[hit["_id"] if src["kind"] == "phrase" else f"docmap-{src['first_member']}"] = src
    return out


def _index_runs(a, path: Path, work: Path) -> list[tuple]:
    from opensearchpy import OpenSearch

    from bloomspan.sidecar.distributed.cluster import DaskConfig
    from bloomspan.sidecar.run.mining_run import MineConfig, run_mining

    prefix = a.prefix or f"bstest-dask-{uuid.uuid4().hex[:8]}-"
    if not prefix.startswith("bstest-dask-"):
        raise SystemExit(f"--prefix {prefix}: must start with bstest-dask- (indices on a shared node)")
    client = OpenSearch(a.index_url, timeout=120)
    try:
        if not client.indices.exists(index=prefix + "src"):
            _load(client, prefix + "src", path, index_text=not a.no_index_text)
        if a.load_only:
            return []
        one = _single_index(a.index_url, prefix, work, a.sigma, a.min_length)
        rows = [("single node (`run_mining`)", one)]
        reference = _published(client, prefix + "one")
        for k in a.workers:
            name = f"dask{k}"

            def run(address, name=name):
                config = MineConfig.from_flags(**_mine_kwargs(a.index_url, prefix, name, work, a.sigma, a.min_length))
                s = run_mining(config, dask=DaskConfig(address))
                stats = client.search(index=prefix + name, body={"query": {"term": {"kind": "run"}}})
                return s.tokens_mined, stats["hits"]["hits"][0]["_source"]["stats"]["engine"]

            r = _distributed(k, _memory(a, k), run)
            if _published(client, prefix + name) != reference:
                raise SystemExit(f"local:{k}: the published template index differs from the single-node one")
            rows.append((f"`--dask local:{k}`", r))
        return rows
    finally:
        if a.keep_source or a.load_only:  # the runs' own indices go; the loaded source stays for the next invocation
            names = client.indices.get(index=prefix + "*", expand_wildcards="all")
            for name in names:
                if name != prefix + "src":
                    client.indices.delete(index=name, ignore_unavailable=True)
        else:
            client.indices.delete(index=prefix + "*", ignore_unavailable=True)


def _load(client, index: str, path: Path, index_text: bool = True) -> None:
    """Bulk-load the JSON Lines file into a new 2-shard index (no replica, no refresh while
    loading). ``index_text`` False maps ``text`` as a text field that is not indexed: mining
    reads ``_source`` only, and analysing the text is most of a shared node's load time."""
    from opensearchpy import helpers

    body = {"settings": {"number_of_shards": 2, "number_of_replicas": 0, "refresh_interval": "-1"}}
    if not index_text:
        body["mappings"] = {"properties": {"text": {"type": "text", "index": False, "norms": False}}}
    client.indices.create(index=index, body=body)
    t = time.perf_counter()

    def actions():
        with open(path, encoding="utf-8") as f:
            for line in f:
                d = json.loads(line)
                yield {"_index": index, "_id": d.pop("id"), "_source": d}

    n = sum(1 for ok, _ in helpers.parallel_bulk(client, actions(), thread_count=2, chunk_size=500,
                                                 max_chunk_bytes=20 << 20) if ok)
    client.indices.refresh(index=index)
    print(json.dumps({"indexed": n, "seconds": time.perf_counter() - t,
                      "store_bytes": client.indices.stats(index=index)["_all"]["primaries"]["store"]["size_in_bytes"]}),
          file=sys.stderr)


def _memory(a, workers: int) -> str:
    if len(a.memory_limit) == 1:
        return a.memory_limit[0]
    if len(a.memory_limit) != len(a.workers):
        raise SystemExit(f"--memory-limit {' '.join(a.memory_limit)}: give one value, or one per --workers entry")
    return a.memory_limit[a.workers.index(workers)]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=48000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--min-length", type=int, default=10)
    ap.add_argument("--memory-limit", nargs="+", default=["3GiB"],
                    help="Per worker; one value for every run, or one per --workers entry")
    ap.add_argument("--corpus", default=None, help="Existing JSONL (default: generate the web crawl)")
    ap.add_argument("--index-url", default=None, help="Mine a live index on this node instead of the file")
    ap.add_argument("--prefix", default=None, help="Index name prefix (bstest-dask-...; default: random); "
                                                   "<prefix>src is loaded only when it does not exist")
    ap.add_argument("--keep-source", action="store_true", help="Keep <prefix>src for the next invocation")
    ap.add_argument("--no-index-text", action="store_true", help="Map text as not indexed (faster load; mining "
                                                                 "reads _source)")
    ap.add_argument("--load-only", action="store_true", help="Load <prefix>src and stop")
    a = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bloomspan-dbench-"))
    path = Path(a.corpus) if a.corpus else work / "web.jsonl"
    if not a.corpus:
        from bloomspan.corpora import corpus_by_name, write_jsonl

        write_jsonl(corpus_by_name("web", a.docs, a.seed), path)
    rows = _index_runs(a, path, work) if a.index_url else _file_runs(a, path, work)
    if not rows:
        return
    for name, r in rows:
        print(json.dumps({"run": name, **r}), file=sys.stderr)
    tokens = rows[0][1]["tokens"]
    base = rows[0][1]["seconds"]
    source = f"live index at {a.index_url}" if a.index_url else "file"
    out: list[str] = []
    out.append(f"\n{tokens / 1e6:.1f} M tokens ({path.stat().st_size / 2**20:.0f} MiB JSONL, {source}), sigma={a.sigma}, "
          f"min_length={a.min_length}; output identical in every run\n")
    out.append("| run | wall s | CPU s | of which driver | speed-up vs single (wall) | CPU vs single | load avg "
          "| peak RSS per worker | driver peak RSS | worker bytes sent / token | window counts B / token "
          "| growth tokens / token | reduced share |")
    out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")

    def per_token(r: dict, k: str, f: str) -> str:
        return "—" if k not in r else f.format(r[k] / tokens)

    mib = lambda r, k: "—" if k not in r else f"{r[k] / 2**20:.0f} MiB"  # noqa: E731
    for name, r in rows:
        fmt = lambda k, f, r=r: per_token(r, k, f)  # noqa: E731
        rss = r.get("peak_rss_per_worker", r.get("peak_rss"))
        load = "–".join(f"{x:.1f}" for x in r["load_average"])
        driver = f"{r['driver_cpu_seconds']:.1f}" if "driver_cpu_seconds" in r else "—"
        out.append(f"| {name} | {r['seconds']:.1f} | {r['cpu_seconds']:.1f} | {driver} | {base / r['seconds']:.2f}× "
              f"| {r['cpu_seconds'] / rows[0][1]['cpu_seconds']:.2f}× | {load} | {rss / 2**20:.0f} MiB "
              f"| {mib(r, 'driver_peak_rss')} | {fmt('worker_bytes_sent', '{:.2f}')} "
              f"| {fmt('windows_sent_bytes', '{:.2f}')} | {fmt('growth_fragment_tokens', '{:.3f}')} "
              f"| {fmt('reduced_tokens', '{:.3f}')} |")
    print("\n".join(out))
    write_section("distributed", "Mining on Dask", "\n".join(
        ["## Mining on Dask: single node vs `--dask local:N`", f"`{command_line('bench.distributed_bench', argv)}`", "", *out]))


if __name__ == "__main__":
    main()
