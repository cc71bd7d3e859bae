"""One benchmark run on one corpus: tokenize, then BloomSpan and FHK in separate processes.

    python -m bench.mining_bench --corpus web --tokens 10M --sigma 20 --min-length 10

Generates (or reuses, under ``--cache-dir``) the corpus as JSON Lines, tokenizes it into the
engine's corpus store (timed in this process), runs each engine in its own child process
(``bench.mine_worker``: numba compiled on a tiny corpus first, then the timed run; peak RSS
is the worker's own VmHWM), checks that the engines return identical phrase lists, measures the
corpus shape (LZ78 c/n) and, on the web crawl, template recovery against the generator's
truth. Prints a summary and writes the figures with this exact command to ``bench/results/NAME.json``
(:func:`default_name`; ``python -m bench.results_page`` then regenerates ``bench/RESULTS.md``).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.result_file import RESULTS_DIR, write_section

ROOT = Path(__file__).resolve().parents[1]


def parse_count(text: str) -> int:
    text = text.strip().upper()
    mult = {"K": 10**3, "M": 10**6, "G": 10**9, "B": 10**9}
    if text[-1] in mult:
        return int(float(text[:-1]) * mult[text[-1]])
    return int(text)


def count_text(n: int) -> str:
    """The short form :func:`parse_count` reads back: 10000000 -> "10M"."""
    for suffix, mult in (("G", 10**9), ("M", 10**6), ("K", 10**3)):
        if n and n % mult == 0:
            return f"{n // mult}{suffix}"
    return str(n)


def machine() -> str:
    mem = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {mem / 2**30:.0f} GiB, {cpu}"


def corpus_path(cache: Path, kind: str, docs: int, seed: int) -> Path:
    return cache / f"{kind}-{docs}-s{seed}.jsonl"


def docs_for_tokens(kind: str, tokens: int, seed: int) -> int:
    """Documents needed for about ``tokens`` tokens, from a sample of the generator."""
    from bloomspan.corpora import corpus_by_name
    from bloomspan.engine.text.tokenizer import tokenize

    sample = list(corpus_by_name(kind, 300 if kind == "web" else 20, seed))
    per_doc = sum(len(tokenize(d["text"])) for d in sample) / len(sample)
    return max(1, int(round(tokens / per_doc)))


def ensure_corpus(kind: str, docs: int, seed: int, cache: Path) -> Path:
    from bloomspan.corpora import corpus_by_name, write_jsonl

    path = corpus_path(cache, kind, docs, seed)
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        tmp = path.with_suffix(".partial")
        write_jsonl(corpus_by_name(kind, docs, seed), tmp)
        os.replace(tmp, path)
        print(f"generated {path} in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return path


def tokenize_into_store(path: Path, store_dir: Path, with_offsets: bool) -> tuple[float, int, int]:
    from bloomspan.engine.text.corpus_store import CorpusStore

    t0 = time.perf_counter()
    store = CorpusStore.create(str(store_dir), with_offsets=with_offsets)
    ids, texts = [], []
    read = 0.0
    with open(path, encoding="utf-8") as f:
        for line in f:
            r0 = time.perf_counter()
            doc = json.loads(line)
            read += time.perf_counter() - r0
            ids.append(doc["id"])
            texts.append(doc["text"])
            if len(ids) == 5000:
                store.append(ids, texts, flush=False)
                ids, texts = [], []
    if ids:
        store.append(ids, texts, flush=False)
    store.flush()
    seconds = time.perf_counter() - t0 - read  # JSON parsing is not tokenizing
    n_docs, n_tokens = store.n_docs, store.n_tokens
    store.close()
    return seconds, n_docs, n_tokens


def run_worker(store_dir: Path, engine: str, sigma: int, min_length: int, out: Path) -> dict:
    cmd = [sys.executable, "-m", "bench.mine_worker", "--store", str(store_dir), "--engine", engine,
           "--sigma", str(sigma), "--min-length", str(min_length), "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=ROOT)
    _, status, rusage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return {"engine": engine, "failed": True, "exit": os.waitstatus_to_exitcode(status),
                "peak_rss_bytes": rusage.ru_maxrss * 1024}
    return json.loads(out.read_text())


def lz78_cn(store_dir: Path, limit: int) -> float:
    from bloomspan.corpora import lz78_phrases_per_token
    from bloomspan.engine.text.corpus_store import CorpusStore

    store = CorpusStore.open(str(store_dir))
    tokens = np.asarray(store.tokens[: min(limit, store.n_tokens)])
    return lz78_phrases_per_token(tokens.tolist())


def template_recovery(path: Path, store_dir: Path, coverage_file: Path) -> dict:
    from bloomspan.corpora import evaluate_template_recovery, read_jsonl
    from bloomspan.engine.text.corpus_store import CorpusStore

    store = CorpusStore.open(str(store_dir))
    coverage = np.load(coverage_file)
    offsets = np.asarray(store.doc_offsets)

    def covered_spans():
        for d in range(store.n_docs):
            mask = coverage[offsets[d]:offsets[d + 1]]
            if not mask.any():
                yield []
                continue
            starts, ends = store.char_spans(d)
            edges = np.diff(np.concatenate(([0], mask.astype(np.int8), [0])))
            first, last = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
            spans = [[int(starts[a]), int(ends[b])] for a, b in zip(first, last)]
            yield spans

    report = evaluate_template_recovery(read_jsonl(path), list(covered_spans()))
    return report.to_dict()


def fmt_ns(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", choices=["web", "synthetic1", "synthetic2"], default="web")
    size = ap.add_mutually_exclusive_group(required=True)
    size.add_argument("--tokens", type=parse_count, help="Target corpus size, e.g. 10M.")
    size.add_argument("--docs", type=parse_count)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--min-length", type=int, default=10)
    ap.add_argument("--engines", default="bloomspan,fhk,fhk-textbook",
                    help="Comma list of bloomspan, fhk (pruned, our exact engine), fhk-textbook (the article's FHK, Part 3).")
    ap.add_argument("--recovery", action="store_true", help="Score template recovery (web crawl only).")
    ap.add_argument("--cn-tokens", type=parse_count, default=parse_count("5M"), help="Tokens used for LZ78 c/n.")
    ap.add_argument("--cache-dir", type=Path, default=ROOT / "bench" / "out")
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="Where NAME.json goes (bench/results/).")
    ap.add_argument("--name", default=None, help="Result name (NAME.json); default mining-CORPUS-SIZE, plus "
                    "-sSIGMA-lMIN_LENGTH off σ 20 / min length 10 and the engines when not all three.")
    ap.add_argument("--label", default="", help="Series label written into the results row.")
    args = ap.parse_args(argv)
    command = "python -m bench.mining_bench " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))

    docs = args.docs or docs_for_tokens(args.corpus, args.tokens, args.seed)
    path = ensure_corpus(args.corpus, docs, args.seed, args.cache_dir)
    engines = [e for e in args.engines.split(",") if e]
    with tempfile.TemporaryDirectory(prefix="bloomspan-bench-", dir=args.cache_dir) as tmp:
        tmp = Path(tmp)
        store_dir = tmp / "store"
        recovery = args.recovery and args.corpus == "web"
        seconds_tok, n_docs, n_tokens = tokenize_into_store(path, store_dir, with_offsets=recovery)
        print(f"tokenized {n_docs:,} docs, {n_tokens:,} tokens in {seconds_tok:.1f}s "
              f"({n_tokens / seconds_tok / 1e6:.2f} M tokens/s)", file=sys.stderr)
        results = {}
        for engine in engines:
            results[engine] = run_worker(store_dir, engine, args.sigma, args.min_length, tmp / f"{engine}.json")
            r = results[engine]
            if r.get("failed"):
                print(f"{engine}: FAILED (exit {r['exit']}, peak {r['peak_rss_bytes'] / 2**20:.0f} MiB)", file=sys.stderr)
            else:
                print(f"{engine}: {r['seconds']:.2f}s, {r['phrases']} phrases, peak {r['peak_rss_bytes'] / 2**20:.0f} MiB",
                      file=sys.stderr)
        ok = [e for e in engines if not results[e].get("failed")]
        identical = None
        if len(ok) >= 2:
            digests = {results[e]["phrases_sha256"] for e in ok}
            identical = len(digests) == 1
        cn = lz78_cn(store_dir, args.cn_tokens)
        rec = rec_windows = None
        if recovery and "bloomspan" in ok:
            rec = template_recovery(path, store_dir, tmp / "bloomspan.coverage.npy")
            rec_windows = template_recovery(path, store_dir, tmp / "bloomspan.windows.npy")
    row = {
        "label": args.label, "command": command, "corpus": args.corpus, "docs": n_docs, "tokens": n_tokens,
        "sigma": args.sigma, "min_length": args.min_length, "seconds_tokenize": seconds_tok,
        "ns_per_token_tokenize": seconds_tok * 1e9 / n_tokens, "cn": cn, "machine": machine(),
        "engines": results, "identical": identical, "recovery": rec, "recovery_windows": rec_windows,
    }
    write_results(args.results_dir, args.name or default_name(args), row)
    print(json.dumps({k: v for k, v in row.items() if k != "engines"}, indent=1, default=str))
    return 0 if identical in (None, True) else 1


def default_name(args: argparse.Namespace) -> str:
    """``mining-web-10M``, ``mining-synthetic1-500-s3-l3``, ``mining-web-10M-bloomspan``: one result
    per corpus, size, setting and engine set, so a rerun replaces its own figure only."""
    size = count_text(args.tokens) if args.tokens else str(args.docs)
    name = f"mining-{args.corpus}-{size}"
    if (args.sigma, args.min_length) != (20, 10):
        name += f"-s{args.sigma}-l{args.min_length}"
    if args.engines != "bloomspan,fhk,fhk-textbook":
        name += "-" + "-".join(e for e in args.engines.split(",") if e)
    return name


def write_results(results_dir: Path, name: str, row: dict) -> None:
    """Write the run's section (a header per run keeps rows self-describing) to ``results_dir/NAME.json``."""
    e = row["engines"]
    bs, fhk = e.get("bloomspan", {}), e.get("fhk-textbook") or e.get("fhk", {})

    def ns(r):
        return r["seconds"] * 1e9 / row["tokens"] if r and not r.get("failed") else None

    def bpt(r):
        return r["peak_rss_bytes"] / row["tokens"] if r else None

    lines = [
        f"### {row['label'] or row['corpus']}: {row['tokens']:,} tokens, {row['docs']:,} docs, "
        f"σ={row['sigma']}, min_length={row['min_length']}",
        f"`{row['command']}` — {row['machine']}",
        "",
        "| engine | phrases | s | ns/token | peak MiB | peak bytes/token |",
        "|---|---|---|---|---|---|",
        f"| tokenize | - | {row['seconds_tokenize']:.2f} | {row['ns_per_token_tokenize']:.1f} | - | - |",
    ]
    for name, r in e.items():
        if r.get("failed"):
            lines.append(f"| {name} | FAILED (exit {r['exit']}) | - | - | {r['peak_rss_bytes'] / 2**20:.0f} | - |")
            continue
        lines.append(f"| {name} | {r['phrases']:,} | {r['seconds']:.2f} | {ns(r):.1f} | "
                     f"{r['peak_rss_bytes'] / 2**20:.0f} | {bpt(r):.1f} |")
    if bs and not bs.get("failed"):
        stages = {k[len("seconds_"):]: v for k, v in bs.get("stats", {}).items()
                  if k.startswith("seconds_") and k != "seconds_total"}
        lines.append("")
        lines.append("BloomSpan stages (ns/token): " + ", ".join(
            f"{k} {v * 1e9 / row['tokens']:.1f}" for k, v in stages.items()))
    if ns(bs) and ns(fhk):
        lines.append(f"BloomSpan/FHK{'-textbook' if 'fhk-textbook' in e else ''} time ratio {ns(bs) / ns(fhk):.3f} (FHK/BloomSpan speed-up {ns(fhk) / ns(bs):.2f}x); "
                     f"memory ratio {bpt(bs) / bpt(fhk):.3f}")
    if row["identical"] is not None:
        lines.append(f"phrase sets identical: **{'yes' if row['identical'] else 'NO'}**")
    lines.append(f"corpus shape: LZ78 c/n = {row['cn']:.3f}")
    for name, key in (("maximal-phrase occurrences (article's mask, Part 4)", "recovery"),
                      ("frequent windows (engine/mining/window_coverage.py)", "recovery_windows")):
        rec = row.get(key)
        if rec:
            append_recovery(lines, name, rec)
    write_section(name, "Mining engines", "\n".join(lines), results_dir=results_dir)


def append_recovery(lines: list[str], name: str, rec: dict) -> None:
    o = rec["overall"]
    sites = [s for s in rec["per_site"].values() if s["token_recall"] is not None]
    mean_site = sum(s["token_recall"] for s in sites) / len(sites) if sites else float("nan")
    lines.append(f"template recovery by {name}: char recall {o['char_recall']:.2%}, char damage "
                 f"{o['char_damage']:.3%}; token recall {o['token_recall']:.2%} (mean over sites {mean_site:.2%}), "
                 f"token damage {o['token_damage']:.3%}")
    lines.append("")
    lines.append("| site | docs | char recall | char damage | token recall | token damage |")
    lines.append("|---|---|---|---|---|---|")
    for site, s in rec["per_site"].items():
        def pct(v, d=2):
            return "-" if v is None else f"{v:.{d}%}"
        lines.append(f"| {site} | {s['docs']} | {pct(s['char_recall'])} | {pct(s['char_damage'], 3)} | "
                     f"{pct(s['token_recall'])} | {pct(s['token_damage'], 3)} |")


if __name__ == "__main__":
    sys.exit(main())
