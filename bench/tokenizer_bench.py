"""CPU ns per token of the tokenizer as mining and cleaning call it, beside orjson's parse, in one run.

    .venv/bin/python -m bench.tokenizer_bench --corpus web.jsonl \\
        --tree before=/tmp/tokenizer-before-pkg --tree after=/tmp/tokenizer-after-pkg --reps 3

The corpus is a JSON Lines file with a ``text`` field (``bloomspan corpus web --docs 14179 --seed 1``).
Each ``--tree NAME=DIR`` runs the measurement in a child process with DIR first on ``PYTHONPATH``
(DIR holds a ``bloomspan`` folder whose parts link to a checkout of another commit, as in
:mod:`bench.whole_run_bench`); without ``--tree`` the installed tree runs. A child warms the
kernels, then measures, best of ``--reps`` (CPU seconds of the process, ``time.process_time``):

* ``orjson``: ``orjson.loads`` of every line of the file;
* ``mining``: ``encode_batch`` of the texts in batches of 5,000 documents into one fresh vocabulary
  with document frequencies and line starts, as ``mine --jsonl``'s corpus store calls it;
* ``cleaning, batch tokens``: ``tokenize_batch`` of every 1,000 documents (a fresh vocabulary
  each, offsets and line starts), as ``clean`` with template records calls it;
* ``cleaning, phrase vocabulary``: ``encode_batch(..., add_new=False)`` with offsets against a
  frozen vocabulary of the first 1 % of the documents' tokens, as the matcher calls it.

The children run interleaved (rep 1 of every tree, then rep 2, ...), and every tree's token ids
(mining) must have the same md5, else the bench fails. ``--write`` stores the table as
``bench/results/tokenizer.json`` (:func:`bench.result_file.write_section`).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.result_file import RESULTS_DIR, command_line, write_section

GOAL_NS_PER_TOKEN = 20.0


def workloads(texts: list[str]) -> dict:
    """The three calls this bench measures (module doc), by name, with their kernels loaded and
    the phrase vocabulary built: ``mining`` returns ``(vocabulary, encode_batch results)``, the
    cleaners their ``tokenize_batch`` / ``encode_batch`` results. :mod:`bench.tokenizer_parts`
    profiles the same calls."""
    from bloomspan.engine.text.tokenizer import encode_batch
    from bloomspan.engine.text.vocabulary import Vocabulary
    from bloomspan.ingest.base.batch_tokens import tokenize_batch

    encode_batch(texts[:50], Vocabulary(), with_lines=True)  # kernel loads, tables
    tokenize_batch(texts[:50])
    frozen = Vocabulary()
    encode_batch(texts[:max(1, len(texts) // 100)], frozen, count_df=False)
    encode_batch(texts[:50], frozen, True, add_new=False, count_df=False)

    def mining():
        v = Vocabulary()
        parts = [encode_batch(texts[i:i + 5000], v, with_lines=True) for i in range(0, len(texts), 5000)]
        return v, parts

    def cleaning_batch():
        return [tokenize_batch(texts[i:i + 1000]) for i in range(0, len(texts), 1000)]

    def cleaning_frozen():
        return [encode_batch(texts[i:i + 1000], frozen, True, add_new=False, count_df=False)
                for i in range(0, len(texts), 1000)]

    return {"mining": mining, "cleaning_batch_tokens": cleaning_batch, "cleaning_phrase_vocabulary": cleaning_frozen}


def token_count(name: str, result) -> int:
    """Tokens a :func:`workloads` call returned."""
    if name == "mining":
        return int(sum(p[0].size for p in result[1]))
    if name == "cleaning_batch_tokens":
        return int(sum(r.ids.size for r in result))
    return int(sum(r[0].size for r in result))


def _child(corpus: str, field: str) -> dict:
    import numpy as np
    import orjson

    c = time.process_time()
    with open(corpus, "rb") as f:
        docs = [orjson.loads(line) for line in f]
    parse = time.process_time() - c
    texts = [d[field] for d in docs]
    del docs
    calls = workloads(texts)

    out = {"module": sys.modules["bloomspan.engine.text.vocabulary"].__file__, "orjson_first_s": parse}
    for name, fn in calls.items():
        c = time.process_time()
        res = fn()
        out[name + "_s"] = time.process_time() - c
        if name == "mining":
            v, parts = res
            ids = np.concatenate([p[0] for p in parts])
            lines = np.concatenate([p[-1] for p in parts])
            h = hashlib.md5(ids.tobytes())
            h.update(lines.tobytes())
            h.update(v.df.tobytes())
            h.update("\n".join(v.tokens()).encode("utf-8", "surrogatepass"))
            out["tokens"] = int(ids.size)
            out["vocabulary"] = len(v)
            out["md5"] = h.hexdigest()
        del res
    c = time.process_time()
    with open(corpus, "rb") as f:
        for line in f:
            orjson.loads(line)
    out["orjson_s"] = time.process_time() - c
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--field", default="text")
    ap.add_argument("--tree", action="append", default=[], help="NAME=DIR (DIR first on PYTHONPATH)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--write", action="store_true", help="write bench/results/tokenizer.json")
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.corpus, args.field)))
        return
    trees = [t.split("=", 1) for t in args.tree] or [["installed", ""]]
    runs: dict[str, list[dict]] = {name: [] for name, _ in trees}
    for _ in range(args.reps):
        for name, path in trees:
            env = dict(os.environ)
            if path:
                env["PYTHONPATH"] = path + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            cmd = [sys.executable, "-m", "bench.tokenizer_bench", "--child", "--corpus", args.corpus,
                   "--field", args.field]
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise SystemExit(f"tree {name}: {proc.stderr[-2000:]}")
            runs[name].append(json.loads(proc.stdout.splitlines()[-1]))
    digests = {r["md5"] for rs in runs.values() for r in rs}
    load = os.getloadavg()[0]
    first = runs[trees[0][0]][0]
    lines = [f"## Tokenizer CPU ns per token, mining and cleaning, trees side by side (goal ≤ {GOAL_NS_PER_TOKEN:g})", "",
             f"`{command_line('bench.tokenizer_bench', argv)}` — {first['tokens']:,} tokens, vocabulary "
             f"{first['vocabulary']:,}; {args.reps} interleaved reps, best CPU s; load average {load:.1f}", "",
             "| tree | orjson parse s (ns/token) | mining ns/token | cleaning, batch tokens ns/token | "
             "cleaning, phrase vocabulary ns/token | mining / orjson |",
             "|---|---|---|---|---|---|"]
    runs_lines = []
    for name, _ in trees:
        rs = runs[name]
        n = rs[0]["tokens"]
        best = {k: min(r[k] for r in rs) for k in ("orjson_s", "mining_s", "cleaning_batch_tokens_s",
                                                   "cleaning_phrase_vocabulary_s")}
        ns = {k: v / n * 1e9 for k, v in best.items()}
        lines.append(f"| {name} | {best['orjson_s']:.3f} ({ns['orjson_s']:.1f}) | {ns['mining_s']:.1f} | "
                     f"{ns['cleaning_batch_tokens_s']:.1f} | {ns['cleaning_phrase_vocabulary_s']:.1f} | "
                     f"{best['mining_s'] / best['orjson_s']:.2f}× |")
        runs_lines.append(f"{name} runs: " + "; ".join(
            f"mining {r['mining_s']:.3f}, batch {r['cleaning_batch_tokens_s']:.3f}, "
            f"phrase {r['cleaning_phrase_vocabulary_s']:.3f}, orjson {r['orjson_s']:.3f}" for r in rs))
    lines += ["", *runs_lines, "",
              f"Token ids, line starts, df and vocabulary of mining: {'identical' if len(digests) == 1 else 'DIFFERENT'} "
              f"across all runs ({', '.join(sorted(digests))})."]
    section = "\n".join(lines)
    print(section)
    if args.write and len(digests) == 1:
        write_section("tokenizer", "Kernels and caches", section, args.results_dir)
    if len(digests) != 1:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
