"""A cluster restart in the middle of ``mine --index``: the node is stopped while the run
scans (its points in time or scroll contexts die with it) and started again; the run must
go on with new ones and publish what a from-scratch run publishes.

One trial: a source index of generated web pages; a reference run from scratch into one
template index; then the same run into another, paused (SIGSTOP) once it has read
``--at`` of the documents, the node stopped and the run let go (it meets a closed port),
the node started again after ``--down`` seconds. If the run gives up, it is rerun with the
same work dir (it resumes from its checkpoint), at most ``--reruns`` times. The two
publications are compared (phrases, doc map, run counts and report; run ids and timings
differ between equal runs).

    nice .venv/bin/python -m bench.cluster_restart_bench --node-port 9243 --node-root /tmp/nodes-x
    BLOOMSPAN_NODE=elasticsearch BLOOMSPAN_ES_VERSION=8.17.0 nice .venv/bin/python -m \\
        bench.cluster_restart_bench --node-port 9353 --node-root /tmp/nodes-x

Loopback only; it restarts the node through ``deploy/local/opensearch.sh`` with the given
port and root (the node's data stays), and deletes the indices it created.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from opensearchpy import helpers

from bench.published_run import published
from bench.result_file import ROOT
from bloomspan.corpora.web import generate_web
from bloomspan.sidecar.cluster.connection import ClusterConfig
from bloomspan.sidecar.cluster.engine import engine_of

NODE_SCRIPT = ROOT / "deploy" / "local" / "opensearch.sh"
def node(action: str, port: int, root: str) -> float:
    """Run the node script's ``action`` (start/stop) on this port and root; its seconds."""
    t0 = time.monotonic()
    env = {"BLOOMSPAN_START_TIMEOUT": "600", **os.environ, "BLOOMSPAN_NODE_PORT": str(port), "BLOOMSPAN_NODE_ROOT": root}
    subprocess.run([str(NODE_SCRIPT), action], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - t0


def mine_command(url: str, args, src: str, template_index: str, lease: str, work: Path) -> list[str]:
    return [sys.executable, "-m", "bloomspan.sidecar.cli.cluster", "mine", "--url", url, "--index", src,
            "--template-index", template_index, "--lease-index", lease, "--work-dir", str(work),
            "--sigma", "5", "--min-length", "5", "--batch-size", str(args.batch_size), "--slices", "2",
            "--checkpoint-seconds", "0", "--pit-keep-alive", "1m", "--scan-mode", args.scan_mode,
            "--outage-seconds", str(args.outage_seconds),
            "--progress", "lines", "--no-report", "--json"]


def interrupted_run(cmd: list[str], args, log_path: Path) -> dict:
    """Run ``cmd``; at ``args.at`` of the scan pause it, stop the node, let it go on, start
    the node ``args.down`` seconds later. Returns what happened."""
    out = {"paused_at": None, "stop_s": None, "start_s": None, "exit": None}
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            for line in proc.stderr:
                log.write(line)
                parts = line.split()
                if out["paused_at"] is None and len(parts) >= 3 and parts[:2] == ["bloomspan:", "scan"]:
                    done, _, total = parts[2].partition("/")
                    if total and int(done) >= args.at * int(total):
                        proc.send_signal(signal.SIGSTOP)
                        out["paused_at"] = f"{done}/{total}"
                        out["stop_s"] = round(node("stop", args.node_port, args.node_root), 1)
                        proc.send_signal(signal.SIGCONT)
                        time.sleep(args.down)
                        out["start_s"] = round(node("start", args.node_port, args.node_root), 1)
            out["stdout"] = proc.stdout.read()
            out["exit"] = proc.wait(timeout=args.timeout)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    lines = log_path.read_text().splitlines()
    out["last_line"] = lines[-1] if lines else ""
    out["wait_lines"] = [line for line in lines if "waiting up to" in line]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--node-port", type=int, required=True)
    ap.add_argument("--node-root", required=True)
    ap.add_argument("--docs", type=int, default=3000)
    ap.add_argument("--batch-size", type=int, default=20)
    ap.add_argument("--at", type=float, default=0.3, help="share of the scan read before the restart")
    ap.add_argument("--down", type=float, default=5.0, help="seconds the node stays down")
    ap.add_argument("--reruns", type=int, default=3)
    ap.add_argument("--outage-seconds", type=float, default=600.0,
                    help="mine's --outage-seconds (0: the run stops at the restart and is rerun)")
    ap.add_argument("--scan-mode", default="auto", choices=("auto", "pit", "scroll"))
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--json-out", help="write the outcome as JSON here")
    args = ap.parse_args(argv)
    url = f"http://127.0.0.1:{args.node_port}"
    client = ClusterConfig(url=url, timeout=60).checked_client()  # speaks OpenSearch and Elasticsearch
    prefix = f"bloomspan-restart-{os.getpid()}-"
    src, ref, tpl, lease = (prefix + s for s in ("src", "ref", "tpl", "lease"))
    result: dict = {"node": engine_of(client).name, "docs": args.docs, "scan_mode": args.scan_mode}
    try:
        client.indices.create(index=src, body={"settings": {"number_of_shards": 2, "number_of_replicas": 0}})
        docs = generate_web(args.docs, seed=3, n_sites=10)
        helpers.bulk(client, ({"_index": src, "_id": d["id"], "_source": {"text": d["text"], "site": d["site"]}}
                              for d in docs), refresh=True)
        with tempfile.TemporaryDirectory(prefix="bloomspan-restart-") as tmp:
            work = Path(tmp)
            t0 = time.monotonic()
            done = subprocess.run(mine_command(url, args, src, ref, lease, work / "ref"), capture_output=True,
                                  text=True, timeout=args.timeout)
            if done.returncode:
                print(done.stderr[-2000:], file=sys.stderr)
                return 1
            result["reference_s"] = round(time.monotonic() - t0, 1)
            cmd = mine_command(url, args, src, tpl, lease, work / "run")
            attempts = [interrupted_run(cmd, args, work / "attempt-0.log")]
            while attempts[-1]["exit"] != 0 and len(attempts) <= args.reruns:
                rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
                attempts.append({"exit": rerun.returncode, "stdout": rerun.stdout,
                                 "last_line": (rerun.stderr.splitlines() or [""])[-1]})
            final = attempts[-1]
            summary = json.loads(final["stdout"]) if final["exit"] == 0 and final["stdout"].strip() else {}
            result["attempts"] = [{k: v for k, v in a.items() if k != "stdout"} for a in attempts]
            result["resumed"] = summary.get("resumed")
            result["identical"] = final["exit"] == 0 and published(client, tpl) == published(client, ref)
    finally:
        for index in (src, lease):
            client.indices.delete(index=index, ignore_unavailable=True)
        for alias in (ref, tpl):
            client.indices.delete(index=f"{alias}-*", ignore_unavailable=True)
    print(json.dumps(result, indent=1))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=1) + "\n")
    return 0 if result["identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
