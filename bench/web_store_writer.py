"""Write a generated web crawl straight into a corpus store, in bounded memory.

    python -m bench.web_store_writer --tokens 1B --out /var/tmp/bstest-core/web-1B

The JSON Lines route (generate, write, read back, parse) would add two passes over a
~6 GB file to the ~30 min the generator itself needs for a billion tokens, so documents go
from :func:`bloomspan.corpora.generate_web` to :meth:`CorpusStore.append` in
batches. The site count is the generator's default for the final document count, fixed
before the first document: every prefix of the store is then a prefix of the same crawl
(``generate_web(k, seed, n_sites=m)`` is a prefix of ``generate_web(n, seed,
n_sites=m)``), which is what the scaling runs of :mod:`bench.scaling_bench` mine.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench.mining_bench import docs_for_tokens, parse_count

BATCH_DOCS = 5000
COMMIT_EVERY = 40  # batches between manifest commits (a commit rewrites the vocabulary's df)


def write_web_store(out: Path, tokens: int, seed: int, n_sites: int | None = None) -> dict:
    """Generate web pages into a new store at ``out`` until it holds >= ``tokens`` tokens."""
    from bloomspan.corpora import default_n_sites, generate_web
    from bloomspan.engine.text.corpus_store import CorpusStore

    expected_docs = docs_for_tokens("web", tokens, seed)
    n_sites = n_sites or default_n_sites(expected_docs)
    n_docs = 2 * expected_docs + BATCH_DOCS  # more than enough: the loop stops at the token target
    store = CorpusStore.create(str(out), fsync=False)
    t0 = time.perf_counter()
    ids: list[str] = []
    texts: list[str] = []
    batches = 0
    try:
        for doc in generate_web(n_docs, seed, n_sites=n_sites):
            ids.append(doc["id"])
            texts.append(doc["text"])
            if len(ids) < BATCH_DOCS:
                continue
            store.append(ids, texts, flush=False)
            ids, texts = [], []
            batches += 1
            if batches % COMMIT_EVERY == 0:
                store.flush()
                rate = store.n_tokens / (time.perf_counter() - t0)
                print(f"web_store_writer: {store.n_tokens:,} tokens, {store.n_docs:,} docs, "
                      f"{rate / 1e6:.2f} M tokens/s", file=sys.stderr, flush=True)
            if store.n_tokens >= tokens:
                break
        if ids and store.n_tokens < tokens:
            store.append(ids, texts, flush=False)
        store.flush()
        return {"tokens": store.n_tokens, "docs": store.n_docs, "sites": n_sites, "seed": seed,
                "seconds": time.perf_counter() - t0}
    finally:
        store.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=parse_count, required=True, help="Stop at this many tokens, e.g. 1B.")
    ap.add_argument("--out", type=Path, required=True, help="New store directory.")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sites", type=int, default=None, help="Site count (default: the generator's for the size).")
    args = ap.parse_args(argv)
    info = write_web_store(args.out, args.tokens, args.seed, args.sites)
    print(f"web_store_writer: done {info}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
