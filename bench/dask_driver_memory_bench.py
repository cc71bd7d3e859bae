"""The driver's memory in a ``mine --index … --dask`` run with the default path (site
templates) and ``--annotate``, at several corpus sizes: does it grow with the documents?

    .venv/bin/python -m bench.dask_driver_memory_bench --index-url http://127.0.0.1:9200 --docs 5000 20000

Per size: a web crawl with sites (``generate_web``) bulk-loaded into a 2-shard
``bstest-drvmem-*`` index, one ``run_mining(..., dask=local:N)`` with ``annotate=True`` and
``site_field``/``url_field``, the driver's resident memory sampled every 50 ms during the run
(peak, and growth over the RSS before it; the local scheduler lives in this process too), and
per document. Every index the bench made is deleted. Writes bench/results/dask-driver-memory.json.
"""
from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from pathlib import Path

from bench.distributed_bench import _PeakRSS
from bench.result_file import command_line, write_section

MIB = 1 << 20


def _load(client, index: str, n_docs: int, seed: int) -> int:
    from opensearchpy import helpers

    from bloomspan.corpora.web import generate_web

    client.indices.create(index=index, body={"settings": {"number_of_shards": 2, "number_of_replicas": 0,
                                                          "refresh_interval": "-1"}})
    docs = ({"_index": index, "_id": d["id"], "_source": {"text": d["text"], "site": d["site"], "url": d["url"]}}
            for d in generate_web(n_docs, seed=seed))
    ok = sum(1 for ok, _ in helpers.parallel_bulk(client, docs, thread_count=2, chunk_size=500) if ok)
    client.indices.refresh(index=index)
    return ok


def _run(url: str, prefix: str, work: Path, workers: int, sigma: int, min_length: int) -> dict:
    from bloomspan.sidecar.distributed.cluster import DaskConfig
    from bloomspan.sidecar.run.mining_run import MineConfig, run_mining

    config = MineConfig.from_flags(index=f"{prefix}src", url=url, template_index=f"{prefix}tpl", work_dir=str(work),
                        lease_index=f"{prefix}lease", sigma=sigma, min_length=min_length, site_field="site",
                        url_field="url", annotate=True)
    t = time.perf_counter()
    with _PeakRSS() as rss:
        summary = run_mining(config, dask=DaskConfig(f"local:{workers}", memory_limit="2GiB"))
    return {"seconds": time.perf_counter() - t, "tokens": summary.tokens_mined, "annotate": summary.annotate,
            "peak": rss.peak, "growth": rss.peak - rss.base}


def main(argv=None) -> None:
    from opensearchpy import OpenSearch

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--index-url", required=True)
    p.add_argument("--docs", type=int, nargs="+", default=[5000, 20000])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--sigma", type=int, default=20)
    p.add_argument("--min-length", type=int, default=10)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    client = OpenSearch(a.index_url, timeout=120)
    rows = []
    for n in a.docs:
        prefix = f"bstest-drvmem-{uuid.uuid4().hex[:8]}-"
        try:
            loaded = _load(client, f"{prefix}src", n, a.seed)
            with tempfile.TemporaryDirectory() as work:
                r = _run(a.index_url, prefix, Path(work), a.workers, a.sigma, a.min_length)
        finally:
            client.indices.delete(index=f"{prefix}*", ignore_unavailable=True)
        print(n, loaded, r, flush=True)
        rows.append((n, r))
    lines = ["## Dask driver memory (index run, templates, --annotate)", "", f"`{command_line()}`", "",
             f"`local:{a.workers}`, σ = {a.sigma}, L = {a.min_length}, web crawl with sites; the driver hosts the "
             "local scheduler. RSS sampled every 50 ms during `run_mining`.", "",
             "| documents | tokens | wall s | driver peak RSS | driver RSS growth | growth per document | annotated |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for n, r in rows:
        lines.append(f"| {n} | {r['tokens']} | {r['seconds']:.1f} | {r['peak'] / MIB:.1f} MiB | "
                     f"{r['growth'] / MIB:.1f} MiB | {r['growth'] / n:.0f} B | {r['annotate']['updated']} |")
    section = "\n".join(lines) + "\n"
    print(section)
    write_section("dask-driver-memory", "Mining on Dask", section)


if __name__ == "__main__":
    main()
