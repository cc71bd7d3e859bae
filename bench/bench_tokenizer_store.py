"""Throughput of the tokenizer fast path, the corpus store and vocabulary files.

    .venv/bin/python bench/bench_tokenizer_store.py --tokens 10000000 --out bench/out/tokenizer.json

Synthetic text: Zipfian (s=1.1) draws from a vocabulary of random words, ~20% Cyrillic,
10% Capitalised, 2% UPPER, separated by spaces and punctuation, documents of 150-450
tokens. Both CPU time (this process) and wall time are reported: on a shared machine
the wall time includes waiting for a core.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np

from bench.result_file import command_line, table_of_figures, write_section
from bloomspan.engine.text.corpus_store import CorpusStore
from bloomspan.engine.text.normalization import normalization_tables
from bloomspan.engine.text.tokenizer import encode_batch, tokenize
from bloomspan.engine.text.vocabulary import Vocabulary


def make_corpus(n_tokens: int, seed: int = 0, n_words: int = 200_000, doc_len: int = 300,
                ascii_only: bool = False) -> list[str]:
    rng = np.random.default_rng(seed)
    lat = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    cyr = np.array(list("абвгдежзийклмнопрстуфхцчшщъыьэюя"))
    lengths = rng.integers(2, 10, n_words)
    cyrillic = (rng.random(n_words) < 0.2) & (not ascii_only)
    case = rng.random(n_words)
    words = []
    for i in range(n_words):
        w = "".join(rng.choice(cyr if cyrillic[i] else lat, lengths[i]))
        words.append(w.capitalize() if case[i] < 0.1 else (w.upper() if case[i] < 0.12 else w))
    words = np.array(words, dtype=object)
    ranks = rng.zipf(1.1, size=3 * n_tokens)
    ranks = ranks[ranks <= n_words][:n_tokens] - 1
    seps = np.array([" "] * 6 + [", ", ". ", "\n", " — ", " (", ") "], dtype=object)
    sep = seps[rng.integers(0, len(seps), ranks.size)]
    texts, pos = [], 0
    while pos < ranks.size:
        n = int(rng.integers(doc_len // 2, doc_len * 3 // 2))
        texts.append("".join(a + b for a, b in zip(words[ranks[pos:pos + n]], sep[pos:pos + n])))
        pos += n
    return texts


def timed(fn, *args, **kwargs):
    c, w = time.process_time(), time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.process_time() - c, time.perf_counter() - w


def batches(seq, size):
    return [seq[i:i + size] for i in range(0, len(seq), size)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=10_000_000)
    ap.add_argument("--batch-docs", type=int, default=10_000)
    ap.add_argument("--vocab-tokens", type=int, default=10_000_000, help="size of the vocabulary file test")
    ap.add_argument("--out")
    args = ap.parse_args()
    res: dict = {"tokens_requested": args.tokens}

    texts, _, wall = timed(make_corpus, args.tokens)
    res["generate_s"] = wall
    res["docs"] = len(texts)
    res["chars"] = sum(map(len, texts))
    encode_batch(["warm up", "разогрев"], Vocabulary())  # compile / load numba cache, build tables
    normalization_tables()

    for label, data in [("mixed", texts), ("ascii", make_corpus(args.tokens // 5, ascii_only=True))]:
        v = Vocabulary()
        parts, cpu, wall = timed(lambda: [encode_batch(b, v) for b in batches(data, args.batch_docs)])
        n = sum(p[0].size for p in parts)
        res[f"encode_{label}_cold"] = {"tokens": n, "vocab": len(v), "cpu_s": cpu, "wall_s": wall,
                                       "M_tok_per_cpu_s": n / cpu / 1e6, "M_tok_per_wall_s": n / wall / 1e6}
        _, cpu, wall = timed(lambda: [encode_batch(b, v) for b in batches(data, args.batch_docs)])
        res[f"encode_{label}_warm"] = {"M_tok_per_cpu_s": n / cpu / 1e6, "M_tok_per_wall_s": n / wall / 1e6}
        _, cpu, wall = timed(lambda: [encode_batch(b, v, with_offsets=True)
                                      for b in batches(data, args.batch_docs)])
        res[f"encode_{label}_offsets"] = {"M_tok_per_cpu_s": n / cpu / 1e6, "M_tok_per_wall_s": n / wall / 1e6}

    sample = texts[:max(1, len(texts) // 10)]
    out, cpu, wall = timed(lambda: [tokenize(t) for t in sample])
    n = sum(map(len, out))
    res["reference_tokenize_only"] = {"tokens": n, "M_tok_per_cpu_s": n / cpu / 1e6}

    work = tempfile.mkdtemp(prefix="bloomspan-bench-")
    try:
        ids = [f"doc-{i}" for i in range(len(texts))]
        store = CorpusStore.create(os.path.join(work, "c"))
        _, cpu, wall = timed(lambda: [store.append(i, t) for i, t in
                                      zip(batches(ids, args.batch_docs), batches(texts, args.batch_docs))])
        n_tok = store.n_tokens
        store.close()
        res["store_append"] = {"docs": len(texts), "tokens": n_tok, "batches": -(-len(texts) // args.batch_docs),
                               "cpu_s": cpu, "wall_s": wall, "docs_per_wall_s": len(texts) / wall,
                               "M_tok_per_wall_s": n_tok / wall / 1e6}
        small, docs_small = 200, texts[:20_000]
        store = CorpusStore.create(os.path.join(work, "small"))
        _, cpu, wall = timed(lambda: [store.append(i, t) for i, t in
                                      zip(batches(ids, small), batches(docs_small, small))])
        res["store_append_small_batches"] = {
            "docs": len(docs_small), "batch_docs": small, "tokens": store.n_tokens,
            "vocab": len(store.vocabulary), "wall_s": wall, "cpu_s": cpu,
            "ms_per_batch": wall / -(-len(docs_small) // small) * 1e3,
            "M_tok_per_wall_s": store.n_tokens / wall / 1e6}
        store.close()
        st, cpu, wall = timed(CorpusStore.open, os.path.join(work, "c"))
        res["store_open_s"] = wall
        _, cpu, wall = timed(lambda: st.vocabulary)
        res["store_vocabulary_load_s"] = wall
        _, cpu, wall = timed(lambda: [st.external_id(i) for i in range(0, st.n_docs, 7)])
        res["store_external_id_us"] = wall / len(range(0, st.n_docs, 7)) * 1e6
        st.close()

        v = Vocabulary()
        words = [f"w{i:x}з" for i in range(args.vocab_tokens)]
        _, cpu, wall = timed(v.ids_of, words, add_new=True)
        res["vocab_insert_M_per_wall_s"] = len(words) / wall / 1e6
        del words
        path = os.path.join(work, "vocabulary.tsv")
        _, cpu, wall = timed(v.save, path)
        res["vocab_save"] = {"tokens": len(v), "bytes": os.path.getsize(path), "wall_s": wall}
        back, cpu, wall = timed(Vocabulary.load, path)
        res["vocab_load"] = {"tokens": len(back), "wall_s": wall, "cpu_s": cpu}
    finally:
        shutil.rmtree(work, ignore_errors=True)

    text = json.dumps(res, indent=1)
    print(text)
    write_section("tokenizer-store", "Mining core on one node", "\n".join(
        ["## Tokenizer and corpus store, in process", f"`{command_line('bench.bench_tokenizer_store')}`", "",
         table_of_figures(res)]))
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
