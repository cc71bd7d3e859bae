"""The mining core of an older checkout against this one: the same prefixes, alternately.

    git worktree add /tmp/core-before 4fd8d21
    python -m bench.core_ab --store /var/tmp/bstest-core/web-250M --points 10M,100M,250M \
        --before /tmp/core-before --reps 2 --fhk-max 20M --work /var/tmp/bstest-core

``--before`` is a checkout of the older commit (a git worktree; never a stash). Its code
runs from a folder holding ``bloomspan/{engine,ingest,sidecar,mappings}`` and ``bench`` as
links into the checkout, put first on ``PYTHONPATH`` of its :mod:`bench.mine_worker`
processes; this checkout's runs use the installed package. For every point and repetition
the older and the current core mine the same prefix one after the other, so both see the
same load (the machine is shared: CPU seconds, ``time.process_time`` of the worker, are
the comparable figures; the table keeps the smaller of the repetitions). FHK (unchanged
between the two) runs with the current code up to ``--fhk-max`` tokens. Peak = VmHWM of
the worker, the memory-mapped tokens included.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from bench.mining_bench import ROOT, parse_count
from bench.result_file import command_line, write_section
from bench.scaling_bench import STAGES, slope

PACKAGES = ("engine", "ingest", "sidecar", "mappings")


def import_root(checkout: Path, folder: Path) -> Path:
    """A folder from which ``import bloomspan`` and ``import bench`` load ``checkout``."""
    package = folder / "bloomspan"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").touch()
    for name in PACKAGES:
        link = package / name
        if not link.exists():
            link.symlink_to(checkout / name)
    if not (folder / "bench").exists():
        (folder / "bench").symlink_to(checkout / "bench")
    return folder


def mine(engine: str, store: Path, docs: int, out: Path, sigma: int, min_length: int, path: Path | None) -> dict:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = f"{path}{os.pathsep}{env['PYTHONPATH']}" if env.get("PYTHONPATH") else str(path)
    cmd = [sys.executable, "-m", "bench.mine_worker", "--store", str(store), "--engine", engine, "--sigma", str(sigma),
           "--min-length", str(min_length), "--docs", str(docs), "--out", str(out), "--no-windows"]
    proc = subprocess.run(cmd, cwd=path or ROOT, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{engine} worker ({'before' if path else 'after'}) exited {proc.returncode}: {' '.join(cmd)}")
    return json.loads(out.read_text())


def row(label: str, side: str, runs: list[dict]) -> str:
    best = min(runs, key=lambda r: r["cpu_seconds"])
    n = best["tokens"]
    st = best["stats"]
    split = " / ".join(f"{st.get(f'cpu_seconds_{s}', 0) * 1e9 / n:.1f}" for s in STAGES) if "fhk" not in side else "-"
    cpus = ", ".join(f"{r['cpu_seconds']:.2f}" for r in runs)
    return (f"| {label} | {n:,} | {side} | {best['phrases']:,} | {cpus} | {best['cpu_seconds'] * 1e9 / n:.1f} | "
            f"{best['seconds']:.1f} | {best['peak_rss_bytes'] / n:.2f} | {split} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--points", default="10M,100M")
    ap.add_argument("--before", type=Path, required=True, help="Checkout of the older commit (git worktree).")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--fhk-max", type=parse_count, default=parse_count("20M"))
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--min-length", type=int, default=10)
    ap.add_argument("--work", type=Path, required=True, help="Folder for the worker outputs and the import links.")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "core_ab.json")
    args = ap.parse_args(argv)

    from bloomspan.engine.text.corpus_store import CorpusStore

    before_path = import_root(args.before.resolve(), args.work / "before-imports")
    offsets = np.asarray(CorpusStore.open(str(args.store)).doc_offsets)
    results: dict[str, dict[str, list[dict]]] = {}
    lines = ["| point | tokens | core | phrases | CPU s (each rep) | CPU ns/token (best) | wall s | peak B/token | "
             "CPU ns/token by stage (" + ", ".join(STAGES) + ") |", "|---|---|---|---|---|---|---|---|---|"]
    for label in [p for p in args.points.split(",") if p]:
        target = parse_count(label)
        docs = min(int(np.searchsorted(offsets, target, side="left")), offsets.shape[0] - 1)
        runs: dict[str, list[dict]] = {"before": [], "after": [], "fhk (after)": []}
        for rep in range(args.reps):
            for side, path in (("before", before_path), ("after", None)):
                runs[side].append(mine("bloomspan", args.store, docs, args.work / f"ab-{label}-{side}-{rep}.json",
                                       args.sigma, args.min_length, path))
            if int(offsets[docs]) <= args.fhk_max:
                runs["fhk (after)"].append(mine("fhk", args.store, docs, args.work / f"ab-{label}-fhk-{rep}.json",
                                                args.sigma, args.min_length, None))
        digests = {r["phrases_sha256"] for side in ("before", "after") for r in runs[side]}
        digests |= {r["phrases_sha256"] for r in runs["fhk (after)"]}
        if len(digests) != 1:
            raise SystemExit(f"{label}: the phrase sets differ between runs ({len(digests)} digests)")
        results[label] = runs
        lines += [row(label, side, rs) for side, rs in runs.items() if rs]
        print("\n".join(lines), file=sys.stderr, flush=True)
    for side in ("before", "after"):
        xs = [min(results[p][side], key=lambda r: r["cpu_seconds"]) for p in results]
        if len(xs) >= 2:
            lines.append(f"\nlog-log slope, {side}: CPU {slope([r['tokens'] for r in xs], [r['cpu_seconds'] for r in xs]):.3f} "
                         f"(points {', '.join(results)})")
    for label, runs in results.items():
        b, a = (min(runs[s], key=lambda r: r["cpu_seconds"])["cpu_seconds"] for s in ("before", "after"))
        extra = ""
        if runs["fhk (after)"]:
            f = min(r["cpu_seconds"] for r in runs["fhk (after)"])
            extra = f"; FHK / BloomSpan CPU: before {f / b:.1f}x, after {f / a:.1f}x"
        lines.append(f"{label}: before / after CPU {b / a:.2f}x{extra}; identical phrase sets (SHA-256)")
    for runs in results.values():
        for rs in runs.values():
            for r in rs:
                r.pop("phrases_sha256", None)
    args.out.write_text(json.dumps(results, indent=1, default=float))
    print("\n".join(lines))
    write_section("core-ab", "Mining core on one node", "\n".join(
        ["## Mining core A/B: the whole core, before vs after", f"`{command_line('bench.core_ab', argv)}`", "", *lines]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
