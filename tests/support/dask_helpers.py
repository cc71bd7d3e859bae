"""Shared pieces of the distributed-mining tests: Dask clusters (a LocalCluster of worker
processes, an external ``dask scheduler`` + ``dask worker`` pair) and seeded corpora with
planted, nested and document-boundary repeats."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

WORKER_MEMORY = "1GiB"  # explicit: the machine is shared


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def local_cluster(n_workers: int = 2):
    from distributed import LocalCluster

    return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, memory_limit=WORKER_MEMORY,
                        dashboard_address=":0", host="127.0.0.1")


class ExternalCluster:
    """``dask scheduler`` and one ``dask worker`` started as subprocesses; stopped on exit."""

    def __init__(self, n_workers: int = 1):
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.n_workers = n_workers
        self.procs: list[subprocess.Popen] = []

    def __enter__(self) -> ExternalCluster:
        dask = str(Path(sys.executable).with_name("dask"))
        env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
        self.procs.append(subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(self.port),
                                            "--no-dashboard"], env=env, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL))
        self.procs.append(subprocess.Popen([dask, "worker", self.address, "--nworkers", str(self.n_workers),
                                            "--nthreads", "1", "--memory-limit", WORKER_MEMORY, "--no-dashboard"],
                                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from distributed import Client

        deadline = time.monotonic() + 60
        while True:
            try:
                with Client(self.address, timeout="5s") as c:
                    c.wait_for_workers(self.n_workers, timeout=30)
                break
            except (OSError, TimeoutError):
                if time.monotonic() > deadline:
                    self.__exit__()
                    raise
                time.sleep(0.5)
        return self

    def __exit__(self, *exc) -> None:
        for p in reversed(self.procs):
            p.terminate()
        for p in reversed(self.procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def planted_docs(seed: int, n_docs: int, vocab: int = 400, doc_len=(30, 120)) -> list[dict]:
    """Documents of random words with planted phrases: a long one, a phrase nested inside
    it, one overlapping its end, and one placed at the very start or end of documents."""
    rng = np.random.default_rng(seed)
    word = lambda i: f"w{i}"  # noqa: E731
    base = [f"tpl{i}" for i in rng.integers(0, 60, 30)]
    phrases = [base, base[4:16], base[18:] + ["tail", "x"], [f"edge{i}" for i in range(14)]]
    docs = []
    for d in range(n_docs):
        words = [word(i) for i in rng.integers(0, vocab, int(rng.integers(*doc_len)))]
        for k, p in enumerate(phrases):
            if rng.random() < 0.4:
                at = int(rng.integers(0, len(words) + 1))
                if k == 3:
                    at = 0 if rng.random() < 0.5 else len(words)
                words[at:at] = p
        sep = [" ", ", ", ". ", "\n"]
        text = "".join(w + sep[int(rng.integers(0, 4))] for w in words)
        docs.append({"id": f"d{seed}-{d:05d}", "text": text.capitalize()})
    return docs


def write_jsonl(path: Path, docs: list[dict], blank_every: int = 0) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for i, d in enumerate(docs):
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
            if blank_every and i % blank_every == 0:
                f.write("\n")


def comparable_report(report: dict) -> dict:
    """A report.json without what differs between equal runs: timings and engine stats."""
    return {k: v for k, v in report.items() if k != "stats" and not k.startswith(("seconds_", "ns_per_token_"))}
