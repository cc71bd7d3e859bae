"""Bulk proxy throughput: documents/s through `bloomspan serve` vs straight into the same node.

    python -m bench.proxy_bench --url http://127.0.0.1:9200 --docs 3000 --rounds 2 --workers 2

A generated web crawl: phrases and site templates are mined (FHK, sigma 20, min_length 10)
from its first ``--mine-docs`` pages; the next ``--docs`` pages are indexed with
opensearch-py's ``helpers.bulk`` (``--chunk`` documents per request, one client thread, as a
simple crawler does; elasticsearch-py's too when it is installed and the node is Elasticsearch,
``deploy/local/opensearch.sh`` with ``BLOOMSPAN_NODE=elasticsearch``) into fresh indices of the
real node at ``--url``:

* ``direct``: straight into the node;
* ``pass-through``: through `bloomspan serve`, index not configured for cleaning (the proxy's
  own overhead);
* ``strip``: cleaned with the phrases (mode strip);
* ``strip + templates``: a second `serve` with the phrases and the site templates
  (``templates.jsonl``, ``--site-field site``): the default `mine` output;
* ``strip + emerging``: a third `serve` with ``--emerging-shingle 8``.

Every `serve` runs ``--workers`` processes on its port (SO_REUSEPORT). Rounds alternate the
targets; the best round of each is reported (the machine is shared). Every run is checked: all
documents arrive. The proxy's CPU seconds per run (all its processes, from /proc) give what a
user sizes by: MB/s of bulk body per proxy core. Prints a table and writes its figures to ``bench/results/proxy.json``.
Goal (issue 28): proxy >= 90 % of direct documents/s.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.mining_bench import machine
from bench.result_file import RESULTS_DIR, write_section

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "bench-proxy-"
TARGET = 0.90


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_serve(upstream: str, phrases: Path, extra: list[str], log: Path, workers: int) -> tuple[subprocess.Popen, str]:
    return launch_serve(["--upstream-url", upstream, "--phrases", str(phrases), "--clean-index", f"{PREFIX}clean-*",
                         "--field", "text", "--workers", str(workers), *extra], log,
                        ready=lambda proc: len(_tree(proc.pid)) >= workers)


def launch_serve(serve_args: list[str], log: Path, ready=None, log_level: str | None = None
                 ) -> tuple[subprocess.Popen, str]:
    """``bloomspan serve`` on a free port with ``serve_args`` (stderr to ``log``), once its
    ``/readyz`` answers 200 and ``ready(proc)`` holds (default: nothing more); its process and URL."""
    import requests

    port = free_port()
    cmd = [str(Path(sys.executable).with_name("bloomspan")), *(["--log-level", log_level] if log_level else []),
           "serve", "--port", str(port), *serve_args]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(log, "wb"), cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 180
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"bloomspan serve exited {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            if requests.get(url + "/readyz", timeout=2).status_code == 200 and (ready is None or ready(proc)):
                return proc, url
        except requests.RequestException:
            pass
        time.sleep(0.3)
    proc.kill()
    raise SystemExit(f"bloomspan serve did not answer within 180 s: {log.read_text()[-2000:]}")


def _tree(pid: int) -> list[int]:
    """``pid`` and its child processes (the workers)."""
    out = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            out += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its workers."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
        except OSError:
            pass
    return total


def node_is_elasticsearch(url: str) -> bool:
    """Whether the node at ``url`` is Elasticsearch (its responses name the product)."""
    import requests

    return requests.get(url + "/_cluster/health", timeout=30).headers.get("X-Elastic-Product") == "Elasticsearch"


def _clients(url: str, elasticsearch: bool = False):
    """``(name, client, helpers)`` of every client library installed (opensearch-py always;
    elasticsearch-py with ``elasticsearch``, for an Elasticsearch node: it refuses another product)."""
    from opensearchpy import OpenSearch, helpers

    out = [("opensearch-py", OpenSearch(hosts=[url], timeout=120), helpers)]
    if not elasticsearch:
        return out
    try:
        from elasticsearch import Elasticsearch, helpers as es_helpers
    except ImportError:
        return out
    out.append(("elasticsearch-py", Elasticsearch(url, request_timeout=120), es_helpers))
    return out


def one_run(node, client_name: str, via_url: str, index: str, docs: list[dict], chunk: int) -> float:
    node.indices.delete(index=index, ignore_unavailable=True)
    node.indices.create(index=index, body={"settings": {"number_of_shards": 1, "number_of_replicas": 0}})
    (client, helpers), = [(c, h) for name, c, h in _clients(via_url, client_name == "elasticsearch-py")
                          if name == client_name]
    actions = ({"_index": index, "_id": d["id"], "_source": {"text": d["text"], "site": d["site"]}} for d in docs)
    t0 = time.perf_counter()
    ok, errors = helpers.bulk(client, actions, chunk_size=chunk, max_chunk_bytes=50 * 2**20)
    seconds = time.perf_counter() - t0
    if ok != len(docs) or errors:
        raise SystemExit(f"{index}: {ok} of {len(docs)} documents indexed, errors {errors[:1]}")
    node.indices.refresh(index=index)
    if node.count(index=index)["count"] != len(docs):
        raise SystemExit(f"{index}: count mismatch")
    return seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:9200")
    ap.add_argument("--docs", type=int, default=3000)
    ap.add_argument("--mine-docs", type=int, default=3000)
    ap.add_argument("--chunk", type=int, default=500, help="documents per bulk request")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="Where proxy.json goes.")
    ap.add_argument("--workers", type=int, default=1, help="serve --workers of every proxy")
    args = ap.parse_args(argv)
    command = "python -m bench.proxy_bench " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))

    from opensearchpy import OpenSearch

    from bloomspan.corpora import default_n_sites, generate_web, write_jsonl
    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.sidecar.run.jsonl_mining import mine_jsonl
    from bloomspan.sidecar.run.run_templates import TemplateOptions

    node = OpenSearch(hosts=[args.url], timeout=120)
    node.cluster.health()  # reachable (an Elasticsearch node built from its integ-test zip answers no GET /)
    elasticsearch = node_is_elasticsearch(args.url)
    total = args.mine_docs + args.docs
    crawl = list(generate_web(total, 5, n_sites=default_n_sites(total)))
    docs = crawl[args.mine_docs:]
    mb = sum(len(json.dumps({"text": d["text"], "site": d["site"]}).encode()) for d in docs) / 1e6
    procs: dict[str, subprocess.Popen] = {}
    with tempfile.TemporaryDirectory(prefix="bloomspan-proxy-bench-") as tmp:
        tmp = Path(tmp)
        write_jsonl(iter(crawl[: args.mine_docs]), str(tmp / "mine.jsonl"))
        mined = mine_jsonl(str(tmp / "mine.jsonl"), "text", MiningConfig(sigma=20, min_length=10, engine="fhk"),
                           str(tmp / "mined"), templates=TemplateOptions(site_field="site"))
        del crawl
        phrases, templates = tmp / "mined" / "phrases.jsonl", tmp / "mined" / "templates.jsonl"
        try:
            urls = {}
            for name, file, extra in (("plain", phrases, []), ("templates", templates, ["--site-field", "site"]),
                                      ("emerging", phrases, ["--emerging-shingle", "8", "--emerging-threshold", "1000"])):
                procs[name], urls[name] = start_serve(args.url, file, extra, tmp / f"serve-{name}.log", args.workers)
            targets = {
                "direct": (None, f"{PREFIX}direct"),
                "pass-through": ("plain", f"{PREFIX}plain"),
                "strip": ("plain", f"{PREFIX}clean-a"),
                "strip + templates": ("templates", f"{PREFIX}clean-t"),
                "strip + emerging": ("emerging", f"{PREFIX}clean-e"),
            }
            clients = [name for name, _, _ in _clients(args.url, elasticsearch)]
            best: dict[tuple[str, str], tuple[float, float]] = {}  # (client, target) -> (seconds, proxy CPU s)
            for client in clients:
                for proxy, index in targets.values():  # warm-up: connections, numba, JIT caches
                    one_run(node, client, urls[proxy] if proxy else args.url, index, docs[: args.chunk], args.chunk)
                for r in range(args.rounds):
                    for name, (proxy, index) in targets.items():
                        cpu0 = cpu_seconds(procs[proxy].pid) if proxy else 0.0
                        seconds = one_run(node, client, urls[proxy] if proxy else args.url, index, docs, args.chunk)
                        cpu = (cpu_seconds(procs[proxy].pid) - cpu0) if proxy else 0.0
                        if seconds < best.get((client, name), (float("inf"), 0))[0]:
                            best[client, name] = (seconds, cpu)
                        print(f"round {r + 1} {client} {name:18s} {len(docs) / seconds:8.0f} docs/s "
                              f"proxy CPU {cpu:5.1f} s", file=sys.stderr)
        finally:
            for p in procs.values():
                p.terminate()
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
            node.indices.delete(index=f"{PREFIX}*", ignore_unavailable=True)
    load = os.getloadavg()[0]
    rows = []
    for (client, name), (seconds, cpu) in best.items():
        direct = len(docs) / best[client, "direct"][0]
        rate = len(docs) / seconds
        rows.append({"client": client, "target": name, "docs_per_s": round(rate), "mb_per_s": round(mb / seconds, 2),
                     "share_of_direct": round(rate / direct, 3), "proxy_cpu_s": round(cpu, 2),
                     "mb_per_proxy_core_s": round(mb / cpu, 2) if cpu else None})
    lines = [f"Bulk proxy throughput: {len(docs):,} web pages ({mb:.1f} MB of sources), {args.chunk} per bulk request, "
             f"{mined.phrases:,} phrases, serve --workers {args.workers}",
             f"`{command}` - {time.strftime('%Y-%m-%d %H:%M')} - {machine()} - load average {load:.1f}",
             f"One client thread; node, proxy and client share the machine. Best of {args.rounds} rounds. "
             f"Goal: proxy >= {TARGET:.0%} of direct.", "",
             "| client | target | docs/s | MB/s | share of direct | proxy CPU s | MB/s per proxy core |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        per_core = f"{row['mb_per_proxy_core_s']:.1f}" if row["mb_per_proxy_core_s"] else "-"
        lines.append(f"| {row['client']} | {row['target']} | {row['docs_per_s']:,} | {row['mb_per_s']:.1f} | "
                     f"{row['share_of_direct']:.0%} | {row['proxy_cpu_s']:.1f} | {per_core} |")
    print("\n".join(lines))
    write_section("proxy", "Bulk proxy and ingest pipeline", "\n".join(lines), results_dir=args.results_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
