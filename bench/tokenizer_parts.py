"""Where a token's CPU goes in the tokenizer, part by part, for mining and the cleaner's two calls.

    .venv/bin/python -m bench.tokenizer_parts --corpus web.jsonl --reps 5

The same three workloads as :mod:`bench.tokenizer_bench` (mining: batches of 5,000 pages into one
vocabulary with df and line starts; cleaning, batch tokens: ``tokenize_batch`` of every 1,000
pages; cleaning, phrase vocabulary: a frozen vocabulary of 1 % of the pages), in this process, with
a timer (``time.perf_counter``, wall) wrapped around each part of :func:`encode_batch`: the code-point
array (``joined_code_points``), the scan kernel (``scan_documents``), resolving keys to ids
(``Vocabulary._resolve_keys``), df counting (``_count_df``); the rest of ``encode_documents`` and of
``encode_batch`` / ``tokenize_batch`` (the vocabulary's allocation, offsets, joining chunks) is
what remains. Best rep of each workload, ns per token. Run it with a tree first on ``PYTHONPATH``
to profile that tree (the timers replace module attributes, so they measure whichever
``bloomspan`` is imported). Wall time: on a loaded machine, compare only reps of one run.
"""
from __future__ import annotations

import argparse
import collections
import time

PARTS = ("joined_code_points", "scan", "resolve", "count_df")


def _timed(counter: collections.Counter, label: str, fn):
    def timed(*args, **kwargs):
        c = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            counter[label] += time.perf_counter() - c
    return timed


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--field", default="text")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)

    import orjson

    from bench.tokenizer_bench import token_count, workloads
    from bloomspan.engine.text import tokenizer, vocabulary
    from bloomspan.engine.text.vocabulary import Vocabulary

    spent: collections.Counter = collections.Counter()
    tokenizer.joined_code_points = _timed(spent, "joined_code_points", tokenizer.joined_code_points)
    vocabulary.scan_documents = _timed(spent, "scan", vocabulary.scan_documents)
    vocabulary._count_df = _timed(spent, "count_df", vocabulary._count_df)
    Vocabulary._resolve_keys = _timed(spent, "resolve", Vocabulary._resolve_keys)
    Vocabulary.encode_documents = _timed(spent, "encode_documents", Vocabulary.encode_documents)

    with open(args.corpus, "rb") as f:
        texts = [orjson.loads(line)[args.field] for line in f]
    if not texts:
        ap.error(f"--corpus {args.corpus}: no documents in it; give a JSON Lines file with a {args.field!r} field")
    calls = workloads(texts)

    print(f"| part (ns/token, best of {args.reps}) | mining | cleaning, batch tokens | cleaning, phrase vocabulary |")
    print("|---|---|---|---|")
    columns = []
    for name, fn in calls.items():
        best = None
        for _ in range(args.reps):
            spent.clear()
            c = time.perf_counter()
            n = token_count(name, fn())
            total = time.perf_counter() - c
            if best is None or total < best[0]:
                best = (total, dict(spent), n)
        total, parts, n = best
        inside = sum(parts.get(p, 0.0) for p in PARTS if p != "joined_code_points")
        parts["rest of encode_documents"] = parts.pop("encode_documents") - inside
        parts["rest of encode_batch / tokenize_batch"] = total - sum(parts.values())
        parts["total"] = total
        columns.append({k: v / n * 1e9 for k, v in parts.items()})
    for row in (*PARTS, "rest of encode_documents", "rest of encode_batch / tokenize_batch", "total"):
        print(f"| {row} | " + " | ".join(f"{c[row]:.1f}" if row in c else "—" for c in columns) + " |")


if __name__ == "__main__":
    main()
