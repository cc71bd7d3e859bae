"""The proxy under sustained load: ``bloomspan serve`` in front of a node, opensearch-py
``helpers.parallel_bulk`` clients writing through it without a pause, the template alias
checked every 10 s (``--reload-every``), and one mining run started through ``POST /runs``
a third of the way in.

Reported: the slope of the proxy's RSS (MiB per minute) and open file descriptors (per
minute) over the samples after the first tenth of the run (warm-up), documents lost (items
the proxy acknowledged that the node does not hold at the end: must be 0), bulk request
latency through the proxy (p50, p99, max), and the mining run's outcome.

    nice .venv/bin/python -m bench.proxy_soak --url http://127.0.0.1:9243 --minutes 10

Bounded: ``--minutes`` (30 by default), ``--clients`` writers, loopback only; the indices it
creates carry a per-run prefix and are deleted at the end, serve is stopped.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import requests
from opensearchpy import OpenSearch, helpers

from bench.proxy_bench import _tree, launch_serve
from bench.result_file import write_section
from bloomspan.corpora.web import generate_web

ADMIN_TOKEN = "soak-admin-token-0123456789"


class TimedClient(OpenSearch):
    """The real client, timing every bulk request it sends (seconds, appended to ``latencies``)."""

    def __init__(self, *a, latencies: list, **kw):
        super().__init__(*a, **kw)
        self.latencies = latencies

    def bulk(self, *a, **kw):
        t0 = time.perf_counter()
        try:
            return super().bulk(*a, **kw)
        finally:
            self.latencies.append(time.perf_counter() - t0)


def proc_sample(pid: int) -> tuple[float, int]:
    """(RSS MiB, open fds) of ``pid`` and its workers."""
    rss, fds = 0.0, 0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                rss += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024
            fds += len(os.listdir(f"/proc/{p}/fd"))
        except (OSError, StopIteration):
            pass
    return rss, fds


def slope_per_minute(times: list[float], values: list[float]) -> float:
    if len(times) < 2:
        return 0.0
    return float(np.polyfit(np.asarray(times) / 60.0, np.asarray(values, dtype=float), 1)[0])


def start_serve(args, prefix: str, work: Path, log: Path) -> tuple[subprocess.Popen, str]:
    return launch_serve(["--upstream-url", args.url, "--clean-index", f"{prefix}clean-*", "--field", "text",
                         "--template-index", f"{prefix}tpl", "--no-require-template", "--reload-every", "10s",
                         "--mine-index", f"{prefix}src", "--lease-index", f"{prefix}lease", "--work-dir", str(work),
                         "--sigma", "5", "--min-length", "8", "--admin-token", ADMIN_TOKEN], log, log_level="info")


def writer(url: str, index: str, pages: list[dict], stop: threading.Event, latencies: list, counts: dict,
           lock: threading.Lock, chunk: int) -> None:
    """Bulk-index ``pages`` under fresh ids into ``index`` through the proxy until ``stop``."""
    client = TimedClient(hosts=[url], timeout=120, latencies=latencies)
    round_no = 0
    while not stop.is_set():
        actions = ({"_index": index, "_id": f"{round_no}-{i}", "_source": {"text": p["text"], "site": p["site"]}}
                   for i, p in enumerate(pages))
        ok = failed = 0
        for success, _ in helpers.parallel_bulk(client, actions, thread_count=2, chunk_size=chunk,
                                                raise_on_error=False, raise_on_exception=False):
            ok += success
            failed += not success
        with lock:
            counts["acknowledged"] += ok
            counts["failed"] += failed
        round_no += 1


def soak_section(result: dict) -> str:
    """The soak's figure as a results-page section (one table row)."""
    lat, rss, fds, run = result["latency_ms"], result["rss_mib"], result["fds"], result["mining_run"]
    return "\n".join([
        f"## Proxy soak ({result['minutes']:g} min, {result['clients']} parallel_bulk clients)", "",
        f"`nice .venv/bin/python -m bench.proxy_soak --url URL --minutes {result['minutes']:g} "
        f"--clients {result['clients']}`", "",
        "| bulk requests | items acked | lost | latency p50 / p99 / max ms | RSS first → last MiB | "
        "RSS slope MiB/min (after warm-up / second half) | fds first → last (max) | fd slope /min | POST /runs |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        f"| {result['bulk_requests']:,} | {result['acknowledged']:,} | {result['lost']} | {lat.get('p50')} / "
        f"{lat.get('p99')} / {lat.get('max')} | {rss['first']} → {rss['last']} | {rss['slope_per_min']} / "
        f"{result['rss_mib_second_half_slope_per_min']} | {fds['first']} → {fds['last']} ({fds['max']}) | "
        f"{fds['slope_per_min']} | {run.get('post_status')}, {run.get('published')} run published |", ""])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", required=True, help="the node (loopback)")
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--pages", type=int, default=500, help="pages each writer sends per round")
    ap.add_argument("--chunk", type=int, default=100, help="documents per bulk request")
    ap.add_argument("--sample-seconds", type=float, default=5.0)
    ap.add_argument("--name", default="proxy-soak", help="result file name (bench/results/NAME.json)")
    ap.add_argument("--samples-out", help="write the (seconds, RSS MiB, fds) samples as JSON here")
    args = ap.parse_args(argv)
    node = OpenSearch(hosts=[args.url], timeout=120)
    prefix = f"bloomspan-soak-{os.getpid()}-"
    node.indices.create(index=f"{prefix}src", body={"settings": {"number_of_shards": 2, "number_of_replicas": 0}})
    pages = list(generate_web(max(1000, args.pages * args.clients), seed=11, n_sites=8))
    helpers.bulk(node, ({"_index": f"{prefix}src", "_id": p["id"], "_source": {"text": p["text"], "site": p["site"]}}
                        for p in pages[:1000]), refresh=True)
    stop = threading.Event()
    lock = threading.Lock()
    latencies: list[float] = []
    counts = {"acknowledged": 0, "failed": 0}
    samples: list[tuple[float, float, int]] = []
    run_outcome: dict = {}
    with tempfile.TemporaryDirectory(prefix="bloomspan-soak-") as tmp:
        log = Path(tmp) / "serve.log"
        proc, proxy = start_serve(args, prefix, Path(tmp) / "work", log)
        try:
            threads = [threading.Thread(target=writer, daemon=True,
                                        args=(proxy, f"{prefix}clean-{k}", pages[k * args.pages:(k + 1) * args.pages],
                                              stop, latencies, counts, lock, args.chunk))
                       for k in range(args.clients)]
            t0 = time.monotonic()
            for t in threads:
                t.start()
            run_started = False
            while (elapsed := time.monotonic() - t0) < args.minutes * 60:
                rss, fds = proc_sample(proc.pid)
                samples.append((elapsed, rss, fds))
                if not run_started and elapsed >= args.minutes * 20:
                    r = requests.post(proxy + "/runs", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=30)
                    run_outcome["post_status"] = r.status_code
                    run_started = True
                time.sleep(args.sample_seconds)
            stop.set()
            for t in threads:
                t.join(timeout=300)
            runs = requests.get(proxy + "/runs", timeout=60).json()
            run_outcome["runs"] = [{**{k: v for k, v in r.items() if k != "summary"},
                                    "phrases": (r.get("summary") or {}).get("phrases")} for r in runs.get("runs") or []]
            run_outcome["published"] = len(runs.get("published") or [])
            node.indices.refresh(index=f"{prefix}clean-*")
            stored = node.count(index=f"{prefix}clean-*")["count"]
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
            serve_log = log.read_text(errors="replace").splitlines()
            for pattern in (f"{prefix}clean-*", f"{prefix}src", f"{prefix}lease", f"{prefix}tpl-*"):
                node.indices.delete(index=pattern, ignore_unavailable=True)
    warm = [s for s in samples if s[0] >= args.minutes * 6]  # after the first tenth
    lat = sorted(latencies)
    result = {
        "minutes": args.minutes, "clients": args.clients, "bulk_requests": len(lat),
        "acknowledged": counts["acknowledged"], "failed_items": counts["failed"], "stored": stored,
        "lost": counts["acknowledged"] - stored,
        "latency_ms": {"p50": round(1000 * statistics.median(lat), 1), "p99": round(1000 * lat[int(0.99 * (len(lat) - 1))], 1),
                       "max": round(1000 * lat[-1], 1)} if lat else {},
        "rss_mib": {"first": round(warm[0][1], 1), "last": round(warm[-1][1], 1), "max": round(max(s[1] for s in warm), 1),
                    "slope_per_min": round(slope_per_minute([s[0] for s in warm], [s[1] for s in warm]), 2)},
        "fds": {"first": warm[0][2], "last": warm[-1][2], "max": max(s[2] for s in warm),
                "slope_per_min": round(slope_per_minute([s[0] for s in warm], [s[2] for s in warm]), 3)},
        "rss_mib_second_half_slope_per_min": round(slope_per_minute(
            [t for t, _, _ in samples if t >= args.minutes * 30], [r for t, r, _ in samples if t >= args.minutes * 30]), 2),
        "mining_run": run_outcome,
        "serve_log_lines": len(serve_log),
        "serve_log_errors": [line for line in serve_log if " ERROR " in line or "Traceback" in line][:5],
    }
    print(json.dumps(result, indent=1, default=str))
    if args.samples_out:
        Path(args.samples_out).write_text(json.dumps({"seconds_rss_mib_fds": samples}) + "\n")
    write_section(args.name, "Bulk proxy and ingest pipeline", soak_section(result))
    return 0 if result["lost"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
