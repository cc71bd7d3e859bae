"""Time and memory of the template detector on a generated crawl of a given size.

    python -m bench.template_detector_bench --docs 14179

Runs :func:`bloomspan.engine.templates.detector.detect_templates_in_texts` (defaults, sites and
URL sections as scopes) once in this process after a warm-up on a small crawl (numba
compilation), and reports wall seconds per pass, ns per token and the process's peak RSS
(``VmHWM``; the corpus texts are held in memory too). The row goes to
``bench/results/template-detector-<docs/1000>k.json``.
"""
from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from bench.result_file import write_section

ROOT = Path(__file__).resolve().parents[1]


def peak_rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=14179)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    from bloomspan.corpora import generate_web
    from bloomspan.engine.templates.detector import detect_templates_in_texts

    warm = list(generate_web(200, 1))
    detect_templates_in_texts([d["text"] for d in warm], [d["site"] for d in warm], [d["url"] for d in warm])
    t0 = time.perf_counter()
    docs = list(generate_web(args.docs, args.seed))
    gen = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = detect_templates_in_texts([d["text"] for d in docs], [d["site"] for d in docs], [d["url"] for d in docs])
    seconds = time.perf_counter() - t0
    st = out.detection.stats
    tokens = st["tokens_mined"]
    passes = {k: v for k, v in st.items() if k.startswith("seconds_") and k != "seconds_total"}
    row = (f"| {args.docs:,} | {tokens:,} | {seconds:.1f} | {seconds / tokens * 1e9:.0f} | "
           + ", ".join(f"{k[8:]} {v:.1f}" for k, v in passes.items())
           + f" | {len(out.records):,} | {st['covered_share']:.1%} | {peak_rss_mib():,.0f} |")
    print(f"generated {args.docs:,} pages in {gen:.1f}s")
    print(row)
    command = "python -m bench.template_detector_bench " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    write_section(f"template-detector-{args.docs // 1000}k", "Template quality",
                  f"## Template detector speed: {args.docs:,} generated pages\n`{command}` (tokenize + lines + all "
                  "passes, defaults, sites and sections as scopes)\n\n"
                  "| pages | tokens | seconds | ns/token | seconds per pass | records | covered | peak RSS MiB |\n"
                  "|---|---|---|---|---|---|---|---|\n" + row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
