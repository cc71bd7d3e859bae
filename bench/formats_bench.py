"""CPU per token of ``mine --jsonl`` and ``clean`` on one generated crawl written as JSON Lines
plain, gzip and Zstandard, Parquet and WET (sidecar/inputs/): what each format costs beside
plain JSON Lines.

Each format's file holds the same documents; mine and clean run in this process (the library
calls behind the commands, kernels compiled before the first timing), best CPU time of
``--repeats`` passes. Prints one JSON object (figures, command, commit, date, machine, load)
and writes it to ``--json`` when given.

    python -m bench.formats_bench --docs 5000 --json bench/history/formats.json
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.mining_bench import machine
from bench.result_file import table_of_rows, write_section

FORMATS = ("jsonl", "jsonl.gz", "jsonl.zst", "parquet", "warc.wet.gz")
JSON_OUT = ("jsonl", "jsonl.gz", "jsonl.zst")  # clean outputs compared line for line with the plain one


def _best_cpu(fn, repeats: int):
    best, result = None, None
    for _ in range(repeats):
        t0 = time.process_time()
        result = fn()
        cpu = time.process_time() - t0
        best = cpu if best is None else min(best, cpu)
    return best, result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--min-length", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None, help="Also write the result here.")
    args = ap.parse_args(argv)

    from bloomspan.corpora import corpus_by_name, write_jsonl
    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
    from bloomspan.ingest.match.loading import load_run_phrases
    from bloomspan.sidecar.cli.clean_jsonl import clean_jsonl
    from bloomspan.sidecar.cli.clean_parquet import clean_parquet
    from bloomspan.sidecar.run.jsonl_mining import mine_jsonl

    config = MiningConfig(sigma=args.sigma, min_length=args.min_length)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="bloomspan-formats-") as tmp:
        work = Path(tmp)
        docs = list(corpus_by_name("web", args.docs, args.seed))
        paths = {}
        for suffix in FORMATS:
            paths[suffix] = work / f"web.{suffix}"
            write_jsonl(docs, paths[suffix])  # the name decides the format
        del docs
        warm = mine_jsonl(str(paths["jsonl"]), "text", config, str(work / "warm"))  # compiles the kernels
        phrases = str(work / "warm" / "phrases.jsonl")
        loaded = load_run_phrases(phrases)
        cleaner = Cleaner(loaded.phrase_set, CleanerConfig(fields=("text",), id_field=None, skip_missing=True,
                                                           min_length=args.min_length), templates=loaded.templates)
        out_plain = work / "clean.jsonl"
        for suffix in FORMATS:
            out = work / f"clean.{suffix}"
            mine_cpu, mined = _best_cpu(lambda s=suffix: mine_jsonl(str(paths[s]), "text", config, str(work / s)),
                                        args.repeats)
            if suffix == "warc.wet.gz":
                out = work / "clean-wet.jsonl"
            clean = clean_parquet if suffix == "parquet" else clean_jsonl
            clean_cpu, cleaned = _best_cpu(lambda s=suffix, o=out, c=clean: c(
                cleaner, str(paths[s]), str(o), str(o) + ".errors.jsonl"), args.repeats)
            same_phrases = (work / suffix / "phrases.jsonl").read_bytes() == Path(phrases).read_bytes()
            rows[suffix] = {
                "file_bytes": paths[suffix].stat().st_size,
                "tokens": mined.tokens,
                "mine_cpu_s": round(mine_cpu, 4),
                "mine_ns_per_token_cpu": round(mine_cpu * 1e9 / mined.tokens, 1),
                "mine_tokenize_ns_per_token_wall": round(mined.seconds_tokenize * 1e9 / mined.tokens, 1),
                "clean_cpu_s": round(clean_cpu, 4),
                "clean_ns_per_token_cpu": round(clean_cpu * 1e9 / max(cleaned.tokens, 1), 1),
                "phrases_identical_to_plain": same_phrases,
            }
            if suffix == "jsonl":
                out_plain = out
            print(f"{suffix:10s} mine {rows[suffix]['mine_ns_per_token_cpu']:7.1f} ns/token CPU, "
                  f"clean {rows[suffix]['clean_ns_per_token_cpu']:7.1f} ns/token CPU", file=sys.stderr)
        from bloomspan.sidecar.inputs import open_lines

        with open_lines(str(out_plain)) as f:
            plain_clean = list(f)
        for suffix in JSON_OUT[1:]:
            with open_lines(str(work / f"clean.{suffix}")) as f:
                rows[suffix]["clean_identical_to_plain"] = list(f) == plain_clean
        del warm
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=False).stdout.strip()
    except OSError:
        commit = ""
    result = {
        "benchmark": "formats_bench",
        "command": "python -m bench.formats_bench " + shlex.join(argv if argv is not None else sys.argv[1:]),
        "commit": commit,
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": machine(),
        "load_average": round(os.getloadavg()[0], 2),
        "docs": args.docs,
        "repeats": args.repeats,
        "formats": rows,
    }
    text = json.dumps(result, indent=2)
    write_section("formats", "Input formats", "\n".join(
        [f"## Input formats beside plain JSON Lines: {args.docs:,} documents of the web crawl",
         f"`{result['command']}` — load average {result['load_average']}", "", table_of_rows(rows, "format")]))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
