"""A re-run after a 1 % change against a full run, one process and ``--dask local:2``, whole commands.

    .venv/bin/python -m bench.incremental_rerun_bench --docs 8000 --url http://127.0.0.1:9241

A generated web crawl (``bloomspan corpus web``) is indexed into a fresh index of the node at
``--url`` (3 shards). Each executor mines it in full (``mine --index … --site-field site
--url-field url --full``, the default path, templates included), then, after ``--change`` of the
documents changed in one bulk (half rewritten, a quarter added, a quarter deleted), mines it again
from the same work directory: an incremental run, which lists every document and fetches only the
changed ones. CPU is the rusage of the command and every process it waited for (local workers
are its children), as in :mod:`bench.dask_cost_bench`. The two re-runs must publish the same
phrases, doc map and run document as a from-scratch run after the change (checked here), so the
figures compare equal outputs.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from opensearchpy import helpers

from bench.dask_cost_bench import run_command
from bench.published_run import published
from bench.result_file import command_line, write_section
from bloomspan.sidecar.cluster.connection import ClusterConfig


def _bloomspan() -> str:
    return str(Path(sys.executable).with_name("bloomspan"))


def _tag(workers: int | None) -> str:
    return "single" if workers is None else f"dask{workers}"


def _index_crawl(client, index: str, path: Path) -> list[dict]:
    docs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if client.indices.exists(index=index):
        client.indices.delete(index=index)
    client.indices.create(index=index, body={"settings": {"number_of_shards": 3, "number_of_replicas": 0}})
    helpers.bulk(client, ({"_index": index, "_id": d["id"], "_source": {k: v for k, v in d.items() if k != "id"}}
                          for d in docs), refresh=True, chunk_size=500)
    return docs


def _change(client, index: str, docs: list[dict], share: float) -> int:
    """Change ``share`` of the documents in one bulk: half rewritten, a quarter added (copies
    of existing pages under new ids), a quarter deleted; returns the documents changed."""
    n = max(4, round(len(docs) * share))
    step = max(1, len(docs) // n)
    picked = docs[::step][:n]
    actions = []
    for k, d in enumerate(picked):
        src = {key: v for key, v in d.items() if key != "id"}
        if k % 4 in (0, 1):
            actions.append({"_index": index, "_id": d["id"], "_source": {**src, "text": src["text"] + f"\nedited {k}"}})
        elif k % 4 == 2:
            actions.append({"_index": index, "_id": f"{d['id']}-copy", "_source": src})
        else:
            actions.append({"_op_type": "delete", "_index": index, "_id": d["id"]})
    helpers.bulk(client, actions, refresh=True)
    return len(picked)


def _mine(url: str, index: str, alias: str, work: Path, workers: int | None, a, full: bool) -> dict:
    args = [_bloomspan(), "mine", "--index", index, "--url", url, "--template-index", alias, "--work-dir", str(work),
            "--lease-index", f"{alias}-lease", "--sigma", str(a.sigma), "--min-length", str(a.min_length),
            "--site-field", "site", "--url-field", "url", "--progress", "none"]
    if full:
        args.append("--full")
    if workers:
        args += ["--dask", f"local:{workers}", "--dask-memory-limit", a.memory_limit]
    r = run_command(args)
    r["load"] = os.getloadavg()[0]
    return r


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default=os.environ.get("OPENSEARCH_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--docs", type=int, default=8000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--change", type=float, default=0.01, help="share of the documents changed before the re-run")
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--min-length", type=int, default=10)
    ap.add_argument("--memory-limit", default="3GiB", help="--dask-memory-limit of every local worker")
    ap.add_argument("--prefix", default="bench-incr-")
    a = ap.parse_args(argv)
    client = ClusterConfig(url=a.url).checked_client()
    index = f"{a.prefix}src"
    executors = {"single process": None, "`--dask local:2`": 2}
    rows: dict = {}
    with tempfile.TemporaryDirectory(prefix="bloomspan-incr-bench-") as tmp:
        work = Path(tmp)
        crawl = work / "web.jsonl"
        run_command([_bloomspan(), "corpus", "web", "--docs", str(a.docs), "--seed", str(a.seed), "--out", str(crawl)])
        docs = _index_crawl(client, index, crawl)
        for n in executors.values():  # numba caches and the node's caches warm for every timed run
            _mine(a.url, index, f"{a.prefix}warm", work / f"warm-{_tag(n)}", n, a, full=True)
        for name, n in executors.items():
            rows[name] = {"full": _mine(a.url, index, f"{a.prefix}{_tag(n)}", work / f"w-{_tag(n)}", n, a, full=True)}
            print(json.dumps({name: rows[name]}), file=sys.stderr)
        changed = _change(client, index, docs, a.change)
        time.sleep(1)
        for name, n in executors.items():
            rows[name]["rerun"] = _mine(a.url, index, f"{a.prefix}{_tag(n)}", work / f"w-{_tag(n)}", n, a, full=False)
            print(json.dumps({name: rows[name]}), file=sys.stderr)
        _mine(a.url, index, f"{a.prefix}scratch", work / "scratch", None, a, full=True)
        want = published(client, f"{a.prefix}scratch")
        for n in executors.values():
            got = published(client, f"{a.prefix}{_tag(n)}")
            for part in ("phrases", "doc_ids", "run"):
                if got[part] != want[part]:
                    raise SystemExit(f"the re-run of {n or 'one process'} published other {part} than a full run")
    lines = [f"{a.docs:,} generated web pages in 3 shards, the default path (--site-field site --url-field url, "
             f"templates), sigma={a.sigma}, min_length={a.min_length}; {changed} documents ({a.change:.0%}) changed "
             "before the re-run (half rewritten, a quarter added, a quarter deleted); both re-runs published the "
             "phrases, doc map and run document of a from-scratch run after the change",
             "", "| executor | full: wall s | full: CPU s | re-run: wall s | re-run: CPU s | re-run wall / full | "
             "re-run CPU / full | load avg |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, r in rows.items():
        f, i = r["full"], r["rerun"]
        lines.append(f"| {name} | {f['wall']:.1f} | {f['cpu']:.1f} | {i['wall']:.1f} | {i['cpu']:.1f} | "
                     f"{i['wall'] / f['wall']:.2f}× | {i['cpu'] / f['cpu']:.2f}× | {i['load']:.1f} |")
    text = "\n".join(lines)
    print(text)
    write_section("incremental-rerun", "Mining on Dask",
                  f"### A re-run after a 1 % change against a full run\n`{command_line('bench.incremental_rerun_bench', argv)}`"
                  f"\n\n{text}")


if __name__ == "__main__":
    main()
