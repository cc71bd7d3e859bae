"""Matcher speed and memory at 10 k and 100 k phrases: whole phrases (Aho–Corasick) vs windows.

    python -m bench.matcher_bench --phrases 10000 100000 --docs 2000

Phrases: the exact phrases mined (σ 20, min length 10) from the first ``--mine-docs`` pages
of a generated crawl, topped up to each size with slices of 10–40 tokens of other pages of
the crawl (so their windows do occur in the pages scanned), every one recording
``min_length`` 10. Scanned: ``--docs`` pages never used for phrases, with
``PhraseMatcher.find_batch(fixed_point=True)`` (what the cleaner calls), one core, best of
``--repeats`` in CPU time (the machine may be shared); the ratio is windows' MB/s over
whole phrases' at the same size, in the same run. Build: wall and CPU seconds. Memory: the bytes of the automaton and window index arrays
(``PhraseMatcher.nbytes``) and the growth of the process's peak RSS while building.
"""
from __future__ import annotations

import argparse
import random
import resource
import sys
import time

from bench.result_file import write_section


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def phrase_records(crawl: list[dict], mine_docs: int, n_phrases: int, seed: int) -> list[dict]:
    """Mined phrases, then document slices, ``n_phrases`` records in all (module docstring)."""
    from bloomspan.engine.mining.bloomspan import mine_bloomspan
    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.engine.text.tokenizer import encode_batch, tokenize
    from bloomspan.engine.text.vocabulary import Vocabulary

    vocab = Vocabulary()
    texts = [d["text"] for d in crawl[:mine_docs]]
    tokens, offsets = encode_batch(texts, vocab)[:2]
    mined = mine_bloomspan(tokens, offsets, MiningConfig(sigma=20, min_length=10)).phrases
    records = [{"tokens": [vocab.token(int(t)) for t in p.tokens], "min_length": 10} for p in mined][:n_phrases]
    seen = {tuple(r["tokens"]) for r in records}
    rng = random.Random(seed)
    pool = [tokenize(d["text"]) for d in crawl[mine_docs:]]
    pool = [t for t in pool if len(t) >= 40]
    while len(records) < n_phrases:
        toks = rng.choice(pool)
        n = rng.randint(10, 40)
        i = rng.randrange(0, len(toks) - n)
        key = tuple(toks[i:i + n])
        if key not in seen:
            seen.add(key)
            records.append({"tokens": list(key), "min_length": 10})
    return records


def measure(records: list[dict], texts: list[str], match: str, repeats: int) -> dict:
    from bloomspan.ingest.match.phrase_matcher import PhraseMatcher
    from bloomspan.ingest.records.phrase_set import PhraseSet

    phrase_set = PhraseSet.from_records(records)
    rss0 = _peak_rss_mib()
    t0, c0 = time.perf_counter(), time.process_time()
    matcher = PhraseMatcher(phrase_set, match=match)
    build, build_cpu = time.perf_counter() - t0, time.process_time() - c0
    rss = _peak_rss_mib() - rss0
    matcher.find_batch(texts[:50], fixed_point=True)  # compile / warm
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    best, covered = float("inf"), 0
    for _ in range(repeats):
        c0 = time.process_time()
        found = matcher.find_batch(texts, fixed_point=True)
        best = min(best, time.process_time() - c0)
        covered = sum(m.covered_tokens for m in found)
    tokens = sum(m.n_tokens for m in found)
    return {"match": match, "build_s": build, "build_cpu_s": build_cpu, "nbytes": matcher.nbytes, "rss_mib": rss, "mb_s": mb / best,
            "covered": covered / tokens if tokens else 0.0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--phrases", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--docs", type=int, default=2000, help="pages scanned")
    ap.add_argument("--mine-docs", type=int, default=6000, help="pages the phrases come from")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args(argv)
    from bloomspan.corpora import generate_web

    crawl = list(generate_web(args.mine_docs + args.docs, args.seed))
    texts = [d["text"] for d in crawl[args.mine_docs:]]
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    rows = []
    speed = {}  # (phrases, match) -> MB/s
    for n in args.phrases:
        records = phrase_records(crawl, args.mine_docs, n, args.seed)
        for match in ("windows", "phrases"):  # windows first: peak RSS only grows
            r = measure(records, texts, match, args.repeats)
            rows.append((n, r))
            speed[n, match] = r["mb_s"]
            print(f"{n:>7,} {match:8s} build {r['build_s']:.2f}s ({r['build_cpu_s']:.2f}s CPU) arrays {r['nbytes'] / 2**20:.1f} MiB "
                  f"rss +{r['rss_mib']:.0f} MiB  {r['mb_s']:.1f} MB/s  covered {r['covered']:.2%}", file=sys.stderr)
    command = "python -m bench.matcher_bench " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [f"\n### Matcher: whole phrases vs windows, {len(texts):,} web pages ({mb:.1f} MB), one core",
             f"`{command}` — {time.strftime('%Y-%m-%d %H:%M')}", "",
             "| phrases | match | build s (CPU s) | automaton + window index MiB | peak RSS growth MiB | MB/s per core | "
             "ratio to whole phrases | tokens covered |", "|---|---|---|---|---|---|---|---|"]
    for n, r in rows:
        ratio = r["mb_s"] / speed[n, "phrases"]
        lines.append(f"| {n:,} | {r['match']} | {r['build_s']:.2f} ({r['build_cpu_s']:.2f}) | {r['nbytes'] / 2**20:.1f} | "
                     f"{r['rss_mib']:.0f} | {r['mb_s']:.1f} | {ratio:.2f} | {r['covered']:.2%} |")
    print("\n".join(lines))
    write_section("matcher", "Cleaner and matcher", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
