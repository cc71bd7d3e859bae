"""The driver's memory in a ``mine --index … --dask`` run with the default path (site
templates) and ``--annotate``, at several corpus sizes: does it grow with the documents?

    .venv/bin/python -m bench.dask_driver_memory_bench --index-url http://127.0.0.1:9200 --docs 5000 20000

Per size: a web crawl with sites (``generate_web``) bulk-loaded into a 2-shard
``bstest-drvmem-*`` index, one ``run_mining(..., dask=local:N)`` with ``annotate=True`` and
``site_field``/``url_field``, the driver's resident memory sampled every 50 ms during the run
(peak, and growth over the RSS before it; the local scheduler lives in this process too), and
the peak of the driver's Python heap traced by ``tracemalloc`` (numpy arrays included; less noisy
than the RSS, which counts the scheduler, the page cache of the numba kernels and the allocator's
free lists), each with its growth per document between consecutive sizes: a driver independent of
the corpus grows by ~0 B per document. Tracing starts after the bulk load and before the local
workers are forked (they trace too, which slows them; only the driver's figure is read); a first run of
``--warmup-docs`` documents, not reported, loads what a process' first run loads. Every
index the bench made is deleted. Writes bench/results/dask-driver-memory.json.
"""
from __future__ import annotations

import argparse
import logging
import re
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path

from bench.distributed_bench import _PeakRSS
from bench.result_file import command_line, write_section

MIB = 1 << 20


