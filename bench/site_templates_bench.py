"""The template detector on Dask workers against the single process, on the generated web crawl.

    .venv/bin/python -m bench.site_templates_bench --docs 12000 --sites 120 --workers 2

Generates the crawl (``bloomspan corpus web``, with its site and URL fields), runs the single
process' detector (``detect_run_templates`` on the whole corpus, the exact phrases' coverage
from one exact mining run) and the Dask stage on a fresh LocalCluster (JSON Lines byte-range
shards read with the template fields, the exact covered counts from ``mine_shards``), checks
that the records and stats (but timings) are equal, and prints per run: wall seconds of the
template stage, the bytes the workers sent each other during it per corpus token (Dask's
counter), the routed parts' own bytes per token and those of them that had to cross to another
worker, and each partition's pages, tokens, sites and worker.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=12000)
    ap.add_argument("--sites", type=int, default=120)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--ranges", type=int, default=4)
    ap.add_argument("--partitions", type=int, default=None)
    ap.add_argument("--memory", default="2GiB", help="memory limit per worker")
    args = ap.parse_args(argv)

    import numpy as np
    from distributed import Client, LocalCluster

    from bloomspan.corpora.web import generate_web
    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.engine.mining.engines import mine
    from bloomspan.engine.templates.blocks import block_offsets_from_flags
    from bloomspan.engine.text.tokenizer import encode_batch
    from bloomspan.engine.text.vocabulary import Vocabulary
    from bloomspan.sidecar.distributed.cluster import ProgressRelay
    from bloomspan.sidecar.distributed.doc_layout import contiguous_layout
    from bloomspan.sidecar.distributed.pipeline import mine_shards, shard_homes
    from bloomspan.sidecar.distributed.shards import byte_ranges, read_jsonl_range
    from bloomspan.sidecar.distributed.site_templates import detect_templates_on_dask
    from bloomspan.sidecar.run.run_templates import TemplateOptions, detect_run_templates

    options = TemplateOptions(site_field="site", url_field="url")
    mining = MiningConfig(sigma=20, min_length=10)
    folder = Path(tempfile.mkdtemp(prefix="bloomspan-sitebench-"))
    path = folder / "web.jsonl"
    docs = list(generate_web(args.docs, seed=args.seed, n_sites=args.sites))
    with open(path, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({"id": d["id"], "text": d["text"], "site": d["site"], "url": d["url"]}) + "\n")
    texts = [d["text"] for d in docs]
    vocab = Vocabulary()
    tokens, offsets, lines = encode_batch(texts, vocab, count_df=False, with_lines=True)
    exact = mine(tokens, offsets, mining).coverage
    t0 = time.perf_counter()
    c0 = os.times()
    single_records, single_stats = detect_run_templates(
        tokens, offsets, block_offsets_from_flags(lines.view(np.bool_), offsets), vocab,
        [d["site"] for d in docs], [d["url"] for d in docs], options, exact)
    single_wall = time.perf_counter() - t0
    single_cpu = sum(os.times()[:2]) - sum(c0[:2])
    n_tokens = int(tokens.shape[0])
    del docs, texts, tokens, lines, exact

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, memory_limit=args.memory,
                      dashboard_address=":0", host="127.0.0.1") as cluster, Client(cluster) as client:
        shards = [client.submit(read_jsonl_range, str(path), a, b, "text", "id", k, options.fields,
                                key=f"bench-read-{k}") for k, (a, b) in enumerate(byte_ranges(str(path), args.ranges))]
        relay = ProgressRelay(None)
        result = mine_shards(client, shards, lambda headers: contiguous_layout(client, shards, headers, "bench"),
                             mining, relay, global_ids=True, run="bench")
        homes = shard_homes(client, shards)
        records, stats, stage = detect_templates_on_dask(client, shards, homes, options, result.layout.global_docs,
                                                         result.covers, relay, run="bench",
                                                         n_partitions=args.partitions)
        records = list(records)  # streamed from the workers: read while the client is open

    def timeless(v):
        return {k: timeless(x) for k, x in v.items() if not k.startswith("seconds")} if isinstance(v, dict) else v

    same = records == single_records and timeless(stats) == timeless({k: v for k, v in single_stats.items()})
    out = {"docs": args.docs, "sites": args.sites, "tokens": n_tokens, "workers": args.workers,
           "identical": same, "records": len(records), "single_wall_s": round(single_wall, 2),
           "single_cpu_s": round(single_cpu, 2), "dask_stage_wall_s": round(stage.seconds, 2),
           "bytes_sent_per_token": round(stage.bytes_sent_per_token, 3),
           "parts_bytes_per_token": round(stage.parts_bytes / n_tokens, 3),
           "crossing_bytes_per_token": round(stage.crossing_bytes / n_tokens, 3),
           "largest_site_share": round(stage.largest_site_share, 4), "partitions": stage.partitions,
           "load_average": os.getloadavg()}
    print(json.dumps(out))
    if not same:
        raise SystemExit("the Dask stage's records or stats differ from the single process'")


if __name__ == "__main__":
    main()
