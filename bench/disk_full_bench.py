"""Disk full in the work dir of ``mine --index``, on a real file system: a small tmpfs
(``--size-kib``, mounted by this script, which needs root or CAP_SYS_ADMIN) holds the work
dir, so the run meets ENOSPC where it happens to write. The run must stop with one line
naming the directory; the tmpfs is then grown in place (``mount -o remount,size=...``: the
files written so far stay, as when an operator frees space) and the same command must
resume and publish what a from-scratch run publishes.

    nice .venv/bin/python -m bench.disk_full_bench --url http://127.0.0.1:9243

Without the right to mount, it says so and exits 2 (the integration test
tests/integration/sidecar/run/test_work_dir_full.py covers the message and the resume with
a write budget instead). Loopback only; it unmounts the tmpfs and deletes its indices.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from opensearchpy import helpers

from bench.cluster_restart_bench import publication
from bloomspan.corpora.web import generate_web
from bloomspan.sidecar.cluster.connection import ClusterConfig


def mine(url: str, src: str, template_index: str, lease: str, work: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bloomspan.sidecar.cli.cluster", "mine", "--url", url, "--index", src,
                           "--template-index", template_index, "--lease-index", lease, "--work-dir", str(work),
                           "--sigma", "5", "--min-length", "5", "--batch-size", "100", "--checkpoint-seconds", "0",
                           "--progress", "none", "--no-report", "--json"], capture_output=True, text=True, timeout=600)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--size-kib", type=int, default=1024, help="the tmpfs's size while the run fills it")
    ap.add_argument("--json-out")
    args = ap.parse_args(argv)
    client = ClusterConfig(url=args.url, timeout=60).checked_client()  # speaks OpenSearch and Elasticsearch
    prefix = f"bloomspan-diskfull-{os.getpid()}-"
    src, ref, tpl, lease = (prefix + s for s in ("src", "ref", "tpl", "lease"))
    mount_point = Path(tempfile.mkdtemp(prefix="bloomspan-diskfull-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={args.size_kib}k", "tmpfs", str(mount_point)],
                             capture_output=True, text=True)
    if mounted.returncode:
        print(f"cannot mount a tmpfs on {mount_point} ({mounted.stderr.strip()}): run as root", file=sys.stderr)
        mount_point.rmdir()
        return 2
    result: dict = {"docs": args.docs, "tmpfs_kib": args.size_kib}
    try:
        client.indices.create(index=src, body={"settings": {"number_of_shards": 2, "number_of_replicas": 0}})
        helpers.bulk(client, ({"_index": src, "_id": d["id"], "_source": {"text": d["text"]}}
                              for d in generate_web(args.docs, seed=3, n_sites=10)), refresh=True)
        with tempfile.TemporaryDirectory(prefix="bloomspan-diskfull-ref-") as tmp:
            done = mine(args.url, src, ref, lease, Path(tmp))
            assert done.returncode == 0, done.stderr[-2000:]
        work = mount_point / "work"
        full = mine(args.url, src, tpl, lease, work)
        err_lines = full.stderr.strip().splitlines()
        result["full"] = {"exit": full.returncode, "stderr_lines": len(err_lines),
                          "line": err_lines[-1] if err_lines else "", "names_dir": str(work) in full.stderr}
        subprocess.run(["mount", "-o", "remount,size=256m", str(mount_point)], check=True)
        again = mine(args.url, src, tpl, lease, work)
        summary = json.loads(again.stdout) if again.returncode == 0 else {}
        result["rerun"] = {"exit": again.returncode, "resumed": summary.get("resumed")}
        result["identical"] = again.returncode == 0 and publication(client, tpl) == publication(client, ref)
    finally:
        subprocess.run(["umount", str(mount_point)], check=False)
        mount_point.rmdir()
        for index in (src, lease, f"{ref}-*", f"{tpl}-*"):
            client.indices.delete(index=index, ignore_unavailable=True)
    print(json.dumps(result, indent=1))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=1) + "\n")
    ok = result["identical"] and result["full"]["exit"] == 1 and result["full"]["stderr_lines"] == 1
    return 0 if ok and result["full"]["names_dir"] else 1


if __name__ == "__main__":
    sys.exit(main())