class _MinedRunSizes(logging.Handler):
    """What the run folder's mined run held (``mined run saved: …`` of
    :mod:`bloomspan.sidecar.run.mined_run`): the phrase documents, template records and coverage
    the driver holds whole between mining and publishing."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.sizes: dict[str, int] = {}

    def emit(self, record):
        msg = record.getMessage()
        if msg.startswith("mined run saved:"):
            self.sizes = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", msg)}

    def __enter__(self):
        self._logger = logging.getLogger("bloomspan.sidecar.run.mined_run")
        self._level = self._logger.level
        self._logger.setLevel(logging.INFO)
        self._logger.addHandler(self)
        return self

    def __exit__(self, *exc):
        self._logger.removeHandler(self)
        self._logger.setLevel(self._level)


def _load(client, index: str, n_docs: int, seed: int, n_sites: int | None) -> int:
    from opensearchpy import helpers

    from bloomspan.corpora.web import generate_web

    client.indices.create(index=index, body={"settings": {"number_of_shards": 2, "number_of_replicas": 0,
                                                          "refresh_interval": "-1"}})
    docs = ({"_index": index, "_id": d["id"], "_source": {"text": d["text"], "site": d["site"], "url": d["url"]}}
            for d in generate_web(n_docs, seed=seed, n_sites=n_sites))
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
    tracemalloc.start()
    try:
        heap_base = tracemalloc.get_traced_memory()[0]
        with _PeakRSS() as rss, _MinedRunSizes() as held:
            summary = run_mining(config, dask=DaskConfig(f"local:{workers}", memory_limit="2GiB"))
        heap_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return {"seconds": time.perf_counter() - t, "tokens": summary.tokens_mined, "annotate": summary.annotate,
            "peak": rss.peak, "growth": rss.peak - rss.base, "heap_peak": heap_peak - heap_base,
            "mined": held.sizes}


def _held(sizes: dict, count: str, nbytes: str) -> str:
    return f"{sizes[count]} ({sizes[nbytes]})" if count in sizes else "—"


def main(argv=None) -> None:
    from opensearchpy import OpenSearch

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--index-url", required=True)
    p.add_argument("--docs", type=int, nargs="+", default=[5000, 20000])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--sigma", type=int, default=20)
    p.add_argument("--sigma-per-docs", type=int, default=None, metavar="N",
                   help="scale σ with the crawl: σ = --sigma × documents / N at every size (the generated crawl's "
                        "phrase count grows with its pages at one σ; scaling σ holds it about equal, so what grows "
                        "with the documents is told apart from what grows with the phrases)")
    p.add_argument("--min-length", type=int, default=10)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--sites", type=int, default=None,
                   help="sites of every crawl (default: generate_web's, which grows with the documents); a fixed "
                        "count separates what grows per site (template records) from what grows per document")
    p.add_argument("--warmup-docs", type=int, default=300,
                   help="a first run of this many documents, not reported: the process' first run loads modules "
                        "and kernels into the traced heap (0: none)")
    p.add_argument("--label", default="", help="names the result (dask-driver-memory-LABEL), e.g. before/after")
    a = p.parse_args(argv)
    client = OpenSearch(a.index_url, timeout=120)
    if a.sigma_per_docs is not None and a.sigma_per_docs < 1:
        p.error(f"--sigma-per-docs {a.sigma_per_docs}: must be a positive number of documents")

    def sigma_at(n: int) -> int:
        return a.sigma if a.sigma_per_docs is None else max(2, round(a.sigma * n / a.sigma_per_docs))

    rows = []
    for n in ([a.warmup_docs] if a.warmup_docs else []) + list(a.docs):
        prefix = f"bstest-drvmem-{uuid.uuid4().hex[:8]}-"
        try:
            loaded = _load(client, f"{prefix}src", n, a.seed, a.sites)
            with tempfile.TemporaryDirectory() as work:
                r = _run(a.index_url, prefix, Path(work), a.workers, sigma_at(n), a.min_length)
        finally:
            client.indices.delete(index=f"{prefix}*", ignore_unavailable=True)
        print(n, loaded, r, flush=True)
        rows.append((n, r))
    if a.warmup_docs:
        rows = rows[1:]
    name = f"dask-driver-memory-{a.label}" if a.label else "dask-driver-memory"
    lines = [f"## Dask driver memory (index run, templates, --annotate){' — ' + a.label if a.label else ''}", "", f"`{command_line('bench.dask_driver_memory_bench', argv)}`", "",
             f"`local:{a.workers}`, "
             f"{f'σ = {a.sigma} × documents / {a.sigma_per_docs}' if a.sigma_per_docs else f'σ = {a.sigma}'}, "
             f"L = {a.min_length}, web crawl with "
             f"{f'{a.sites} sites at every size' if a.sites else 'sites (more with more documents)'}; the driver hosts the "
             "local scheduler. RSS sampled every 50 ms during `run_mining`; heap = peak of the driver's "
             "traced Python allocations (`tracemalloc`, numpy arrays included) over its level before the run; "
             "per document = its change from the previous size divided by the documents added; the mined run's "
             "phrase documents, template records and coverage (what the driver holds whole between mining and "
             "publishing) as the run folder stores them.", "",
             "| documents | σ | tokens | wall s | driver peak RSS | driver RSS growth | RSS growth per added document "
             "| driver heap peak | heap per added document | phrases (bytes) | template records (bytes) "
             "| coverage bytes | annotated |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    prev = None
    for n, r in rows:
        m = r["mined"]
        if prev is None:
            rss_per, heap_per = "—", "—"
        else:
            added = n - prev[0]
            rss_per = f"{(r['growth'] - prev[1]['growth']) / added:.0f} B"
            heap_per = f"{(r['heap_peak'] - prev[1]['heap_peak']) / added:.1f} B"
        lines.append(f"| {n} | {sigma_at(n)} | {r['tokens']} | {r['seconds']:.1f} | {r['peak'] / MIB:.1f} MiB | "
                     f"{r['growth'] / MIB:.1f} MiB | {rss_per} | {r['heap_peak'] / MIB:.2f} MiB | {heap_per} | "
                     f"{_held(m, 'phrases', 'phrase_bytes')} | {_held(m, 'template_records', 'template_bytes')} | "
                     f"{m.get('coverage_bytes', '—')} | {r['annotate']['updated']} |")
        prev = (n, r)
    section = "\n".join(lines) + "\n"
    print(section)
    write_section(name, "Mining on Dask", section)


if __name__ == "__main__":
    main()
