"""Mining time, peak memory and stage split as the corpus grows, with the log-log slope.

    python -m bench.scaling_bench --store /var/tmp/bstest-core/web-1B --points 10M,100M,250M \
        --replicas 4 --fhk-max 100M --work /var/tmp/bstest-core

Points are prefixes of one store written by :mod:`bench.web_store_writer` (a prefix of
the generated crawl is the same crawl, smaller). ``--replicas K`` adds a point of K copies
of the whole store with disjoint vocabularies (copy k's token t becomes t + k * V): K
independent crawls of the same shape, for a size the generator cannot reach in the time
at hand; its slope says how the miner, not the corpus, scales. Each run is a
``bench.mine_worker`` process (compiled first; wall and CPU seconds; peak RSS = VmHWM,
the memory-mapped tokens included). FHK runs up to ``--fhk-max`` tokens.
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np

from bench.mining_bench import ROOT, parse_count
from bench.result_file import command_line, write_section

STAGES = ("word_filter", "counting_filter", "candidates", "seeds", "grow", "maximal", "coverage")


def write_replicas(store_dir: Path, copies: int, out: Path) -> Path:
    """K disjoint-vocabulary copies of a store as tokens.npy / doc_offsets.npy, streamed."""
    from bloomspan.engine.text.corpus_store import CorpusStore

    store = CorpusStore.open(str(store_dir))
    tokens, offsets = store.tokens, np.asarray(store.doc_offsets)
    n, vocab = int(tokens.shape[0]), len(store.vocabulary)
    if copies * vocab >= 2**32:
        raise SystemExit(f"--replicas {copies}: {copies} x {vocab:,} ids do not fit in uint32")
    out.mkdir(parents=True, exist_ok=True)
    if (out / "doc_offsets.npy").exists():
        return out
    dst = np.lib.format.open_memmap(out / "tokens.npy", mode="w+", dtype=np.uint32, shape=(copies * n,))
    step = 1 << 24
    for k in range(copies):
        for a in range(0, n, step):
            b = min(n, a + step)
            dst[k * n + a:k * n + b] = np.asarray(tokens[a:b]) + np.uint32(k * vocab)
    dst.flush()
    del dst
    d = offsets.shape[0] - 1
    all_offsets = np.concatenate([offsets[:d] + k * n for k in range(copies)] + [[copies * n]]).astype(np.int64)
    np.save(out / "doc_offsets.npy", all_offsets)
    return out


def run(store: Path, engine: str, sigma: int, min_length: int, docs: int | None, raw: bool, out: Path) -> dict:
    cmd = [sys.executable, "-m", "bench.mine_worker", "--store", str(store), "--engine", engine, "--sigma", str(sigma),
           "--min-length", str(min_length), "--out", str(out), "--no-windows"]
    if docs is not None:
        cmd += ["--docs", str(docs)]
    if raw:
        cmd.append("--raw")
    proc = subprocess.run(cmd, cwd=ROOT)
    if proc.returncode != 0:
        return {"engine": engine, "failed": True, "exit": proc.returncode}
    return json.loads(out.read_text())


def slope(xs, ys) -> float:
    lx, ly = np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float))
    return float(np.polyfit(lx, ly, 1)[0]) if len(xs) >= 2 else math.nan


def table(rows: list[dict]) -> str:
    lines = ["| point | tokens | docs | engine | phrases | wall s | CPU s | CPU ns/token | peak MiB | peak B/token | "
             "CPU ns/token by stage (" + ", ".join(STAGES) + ") |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for engine in ("bloomspan", "fhk"):
            e = r.get(engine)
            if not e:
                continue
            if e.get("failed"):
                lines.append(f"| {r['point']} | {r['tokens']:,} | {r['docs']:,} | {engine} | FAILED (exit {e['exit']}) "
                             "| - | - | - | - | - | - |")
                continue
            n = e["tokens"]
            st = e["stats"]
            split = " / ".join(f"{st.get(f'cpu_seconds_{s}', 0) * 1e9 / n:.1f}" for s in STAGES) if engine == "bloomspan" else "-"
            lines.append(f"| {r['point']} | {n:,} | {r['docs']:,} | {engine} | {e['phrases']:,} | {e['seconds']:.1f} | "
                         f"{e['cpu_seconds']:.1f} | {e['cpu_seconds'] * 1e9 / n:.1f} | {e['peak_rss_bytes'] / 2**20:,.0f} | "
                         f"{e['peak_rss_bytes'] / n:.2f} | {split} |")
    ok = [r for r in rows if r.get("bloomspan") and not r["bloomspan"].get("failed")]
    if len(ok) >= 2:
        xs = [r["bloomspan"]["tokens"] for r in ok]
        lines.append("")
        lines.append(f"log-log slope of BloomSpan time vs tokens over all points: CPU {slope(xs, [r['bloomspan']['cpu_seconds'] for r in ok]):.3f}, "
                     f"wall {slope(xs, [r['bloomspan']['seconds'] for r in ok]):.3f}; from the first point to each: " + ", ".join(
                         f"{r['point']} {slope([xs[0], r['bloomspan']['tokens']], [ok[0]['bloomspan']['cpu_seconds'], r['bloomspan']['cpu_seconds']]):.3f}"
                         for r in ok[1:]) + " (CPU)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--points", default="10M,100M,250M", help="Prefix sizes in tokens.")
    ap.add_argument("--replicas", type=int, default=0, help="Add a point of this many disjoint copies of the store.")
    ap.add_argument("--fhk-max", type=parse_count, default=parse_count("100M"))
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--min-length", type=int, default=10)
    ap.add_argument("--work", type=Path, required=True, help="Folder for the replicas and worker outputs.")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "scaling.json")
    args = ap.parse_args(argv)

    from bloomspan.engine.text.corpus_store import CorpusStore

    offsets = np.asarray(CorpusStore.open(str(args.store)).doc_offsets)
    rows = []
    plan = [(p, parse_count(p)) for p in args.points.split(",") if p]
    for label, target in plan:
        docs = min(int(np.searchsorted(offsets, target, side="left")), offsets.shape[0] - 1)
        row = {"point": label, "tokens": int(offsets[docs]), "docs": docs}
        for engine in ("bloomspan", "fhk"):
            if engine == "fhk" and row["tokens"] > args.fhk_max:
                continue
            row[engine] = run(args.store, engine, args.sigma, args.min_length, docs, False,
                              args.work / f"scaling-{label}-{engine}.json")
        rows.append(row)
        print(table(rows), file=sys.stderr, flush=True)
    if args.replicas:
        folder = write_replicas(args.store, args.replicas, args.work / f"{args.store.name}-x{args.replicas}")
        n_docs = int(np.load(folder / "doc_offsets.npy", mmap_mode="r").shape[0]) - 1
        row = {"point": f"{args.replicas} x store", "tokens": args.replicas * int(offsets[-1]), "docs": n_docs}
        row["bloomspan"] = run(folder, "bloomspan", args.sigma, args.min_length, None, True,
                               args.work / f"scaling-x{args.replicas}-bloomspan.json")
        rows.append(row)
    for r in rows:
        for e in ("bloomspan", "fhk"):
            if r.get(e) and not r[e].get("failed"):
                r[e].pop("phrases_sha256", None)
    args.out.write_text(json.dumps(rows, indent=1, default=float))
    print(table(rows))
    write_section("scaling", "Mining core on one node", "\n".join(
        ["## Scaling: prefixes of one crawl", f"`{command_line('bench.scaling_bench', argv)}`", "", table(rows)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
