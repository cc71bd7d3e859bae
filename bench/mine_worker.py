"""Child process of bench.mining_bench: mine one stored corpus with one engine.

Compiles the engine's numba kernels on the first documents of the same store first, so the timed run measures
mining only; writes seconds, stats, the phrase count, a SHA-256 of the phrase list (for the
identity check) and the coverage mask (``<out>.coverage.npy`` next to ``--out``).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

import numpy as np


def peak_rss_bytes() -> int:
    """VmHWM of this process. (rusage from wait4 would include the parent's image at fork:
    Linux carries the pre-exec high-water mark into the child's maxrss.)"""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


class RawCorpus:
    """tokens.npy (uint32) and doc_offsets.npy (int64) memory-mapped: what the miner reads of a store."""

    def __init__(self, folder: Path) -> None:
        self.tokens = np.load(folder / "tokens.npy", mmap_mode="r")
        self.doc_offsets = np.load(folder / "doc_offsets.npy", mmap_mode="r")
        self.n_docs = int(self.doc_offsets.shape[0]) - 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", required=True, help="Corpus store, or a folder of tokens.npy + doc_offsets.npy (--raw).")
    ap.add_argument("--raw", action="store_true", help="--store holds tokens.npy and doc_offsets.npy.")
    ap.add_argument("--engine", required=True)
    ap.add_argument("--sigma", type=int, required=True)
    ap.add_argument("--min-length", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--docs", type=int, default=None, help="Mine only the first DOCS documents of the store.")
    ap.add_argument("--no-windows", action="store_true", help="Skip the window-coverage mask (large runs).")
    args = ap.parse_args()

    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.engine.mining.engines import mine
    from bloomspan.engine.text.corpus_store import CorpusStore

    # "fhk-textbook": FHK over the whole corpus, as the article's baseline builds it (Part 3; no pruning
    # of tokens rarer than sigma before the suffix array).
    textbook = args.engine == "fhk-textbook"
    engine = "fhk" if textbook else args.engine
    if textbook:
        from bloomspan.engine.mining.fhk import mine_fhk

        def mine(tokens, offsets, cfg):  # noqa: F811 - the textbook variant of the selector
            return mine_fhk(tokens, offsets, cfg, prune=False)
    config = MiningConfig(sigma=args.sigma, min_length=args.min_length, engine=engine)
    store = RawCorpus(Path(args.store)) if args.raw else CorpusStore.open(args.store)
    # Compile on a slice of the same read-only memmaps: numba specialises on array flags, so
    # warming up on a plain array would leave the timed call to compile again.
    head = min(store.n_docs, 50)
    for warm in (("bloomspan", "fhk", "auto") if engine == "auto" else (engine,)):  # auto may pick either
        mine(store.tokens[: int(store.doc_offsets[head])], store.doc_offsets[: head + 1],
             MiningConfig(sigma=2, min_length=2, engine=warm))

    n_docs = store.n_docs if args.docs is None else min(args.docs, store.n_docs)
    tokens, offsets = store.tokens[: int(store.doc_offsets[n_docs])], store.doc_offsets[: n_docs + 1]
    t0 = time.perf_counter()
    c0 = time.process_time()
    result = mine(tokens, offsets, config)
    seconds = time.perf_counter() - t0
    cpu_seconds = time.process_time() - c0
    digest = hashlib.sha256()
    for p in result.phrases:
        digest.update(json.dumps([list(map(int, p.tokens)), int(p.df), int(p.occurrences)]).encode())
    out = Path(args.out)
    peak = peak_rss_bytes()  # before the extras below, which are not mining
    if not args.no_windows:
        np.save(out.with_suffix(".coverage.npy"), np.asarray(result.coverage, dtype=bool))
        from bloomspan.engine.mining.window_coverage import window_coverage

        t1 = time.perf_counter()
        windows = window_coverage(tokens, offsets, result.phrases, args.min_length)
        result.stats["seconds_window_coverage_extra"] = time.perf_counter() - t1
        np.save(out.with_suffix(".windows.npy"), windows)
    out.write_text(json.dumps({"engine": args.engine, "seconds": seconds, "cpu_seconds": cpu_seconds,
                               "phrases": len(result.phrases), "tokens": int(tokens.shape[0]),
                               "phrases_sha256": digest.hexdigest(), "covered_tokens": int(np.count_nonzero(result.coverage)),
                               "peak_rss_bytes": peak,
                               "stats": result.stats}, default=float))


if __name__ == "__main__":
    main()
