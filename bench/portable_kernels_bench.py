"""CPU time of portable numba kernels (``NUMBA_CPU_NAME=generic``, a named baseline) beside host-tuned ones, in one run.

    .venv/bin/python -m bench.portable_kernels_bench --corpus /tmp/portable/web.jsonl --reps 3

The corpus is a JSON Lines file with a ``text`` field (``bloomspan corpus web --docs 4000 --seed 1``).
Each variant gets its own empty ``NUMBA_CACHE_DIR``:

* ``host``: numba's default, the kernels tuned for this machine's CPU (``NUMBA_CPU_NAME`` unset);
* ``generic``: ``NUMBA_CPU_NAME=generic`` (numba then sets no CPU features), a cache any x86-64 loads;
* ``x86-64-v3``: ``NUMBA_CPU_NAME=x86-64-v3`` with ``NUMBA_CPU_FEATURES=""`` (the level's own
  features: AVX2, FMA, BMI2; no AVX-512), a cache any CPU of that level loads.

A first child per variant compiles every kernel the three workloads use into its cache (its wall
seconds are reported; a timed child's warm-up, the cache load plus building the matcher's phrases
and the corpus's token ids, is reported too); the timed children then load them from that cache and run, interleaved
(rep 1 of every variant, then rep 2, ...), best of ``--reps`` children of ``--inner`` calls each in
CPU seconds (``time.process_time``, the machine may be shared). Each child warms on a small slice first (the
cache load), then times:

* ``mining (core)``: ``mine_bloomspan`` (σ ``--sigma``, min length ``--min-length``) over the
  whole corpus's token ids, as :mod:`bench.mining_bench` mines;
* ``tokenizer``: ``encode_batch`` of the texts in batches of 5,000 into one fresh vocabulary with
  document frequencies and line starts, as :mod:`bench.tokenizer_bench`'s mining column;
* ``matcher``: ``PhraseMatcher.find_batch(fixed_point=True)`` (windows) of the pages after the
  first ``--phrase-docs`` with ``--phrases`` phrases built as :mod:`bench.matcher_bench` builds them.

The ratio is the variant's CPU seconds over host's; the phrase list, token ids and covered tokens
must be identical across variants, else the bench fails.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.result_file import command_line, write_section

VARIANTS = {"host": {}, "generic": {"NUMBA_CPU_NAME": "generic"},
            "x86-64-v3": {"NUMBA_CPU_NAME": "x86-64-v3", "NUMBA_CPU_FEATURES": ""}}
WORKLOADS = ("mining", "tokenizer", "matcher")
LABELS = {"mining": "mining (core)", "tokenizer": "tokenizer", "matcher": "matcher (windows)"}


def _child(corpus: str, inner: int, sigma: int, min_length: int, n_phrases: int, phrase_docs: int) -> dict:
    import numpy as np
    import orjson

    from bench.matcher_bench import phrase_records
    from bloomspan.engine.mining.bloomspan import mine_bloomspan
    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.engine.text.tokenizer import encode_batch
    from bloomspan.engine.text.vocabulary import Vocabulary
    from bloomspan.ingest.match.phrase_matcher import PhraseMatcher
    from bloomspan.ingest.records.phrase_set import PhraseSet

    with open(corpus, "rb") as f:
        crawl = [orjson.loads(line) for line in f]
    texts = [d["text"] for d in crawl]
    scanned = texts[phrase_docs:]
    w0 = time.perf_counter()
    # Warm-up: loads (or, in the compile child, compiles) every kernel the timed calls use.
    head_tokens, head_offsets = encode_batch(texts[:50], Vocabulary(), with_lines=True)[:2]
    mine_bloomspan(head_tokens, head_offsets, MiningConfig(sigma=2, min_length=2))
    matcher = PhraseMatcher(PhraseSet.from_records(phrase_records(crawl, phrase_docs, n_phrases, seed=11)),
                            match="windows")
    matcher.find_batch(scanned[:50], fixed_point=True)
    tokens, offsets = encode_batch(texts, Vocabulary())[:2]  # the corpus mined, as one store holds it
    warm_s = time.perf_counter() - w0

    def mining():
        return mine_bloomspan(tokens, offsets, MiningConfig(sigma=sigma, min_length=min_length))

    def tokenizer():
        v = Vocabulary()
        return [encode_batch(texts[i:i + 5000], v, with_lines=True) for i in range(0, len(texts), 5000)]

    def matching():
        return matcher.find_batch(scanned, fixed_point=True)

    from numba.core.registry import cpu_target

    triple, cpu, features = cpu_target.target_context.codegen().magic_tuple()  # what the cache index keys on
    out: dict = {"cpu": cpu, "features": features[:60], "warm_s": warm_s, "tokens": int(tokens.size), "scanned_docs": len(scanned)}
    for name, fn in (("mining", mining), ("tokenizer", tokenizer), ("matcher", matching)):
        best = float("inf")
        for _ in range(inner):  # best of a few inside the child too: mining a few M tokens takes ~0.1 s
            c0 = time.process_time()
            result = fn()
            best = min(best, time.process_time() - c0)
        out[name + "_s"] = best
        digest = hashlib.md5()
        if name == "mining":
            for p in result.phrases:
                digest.update(json.dumps([list(map(int, p.tokens)), int(p.df), int(p.occurrences)]).encode())
            out["phrases"] = len(result.phrases)
        elif name == "tokenizer":
            for p in result:
                digest.update(np.ascontiguousarray(p[0]).tobytes())
        else:
            digest.update(json.dumps([int(m.covered_tokens) for m in result]).encode())
            out["covered_tokens"] = sum(int(m.covered_tokens) for m in result)
        out[name + "_md5"] = digest.hexdigest()
    return out


def _run_child(args, env: dict) -> dict:
    cmd = [sys.executable, "-m", "bench.portable_kernels_bench", "--child", "--corpus", args.corpus,
           "--inner", str(args.inner), "--sigma", str(args.sigma), "--min-length", str(args.min_length),
           "--phrases", str(args.phrases), "--phrase-docs", str(args.phrase_docs)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{env.get('NUMBA_CPU_NAME', 'host')}: child failed (rc {proc.returncode}): {proc.stderr[-2000:]}")
    if "not a recognized processor" in proc.stderr:
        raise SystemExit(f"{env.get('NUMBA_CPU_NAME')}: LLVM does not know this CPU name: {proc.stderr[-500:]}")
    out = json.loads(proc.stdout.splitlines()[-1])
    out["wall_s"] = time.perf_counter() - t0
    return out


def _cache_files(folder: Path) -> int:
    return sum(1 for p in folder.rglob("*.nbi"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True, help="JSON Lines with a text field")
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--reps", type=int, default=3, help="timed children per variant (interleaved)")
    ap.add_argument("--inner", type=int, default=5, help="calls of each workload per child, best kept")
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--min-length", type=int, default=10)
    ap.add_argument("--phrases", type=int, default=10_000, help="phrases in the matcher")
    ap.add_argument("--phrase-docs", type=int, default=1000, help="first pages the phrases come from (not scanned)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.corpus, args.inner, args.sigma, args.min_length, args.phrases, args.phrase_docs)))
        return 0
    command = command_line("bench.portable_kernels_bench", argv)
    with tempfile.TemporaryDirectory(prefix="portable-kernels-") as tmp:
        envs, compiled = {}, {}
        for name in args.variants:
            cache = Path(tmp) / name
            cache.mkdir()
            env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CPU")}
            env.update(VARIANTS[name], NUMBA_CACHE_DIR=str(cache))
            envs[name] = env
            first = _run_child(args, env)
            compiled[name] = {"wall_s": first["wall_s"], "warm_s": first["warm_s"], "indexes": _cache_files(cache)}
            print(f"{name}: compile run {first['wall_s']:.1f} s wall (warm-up {first['warm_s']:.1f} s), "
                  f"{compiled[name]['indexes']} cache indexes; index key cpu {first['cpu']!r}, "
                  f"features {first['features']!r}", file=sys.stderr)
            compiled[name]["cpu"] = first["cpu"]
        runs: dict[str, list[dict]] = {name: [] for name in args.variants}
        for rep in range(args.reps):
            for name in args.variants:
                r = _run_child(args, envs[name])
                runs[name].append(r)
                print(f"rep {rep + 1} {name}: warm-up {r['warm_s']:.2f} s, " + ", ".join(
                    f"{w} {r[w + '_s']:.3f} s" for w in WORKLOADS), file=sys.stderr)
    digests = {w: {r[w + "_md5"] for rs in runs.values() for r in rs} for w in WORKLOADS}
    best = {name: {w: min(r[w + "_s"] for r in rs) for w in WORKLOADS} for name, rs in runs.items()}
    load = os.getloadavg()
    base = "host" if "host" in best else args.variants[0]
    sample = runs[base][0]
    from bench.mining_bench import machine

    lines = [f"### Portable numba kernels vs host-tuned, {sample['tokens']:,} tokens",
             f"`{command}` — {machine()}", "",
             f"Best of {args.reps} interleaved children × {args.inner} calls per variant, CPU seconds, each variant loading "
             f"from its own cache compiled by a first child; load average {load[0]:.1f} / {load[1]:.1f} "
             f"/ {load[2]:.1f}. Mining: σ {args.sigma}, min length {args.min_length}, "
             f"{sample['phrases']:,} phrases; matcher: {args.phrases:,} phrases (windows) over "
             f"{sample['scanned_docs']:,} pages.", "",
             "| variant | " + " | ".join(f"{LABELS[w]} CPU s" for w in WORKLOADS) + " | "
             + " | ".join(f"{LABELS[w]} / {base}" for w in WORKLOADS) + " | compile run wall s | timed child warm-up s |",
             "|---|" + "---|" * (2 * len(WORKLOADS) + 2)]
    for name in args.variants:
        ratios = [best[name][w] / best[base][w] for w in WORKLOADS]
        lines.append(f"| {name} | " + " | ".join(f"{best[name][w]:.3f}" for w in WORKLOADS) + " | "
                     + " | ".join(f"{x:.3f}" for x in ratios) + f" | {compiled[name]['wall_s']:.1f} | "
                     f"{min(r['warm_s'] for r in runs[name]):.2f} |")
    worst = {name: max(best[name][w] / best[base][w] for w in WORKLOADS) for name in args.variants if name != base}
    lines += ["", "Worst loss per variant: " + ", ".join(
        f"{name} {100 * (x - 1):+.1f} % ({'within' if x <= 1.05 else 'beyond'} the 5 % bound)" for name, x in worst.items()),
        "Outputs (phrase list, token ids, covered tokens): "
        + ("identical across variants" if all(len(d) == 1 for d in digests.values()) else "DIFFERENT") + "."]
    print("\n".join(lines))
    write_section("portable-kernels", "Kernels and caches", "\n".join(lines))
    return 0 if all(len(d) == 1 for d in digests.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
