"""The whole `bloomspan mine --jsonl` process against orjson's parse of the same file, in one run.

    .venv/bin/python -m bench.whole_run_bench --corpus web.jsonl \\
        --tree before=/tmp/tok-before-pkg --tree after=/tmp/tok-after-pkg --reps 3

Each ``--tree NAME=DIR`` runs ``bloomspan mine`` with DIR first on ``PYTHONPATH`` (DIR holds a
``bloomspan`` folder whose ``engine``, ``ingest``, ``sidecar`` and ``mappings`` link to a
``git worktree`` of another commit), so trees are compared in one run on the same machine
state; without ``--tree`` the installed tree runs. Every tree and engine runs once first to
warm its numba cache, then the runs interleave. CPU seconds are user + sys of the child
(``os.wait4``), the comparable figure on a shared machine; wall seconds are printed beside
them. The phrase files of all runs must be byte-identical (md5), else the bench fails.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from bench.result_file import command_line, write_section

MINE_FLAGS = ["--field", "text", "--id-field", "id", "--sigma", "20", "--min-length", "10", "--progress", "none"]


def orjson_parse_cpu(path: str, repeats: int = 3) -> float:
    """Best CPU seconds of ``orjson.loads`` over every line of ``path`` (this process)."""
    best = float("inf")
    for _ in range(repeats):
        c = time.process_time()
        with open(path, "rb") as f:
            for line in f:
                orjson.loads(line)
        best = min(best, time.process_time() - c)
    return best


def run_mine(bloomspan: str, corpus: str, out: Path, engine: str, pythonpath: str | None) -> dict:
    """One whole `mine --jsonl` process: wall and CPU seconds, peak RSS, md5 of phrases.jsonl."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [bloomspan, "mine", "--jsonl", corpus, *MINE_FLAGS, "--out", str(out), "--engine", engine]
    with tempfile.TemporaryFile() as err:  # a file, not a pipe: a chatty child never blocks
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {err.read()[-2000:].decode(errors='replace')}")
    digest = hashlib.md5((out / "phrases.jsonl").read_bytes()).hexdigest()
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024,
            "md5": digest}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True, help="JSON Lines file with fields text and id")
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=DIR",
                    help="a tree to run: DIR goes first on PYTHONPATH (repeatable; default: the installed tree)")
    ap.add_argument("--engines", nargs="+", default=["bloomspan", "fhk"])
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--bloomspan", default=shutil.which("bloomspan") or str(Path(sys.executable).with_name("bloomspan")))
    args = ap.parse_args(argv)
    trees = []
    for spec in args.tree or ["installed="]:
        name, sep, directory = spec.partition("=")
        if not sep or not name:
            ap.error(f"--tree {spec!r}: expected NAME=DIR")
        trees.append((name, directory or None))
    work = Path(tempfile.mkdtemp(prefix="bloomspan-whole-run-"))
    try:
        for _, directory in trees:  # warm each tree's numba cache
            for engine in args.engines:
                run_mine(args.bloomspan, args.corpus, work / "warm", engine, directory)
        parse = [orjson_parse_cpu(args.corpus)]
        rows: dict[tuple[str, str], list[dict]] = {}
        for _ in range(args.reps):
            for name, directory in trees:
                for engine in args.engines:
                    out = work / f"{name}-{engine}"
                    rows.setdefault((name, engine), []).append(run_mine(args.bloomspan, args.corpus, out, engine,
                                                                        directory))
        parse.append(orjson_parse_cpu(args.corpus))
        load = os.getloadavg()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    orjson_cpu = min(parse)
    out: list[str] = []
    out.append(f"orjson parse loop, best CPU s: {parse[0]:.3f} before the runs, {parse[1]:.3f} after; "
          f"load average at the end {load[0]:.1f}")
    out.append("| tree | engine | CPU s per run | wall s per run | × orjson CPU (best run) | peak RSS MiB |")
    out.append("|---|---|---|---|---|---|")
    for (name, engine), runs in rows.items():
        cpu = " / ".join(f"{r['cpu']:.2f}" for r in runs)
        wall = " / ".join(f"{r['wall']:.1f}" for r in runs)
        ratio = min(r["cpu"] for r in runs) / orjson_cpu
        out.append(f"| {name} | {engine} | {cpu} | {wall} | {ratio:.1f}× | {max(r['rss_mib'] for r in runs):.0f} |")
    for name, _ in trees:
        if "bloomspan" in args.engines and "fhk" in args.engines:
            b = min(r["cpu"] for r in rows[(name, "bloomspan")])
            f = min(r["cpu"] for r in rows[(name, "fhk")])
            out.append(f"{name}: whole FHK run / whole BloomSpan run, best CPU: {f / b:.2f}×")
    digests = {r["md5"] for runs in rows.values() for r in runs}
    out.append(f"phrases.jsonl md5 over all {sum(map(len, rows.values()))} runs: {', '.join(sorted(digests))}")
    print("\n".join(out))
    write_section("whole-run", "Mining core on one node", "\n".join(
        ["## The whole `mine --jsonl` process, trees side by side, against orjson's parse", f"`{command_line('bench.whole_run_bench', argv)}`", "", *out]))
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
