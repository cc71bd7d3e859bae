"""What a Dask run costs against the single process, as a user runs them: whole commands.

    .venv/bin/python -m bench.dask_cost_bench --corpus web42k.jsonl --workers 1 2
    .venv/bin/python -m bench.dask_cost_bench --docs 42537 --workers 2   # generates the crawl

Each run is ``bloomspan mine --jsonl FILE --field text --id-field id --out DIR [--dask local:N]``
in a subprocess; its CPU is the rusage of the command and every process it waited for (the
scheduler lives in the command, local workers are its children), peak RSS is the largest of
the command and its children (for ``--dask`` runs that is a worker or the driver, whichever is
larger; the report's stats give the workers' share), and the bytes the workers sent each
other come from the run's own report (Dask's transfer counter). Every ``--dask`` run's
``phrases.jsonl`` must equal the single process's byte for byte. Runs are interleaved
(single, local:1, local:2, single, ...) ``--reps`` times and the medians reported, so the
ratios come from one stretch of this shared machine's load. The issue's goals are checked
against the ``local:2`` row: CPU <= 1.3x, wall <= 0.65x, <= 1 byte per token sent.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.result_file import write_section

GOALS = {"cpu": 1.3, "wall": 0.65, "bytes_per_token": 1.0, "worker_bytes_per_token_peak": 12.0}


def _bloomspan() -> str:
    return str(Path(sys.executable).with_name("bloomspan"))


# Runs the command in a fresh process whose only children are it and its own: their rusage is
# this one command's (ru_maxrss of the children is the largest process of the run).
_RUSAGE = ("import json, resource, subprocess, sys\n"
           "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
           "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
           "print(json.dumps({'rc': r.returncode, 'err': r.stderr[-3000:], 'cpu': u.ru_utime + u.ru_stime, "
           "'peak_rss': u.ru_maxrss * 1024}))\n")


def run_command(args: list[str]) -> dict:
    """Wall, CPU (user + sys of the command and its waited-for children) and peak RSS (the
    largest of them) of one command."""
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", _RUSAGE, *args], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t
    out = json.loads(res.stdout.strip().splitlines()[-1])
    if out["rc"]:
        raise SystemExit(f"{' '.join(args)} failed ({out['rc']}):\n{out['err']}")
    return {"wall": wall, "cpu": out["cpu"], "peak_rss": out["peak_rss"]}


def mine(path: Path, out: Path, workers: int | None, sigma: int, min_length: int, memory_limit: str) -> dict:
    args = [_bloomspan(), "mine", "--jsonl", str(path), "--field", "text", "--id-field", "id", "--out", str(out),
            "--sigma", str(sigma), "--min-length", str(min_length), "--progress", "none"]
    if workers:
        args += ["--dask", f"local:{workers}", "--dask-memory-limit", memory_limit]
    r = run_command(args)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    stats = report.get("stats", {})
    r.update(tokens=int(report["tokens_mined"]), load=os.getloadavg()[0],
             worker_bytes_sent=stats.get("worker_bytes_sent"), count_method=stats.get("count_method"),
             worker_peak_rss=stats.get("worker_peak_rss"),
             windows_sent_bytes=stats.get("windows_sent_bytes"), reduced_share=stats.get("reduced_share"))
    return r


def _median_row(runs: list[dict]) -> dict:
    row = {k: statistics.median(r[k] for r in runs) for k in ("wall", "cpu", "peak_rss", "load")}
    # the worker peak varies from run to run (which results a worker holds at once depends on
    # the order its tasks ran in): its median too, not the first run's
    if all(r["worker_peak_rss"] is not None for r in runs):
        row["worker_peak_rss"] = statistics.median(r["worker_peak_rss"] for r in runs)
    else:
        row["worker_peak_rss"] = runs[0]["worker_peak_rss"]
    for k in ("tokens", "worker_bytes_sent", "count_method", "windows_sent_bytes", "reduced_share"):
        row[k] = runs[0][k]
    return row


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", help="an existing JSON Lines crawl (default: generate one with --docs)")
    ap.add_argument("--docs", type=int, default=42537, help="documents of the generated web crawl")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--min-length", type=int, default=10)
    ap.add_argument("--memory-limit", default="4GiB", help="--dask-memory-limit of every local worker")
    ap.add_argument("--label", default="", help="names the result (dask-cost-LABEL), e.g. 1b for a billion-token run, "
                                                "so it does not replace the standing figure")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bloomspan-dask-cost-") as tmp:
        work = Path(tmp)
        path = Path(a.corpus) if a.corpus else work / "web.jsonl"
        if not a.corpus:
            run_command([_bloomspan(), "corpus", "web", "--docs", str(a.docs), "--seed", str(a.seed), "--out", str(path)])
        # One untimed run of each kind first: numba caches and the page cache are warm for all.
        mine(path, work / "warm", None, a.sigma, a.min_length, a.memory_limit)
        mine(path, work / "warm", min(a.workers), a.sigma, a.min_length, a.memory_limit)
        # A worker's memory before it holds any share: the peak of a 200-line run.
        tiny = work / "tiny.jsonl"
        with path.open("rb") as src, tiny.open("wb") as dst:
            dst.writelines(line for _, line in zip(range(200), src))
        idle = mine(tiny, work / "tiny", max(a.workers), 5, a.min_length, a.memory_limit)["worker_peak_rss"]
        runs: dict = {None: [], **{n: [] for n in a.workers}}
        for _ in range(a.reps):
            for n in runs:
                out = work / f"out-{n}"
                runs[n].append(mine(path, out, n, a.sigma, a.min_length, a.memory_limit))
                if n is not None and (out / "phrases.jsonl").read_bytes() != (work / "out-None" / "phrases.jsonl").read_bytes():
                    raise SystemExit(f"local:{n}: phrases.jsonl differs from the single process's")
                print(json.dumps({"workers": n, **runs[n][-1]}), file=sys.stderr)
        rows = {n: _median_row(r) for n, r in runs.items()}
    one = rows[None]
    size_mib = path.stat().st_size / 2**20 if a.corpus else None
    lines = [f"{one['tokens'] / 1e6:.1f} M tokens{f' ({size_mib:.0f} MiB JSONL)' if size_mib else ''}, sigma={a.sigma}, "
             f"min_length={a.min_length}, medians of {a.reps} interleaved runs, phrases.jsonl identical in every run"
             f"; a worker holds {idle / 2**20:.0f} MiB before its share (peak of a 200-line run)",
             "", "| run | wall s | CPU s | CPU / single | wall / single | peak RSS (largest process) | "
             "worker peak | worker B / token of its share (above idle) | "
             "worker bytes sent / token | count | load avg |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"]
    for n, r in rows.items():
        name = "single process" if n is None else f"`--dask local:{n}`"
        sent = "—" if r["worker_bytes_sent"] is None else f"{r['worker_bytes_sent'] / r['tokens']:.2f}"
        wpeak = share = "—"
        if n is not None:
            wpeak = f"{r['worker_peak_rss'] / 2**20:.0f} MiB"
            share = f"{(r['worker_peak_rss'] - idle) / (r['tokens'] / n):.1f}"
        lines.append(f"| {name} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['cpu'] / one['cpu']:.2f}× | "
                     f"{r['wall'] / one['wall']:.2f}× | {r['peak_rss'] / 2**20:.0f} MiB | {wpeak} | {share} | {sent} | "
                     f"{r['count_method'] or '—'} | {r['load']:.1f} |")
    if 2 in rows:
        two = rows[2]
        checks = {"CPU ≤ 1.3× single": two["cpu"] / one["cpu"] <= GOALS["cpu"],
                  "wall ≤ 0.65× single": two["wall"] / one["wall"] <= GOALS["wall"],
                  "≤ 1 B/token sent": (two["worker_bytes_sent"] or 0) / two["tokens"] <= GOALS["bytes_per_token"],
                  "worker ≤ 12 B/token of its share": (two["worker_peak_rss"] - idle) / (two["tokens"] / 2)
                  <= GOALS["worker_bytes_per_token_peak"]}
        lines += ["", "Goals (local:2): " + "; ".join(f"{k}: {'met' if v else 'missed'}" for k, v in checks.items())]
    text = "\n".join(lines)
    print(text)
    cmd = "python -m bench.dask_cost_bench " + " ".join(argv if argv is not None else sys.argv[1:])
    name = f"dask-cost-{a.label}" if a.label else "dask-cost"
    title = "Dask against one process, whole commands" + (f" ({a.label})" if a.label else "")
    write_section(name, "Mining on Dask", f"### {title}\n`{cmd}`\n\n{text}")


if __name__ == "__main__":
    main()
