"""Peak memory of `bloomspan serve` for one large `_bulk` request, against the body's size.

    python -m bench.proxy_memory_bench --url http://127.0.0.1:9200 --docs 85668

Issue 30 row 13: a 94 MB bulk of 85,668 small documents raised the proxy's peak by 6.6-8.5x
the body; the goal is at most 2x the body above the baseline. One `bloomspan serve`
subprocess (``--serve`` picks the executable, e.g. another checkout's, for a before/after in
one run), strip mode with one phrase that every document holds, on an index it cleans. After
a warm-up request the process's peak (``VmHWM``) is reset through ``/proc/<pid>/clear_refs``;
then the body is sent once with ``http.client`` (Content-Length, as clients send it) and the
new peak is read: ``peak - baseline`` over the body size is the figure. Every document is
checked to have arrived. Prints a table and, with ``--json``, writes the figures there.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.proxy_bench import free_port

ROOT = Path(__file__).resolve().parents[1]
PHRASE = "all rights reserved by acme corporation and its subsidiaries worldwide"
WORDS = [w for w in "shoes boots laptop river garden pricing review cheap summer winter travel guide news "
         "city museum recipe bread coffee market school health music video game report".split()]


def _status_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def make_body(index: str, n: int, seed: int = 7) -> bytes:
    """``n`` small documents (about 1.1 kB each, as in the issue's reproduction), each with the phrase."""
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        words = " ".join(rng.choice(WORDS) for _ in range(150))
        lines.append(json.dumps({"index": {"_index": index, "_id": str(i)}}))
        lines.append(json.dumps({"text": f"{words}. All rights reserved by ACME Corporation and its subsidiaries "
                                          f"worldwide.", "n": i}))
    return ("\n".join(lines) + "\n").encode()


def send(port: int, path: str, body: bytes) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("POST", path, body=body, headers={"Content-Type": "application/x-ndjson"})
    resp = conn.getresponse()
    payload = resp.read()
    conn.close()
    if resp.status != 200:
        raise SystemExit(f"bulk answered {resp.status}: {payload[:300]!r}")
    return json.loads(payload)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:9200")
    ap.add_argument("--docs", type=int, default=85_668)
    ap.add_argument("--serve", default=str(Path(sys.executable).with_name("bloomspan")),
                    help="the bloomspan executable to measure")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)

    from opensearchpy import OpenSearch

    node = OpenSearch(hosts=[args.url], timeout=300)
    index = "bench-proxy-mem-clean"
    node.indices.delete(index=index, ignore_unavailable=True)
    node.indices.create(index=index, body={"settings": {"number_of_shards": 1, "number_of_replicas": 0,
                                                        "refresh_interval": "-1"}})
    body = make_body(index, args.docs)
    warm = make_body(index, 200, seed=1)
    with tempfile.TemporaryDirectory(prefix="bloomspan-proxy-mem-") as tmp:
        phrases = Path(tmp) / "phrases.jsonl"
        phrases.write_text(json.dumps({"text": PHRASE, "tokens": PHRASE.split(), "length": len(PHRASE.split()),
                                       "df": 50}) + "\n")
        port = free_port()
        log = open(Path(tmp) / "serve.log", "wb")
        proc = subprocess.Popen([args.serve, "serve", "--port", str(port), "--upstream-url", args.url,
                                 "--phrases", str(phrases), "--clean-index", "bench-proxy-mem-*",
                                 "--max-body-bytes", "200mb"], stdout=subprocess.DEVNULL, stderr=log, cwd=ROOT)
        try:
            deadline = time.time() + 180
            while True:
                try:
                    c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                    c.request("GET", "/readyz")
                    if c.getresponse().status == 200:
                        break
                except OSError:
                    pass
                if proc.poll() is not None or time.time() > deadline:
                    raise SystemExit(f"serve did not become ready: {(Path(tmp) / 'serve.log').read_text()[-1500:]}")
                time.sleep(0.5)
            send(port, "/_bulk", warm)
            time.sleep(1)
            with open(f"/proc/{proc.pid}/clear_refs", "w") as f:
                f.write("5")  # resets VmHWM to the current RSS
            baseline = _status_kb(proc.pid, "VmRSS") * 1024
            t0 = time.perf_counter()
            answer = send(port, "/_bulk", body)
            seconds = time.perf_counter() - t0
            peak = _status_kb(proc.pid, "VmHWM") * 1024
        finally:
            proc.terminate()
            proc.wait(30)
    node.indices.refresh(index=index)
    count = node.count(index=index)["count"]
    node.indices.delete(index=index, ignore_unavailable=True)
    if answer.get("errors") or count != args.docs:
        raise SystemExit(f"{count} of {args.docs} documents arrived (errors: {answer.get('errors')})")
    over = (peak - baseline) / len(body)
    figures = {"serve": args.serve, "documents": args.docs, "body_bytes": len(body), "baseline_rss_bytes": baseline,
               "peak_rss_bytes": peak, "peak_over_baseline_per_body_byte": round(over, 2), "seconds": round(seconds, 2),
               "load_average": os.getloadavg()[0], "date": time.strftime("%Y-%m-%d %H:%M")}
    print(f"| {args.serve} | {len(body) / 2**20:.1f} MiB, {args.docs:,} docs | baseline {baseline / 2**20:.0f} MiB | "
          f"peak {peak / 2**20:.0f} MiB | +{(peak - baseline) / 2**20:.0f} MiB = {over:.2f}x the body | "
          f"{seconds:.1f} s |")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
