"""Issue 30 row 13: the proxy's peak memory for one large `_bulk` stays within 2x the body above
its baseline (it was 6.6-8.5x: the body was joined from chunks, parsed into objects four times,
rewritten into a second copy, and the rounds' garbage stayed in one malloc arena per thread).

A real `bloomspan serve` process in strip mode, every document holding the phrase (so every
source is rewritten); its peak (``VmHWM``) is reset through ``/proc/<pid>/clear_refs`` after a
warm-up request, then one bulk of about 33 MB is sent with its Content-Length.
"""
from __future__ import annotations

import http.client
import json
import random
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.support.service_thread import free_port

PHRASE = "all rights reserved by acme corporation and its subsidiaries worldwide"
WORDS = "shoes boots laptop river garden pricing review travel guide news city museum recipe bread coffee".split()


def _body(index: str, n: int) -> bytes:
    rng = random.Random(n)
    lines = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(150)) + ". All rights reserved by ACME Corporation and " \
                                                                 "its subsidiaries worldwide."
        lines += [json.dumps({"index": {"_index": index, "_id": str(i)}}), json.dumps({"text": text, "n": i})]
    return ("\n".join(lines) + "\n").encode()


def _post(port: int, body: bytes) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("POST", "/_bulk", body=body, headers={"Content-Type": "application/x-ndjson"})
    resp = conn.getresponse()
    answer = json.loads(resp.read())
    conn.close()
    assert resp.status == 200, answer
    return answer


def _kib(pid: int, key: str) -> int:
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith(key + ":"))
    return int(line.split()[1])


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc/<pid>/clear_refs")
def test_a_large_bulk_costs_at_most_twice_its_size(opensearch_url, os_client, tmp_path):
    index = f"bstest-mem-{uuid.uuid4().hex[:8]}-clean"
    os_client.indices.create(index=index, body={"settings": {"number_of_replicas": 0, "refresh_interval": "-1"}})
    phrases = tmp_path / "phrases.jsonl"
    phrases.write_text(json.dumps({"text": PHRASE, "tokens": PHRASE.split(), "length": len(PHRASE.split()),
                                   "df": 50}) + "\n")
    port = free_port()
    proc = subprocess.Popen([str(Path(sys.executable).with_name("bloomspan")), "serve", "--port", str(port),
                             "--upstream-url", opensearch_url, "--phrases", str(phrases), "--clean-index",
                             "bstest-mem-*"], stdout=subprocess.DEVNULL, stderr=open(tmp_path / "serve.log", "wb"))
    try:
        deadline = time.time() + 180
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/readyz")
                if conn.getresponse().status == 200:
                    break
            except OSError:
                pass
            assert proc.poll() is None and time.time() < deadline, (tmp_path / "serve.log").read_text()[-2000:]
            time.sleep(0.5)
        _post(port, _body(index, 300))
        body = _body(index, 30_000)
        time.sleep(1)
        Path(f"/proc/{proc.pid}/clear_refs").write_text("5")
        baseline = _kib(proc.pid, "VmRSS") * 1024
        answer = _post(port, body)
        peak = _kib(proc.pid, "VmHWM") * 1024
    finally:
        proc.terminate()
        proc.wait(30)
        os_client.indices.refresh(index=index)
        count = os_client.count(index=index)["count"]
        last = os_client.get(index=index, id="29999")["_source"]["text"] if count else ""
        os_client.indices.delete(index=index, ignore_unavailable=True)
    assert not answer["errors"] and count == 30_000
    assert last and "ACME" not in last  # every source went through the rewrite
    assert peak - baseline <= 2 * len(body), f"peak {peak - baseline} bytes above the baseline for a {len(body)}-byte body"
