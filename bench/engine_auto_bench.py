"""Fit and check ``--engine auto``: BloomSpan, FHK and auto on the article's regimes.

    python -m bench.engine_auto_bench --out bench/out/engine_auto.json

Regimes: the web crawl at strict (sigma 20, min length 10) and permissive (sigma 10 / 5,
min length 5) thresholds, Synthetic 1 (every background token unique: the article's
losing regime for BloomSpan at large sizes) and Synthetic 2 (dense nested repeats: its
worst case). Each engine runs in its own process (``bench.mine_worker``: compiled first,
then timed; CPU seconds next to wall seconds, the machine is shared). For each regime the
table gives the sampled LZ78 c/n auto decides on, what it picked, and auto's time over the
better engine's: auto runs the engine it picks, so its cost is that engine's (measured in the
engine's own worker) plus the decision (timed here, best of 3); the auto worker's own time
is shown too. Phrase lists of all three must be identical. Prints a markdown table and
writes the rows as JSON to ``--out``.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from bench.mining_bench import ROOT, ensure_corpus, run_worker, tokenize_into_store
from bench.result_file import command_line, write_section
from bench.web_store_writer import write_web_store

# (label, corpus, size, sigma, min_length); size is tokens for the web crawl, documents otherwise
REGIMES = (
    ("web 10M strict", "web", 10_000_000, 20, 10),
    ("web 10M permissive", "web", 10_000_000, 10, 5),
    ("web 3M very permissive", "web", 3_000_000, 5, 5),
    ("synthetic1 500 docs", "synthetic1", 500, 3, 3),
    ("synthetic1 2000 docs", "synthetic1", 2000, 3, 3),
    ("synthetic2 3000 docs", "synthetic2", 3000, 5, 5),
    ("synthetic2 3000 docs strict", "synthetic2", 3000, 20, 10),
)
ENGINES = ("bloomspan", "fhk", "auto")


def store_for(kind: str, size: int, cache: Path, tmp: Path) -> Path:
    if kind == "web":
        path = cache / f"web-store-{size}"
        if not (path / "manifest.json").exists():
            write_web_store(path, size, seed=0)
        return path
    store = tmp / f"{kind}-{size}"
    if not store.exists():
        tokenize_into_store(ensure_corpus(kind, size, 0, cache), store, with_offsets=False)
    return store


def decision_cpu_seconds(store: Path, sigma: int, min_length: int) -> float:
    """CPU seconds of auto's decision alone (best of 3, after a warm-up call)."""
    import time

    import numpy as np

    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.engine.mining.engines import choose_engine
    from bloomspan.engine.text.corpus_store import CorpusStore

    s = CorpusStore.open(str(store))
    tokens, offsets = np.asarray(s.tokens), np.asarray(s.doc_offsets)
    cfg = MiningConfig(sigma=sigma, min_length=min_length, engine="auto")
    choose_engine(tokens, offsets, cfg)
    best = float("inf")
    for _ in range(3):
        c0 = time.process_time()
        choose_engine(tokens, offsets, cfg)
        best = min(best, time.process_time() - c0)
    return best


def run_regime(label, kind, size, sigma, min_length, cache: Path, tmp: Path) -> dict:
    store = store_for(kind, size, cache, tmp)
    row = {"regime": label, "corpus": kind, "size": size, "sigma": sigma, "min_length": min_length,
           "decision_cpu_seconds": decision_cpu_seconds(store, sigma, min_length)}
    for engine in ENGINES:
        r = run_worker(store, engine, sigma, min_length, tmp / f"{label}-{engine}.json".replace(" ", "_"))
        row[engine] = {k: r.get(k) for k in ("seconds", "cpu_seconds", "phrases", "phrases_sha256", "tokens",
                                             "peak_rss_bytes", "failed")}
        if engine == "auto" and not r.get("failed"):
            row["auto_picked"] = r["stats"].get("engine")
            row["auto_reason"] = r["stats"].get("engine_reason")
    done = [e for e in ENGINES if not row[e].get("failed")]
    row["identical"] = len({row[e]["phrases_sha256"] for e in done}) == 1 and len(done) == len(ENGINES)
    return row


def table(rows: list[dict]) -> str:
    lines = ["| regime | tokens | σ | min len | BloomSpan s (CPU) | FHK s (CPU) | auto picks (why) | decision CPU ms "
             "| auto = picked + decision, / better (CPU) | auto worker s (CPU) | identical |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b, f, a = r["bloomspan"], r["fhk"], r["auto"]
        best = min(b["cpu_seconds"], f["cpu_seconds"])
        picked = r[r["auto_picked"]]["cpu_seconds"] + r["decision_cpu_seconds"]
        lines.append(f"| {r['regime']} | {b['tokens']:,} | {r['sigma']} | {r['min_length']} | {b['seconds']:.2f} "
                     f"({b['cpu_seconds']:.2f}) | {f['seconds']:.2f} ({f['cpu_seconds']:.2f}) | {r.get('auto_picked')} "
                     f"({r.get('auto_reason')}) | {r['decision_cpu_seconds'] * 1e3:.1f} | {picked / best:.3f} | "
                     f"{a['seconds']:.2f} ({a['cpu_seconds']:.2f}) | {'yes' if r['identical'] else 'NO'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache-dir", type=Path, default=ROOT / "bench" / "out")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "engine_auto.json")
    ap.add_argument("--only", default="", help="Comma list of regime labels to run (default: all).")
    args = ap.parse_args(argv)
    only = {x.strip() for x in args.only.split(",") if x.strip()}
    rows = []
    with tempfile.TemporaryDirectory(prefix="bloomspan-auto-", dir=args.cache_dir) as tmp:
        for regime in REGIMES:
            if only and regime[0] not in only:
                continue
            rows.append(run_regime(*regime, args.cache_dir, Path(tmp)))
            print(table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    args.out.write_text(json.dumps(rows, indent=1))
    print(table(rows))
    write_section("engine-auto", "Mining core on one node", "\n".join(
        ["## `--engine auto`: the rule on the article's regimes", f"`{command_line('bench.engine_auto_bench', argv)}`",
         "", table(rows)]))
    return 0 if all(r["identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
