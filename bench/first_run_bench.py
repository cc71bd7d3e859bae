"""The first command after an install against the second, with and without `bloomspan warmup`, in one run.

    .venv/bin/python -m bench.first_run_bench --docs 1500 --upstream http://127.0.0.1:9200

Issue 31's goal: on a fresh install the first ``mine`` takes at most 1.5x the second, and a new
``serve`` answers ``/readyz`` within 3 s of start with its kernels loaded. Each scenario gets its
own empty ``NUMBA_CACHE_DIR`` (a fresh install or a new container), and runs the README's
commands as a user types them, as child processes (wall seconds, and CPU seconds from the
children's rusage):

* ``no warm-up`` (a plain ``pip install``): ``mine`` twice, then ``clean`` twice;
* ``warm-up first`` (the image, the systemd install step, ``make demo``): ``bloomspan warmup``,
  then ``mine`` twice and ``clean`` twice; and, with ``--upstream``, ``serve`` started from that
  cache: the seconds from its start to ``/readyz`` 200 and the kernels it compiled (``/metrics``).

``mine`` is ``mine --jsonl CRAWL --site-field site --url-field url`` (the default path), ``clean``
is ``clean --phrases … --site-field site --url-field url`` with the records it wrote.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.proxy_bench import free_port
from bench.result_file import command_line, write_section

ROOT = Path(__file__).resolve().parents[1]
BLOOMSPAN = [sys.executable, "-c", "from bloomspan.sidecar.cli.main import main; main()"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args: list[str], env: dict) -> tuple[float, float, str]:
    """Run one bloomspan command; its wall and CPU seconds and its stderr (the compile notice)."""
    cpu0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run(BLOOMSPAN + args, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    if proc.returncode:
        raise SystemExit(f"first_run_bench: `bloomspan {' '.join(args)}` failed ({proc.returncode}):\n{proc.stderr}")
    return wall, cpu, proc.stderr


def serve_start(upstream: str, env: dict) -> tuple[float, str]:
    """Seconds from `serve`'s start to /readyz 200, and the kernels its warm-up compiled."""
    port = free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen(BLOOMSPAN + ["serve", "--port", str(port), "--upstream-url", upstream], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        while time.perf_counter() - t0 < 120:
            if proc.poll() is not None:
                raise SystemExit(f"first_run_bench: serve exited ({proc.returncode}):\n{proc.stderr.read()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            time.sleep(0.05)
        else:
            raise SystemExit("first_run_bench: serve not ready after 120 s")
        seconds = time.perf_counter() - t0
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
            metrics = resp.read().decode()
        compiled = next((line.split()[-1] for line in metrics.splitlines()
                         if line.startswith("bloomspan_kernel_warmup_compiled_kernels ")), "?")
        return seconds, compiled
    finally:
        proc.terminate()
        proc.wait(30)


def scenario(name: str, crawl: Path, work: Path, warm_first: bool, upstream: str | None) -> dict:
    cache = work / f"cache-{name}"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    env.pop("NUMBA_DISABLE_JIT", None)
    row: dict = {"scenario": name}
    if warm_first:
        row["warmup"] = timed(["warmup", "--progress", "none"], env)[:2]
    for i in (1, 2):
        out = work / f"{name}-mine-{i}"
        wall, cpu, err = timed(["mine", "--jsonl", str(crawl), "--out", str(out), "--site-field", "site",
                                "--url-field", "url", "--progress", "none"], env)
        row[f"mine{i}"] = (wall, cpu, "compiling numba kernels" in err)
    run = work / f"{name}-mine-1"
    for i in (1, 2):
        wall, cpu, err = timed(["clean", "--phrases", str(run / "phrases.jsonl"), "--in", str(crawl),
                                "--out", str(work / f"{name}-clean-{i}.jsonl"), "--site-field", "site",
                                "--url-field", "url"], env)
        row[f"clean{i}"] = (wall, cpu, "compiling numba kernels" in err)
    if warm_first and upstream:
        row["serve"] = serve_start(upstream, env)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--upstream", help="a cluster URL for the serve start (skipped without it)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="first-run-") as tmp:
        work = Path(tmp)
        crawl = work / "crawl.jsonl"
        subprocess.run(BLOOMSPAN + ["corpus", "web", "--docs", str(args.docs), "--seed", str(args.seed),
                                    "--out", str(crawl)], check=True, capture_output=True)
        rows = [scenario("no warm-up", crawl, work, False, None),
                scenario("warm-up first", crawl, work, True, args.upstream)]
    load = os.getloadavg()[0]
    lines = [f"## The first run after an install, against the second — {time.strftime('%Y-%m-%d %H:%M', time.gmtime())}",
             "", f"`{command_line('bench.first_run_bench', argv)}`", "",
             f"{args.docs:,} pages of the web crawl (seed {args.seed}); each scenario starts from an empty "
             f"`NUMBA_CACHE_DIR`; child processes, wall and CPU seconds (load average {load:.1f}).", "",
             "| scenario | warmup wall / CPU s | 1st mine wall / CPU s | 2nd mine | 1st / 2nd mine (wall) "
             "| 1st clean | 2nd clean | 1st / 2nd clean (wall) | serve: start to /readyz 200 s (kernels compiled) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in rows:
        warm = "{:.1f} / {:.1f}".format(*row["warmup"]) if "warmup" in row else "—"
        cells = [row["scenario"], warm]
        for step in ("mine", "clean"):
            first, second = row[f"{step}1"], row[f"{step}2"]
            cells += [f"{first[0]:.1f} / {first[1]:.1f}{' (compiled)' if first[2] else ''}",
                      f"{second[0]:.1f} / {second[1]:.1f}{' (compiled)' if second[2] else ''}",
                      f"{first[0] / second[0]:.2f}x"]
        cells.append("{:.2f} ({})".format(*row["serve"]) if "serve" in row else "—")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Goal (issue 31): the first `mine` at most 1.5x the second on a fresh install; `serve` ready "
              "within 3 s of start with its kernels loaded."]
    section = "\n".join(lines)
    print(section)
    write_section("first-run", "Kernels and caches", section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
