"""`bloomspan warmup` compiles every kernel, with the signatures real commands use: after it,
with the same (at first empty) NUMBA_CACHE_DIR, `corpus`, `mine` and `clean` compile nothing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner
from numba.core import config as numba_config

from bloomspan.sidecar.cli.kernel_notice import start_message
from bloomspan.sidecar.cli.kernel_warmup import STEPS, serving_steps
from bloomspan.sidecar.cli.main import cli

needs_jit = pytest.mark.skipif(numba_config.DISABLE_JIT, reason="NUMBA_DISABLE_JIT=1: nothing compiles")

# Runs warmup, then lists every numba dispatcher of the three packages that holds no compiled
# signature. Kernels declared inline="always" are compiled into their callers, never on their own.
_WARM_AND_LIST = textwrap.dedent('''
    import importlib, json, pkgutil
    from numba.core.registry import CPUDispatcher
    from bloomspan.sidecar.cli.main import cli

    cli(["warmup", "--progress", "lines"], standalone_mode=False)
    kernels, missing = 0, []
    for name in ("bloomspan.engine", "bloomspan.ingest", "bloomspan.sidecar"):
        package = importlib.import_module(name)
        for info in pkgutil.walk_packages(package.__path__, name + "."):
            module = importlib.import_module(info.name)
            for attr, value in vars(module).items():
                if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__:
                    kernels += 1
                    if not value.signatures and value.targetoptions.get("inline") != "always":
                        missing.append(module.__name__ + "." + attr)
    print(json.dumps({"kernels": kernels, "missing": missing}))
''')


def _bloomspan(env, *args):
    return subprocess.run([sys.executable, "-m", "bloomspan.sidecar.cli.main", *args], env=env,
                          capture_output=True, text=True, timeout=600)


@needs_jit
def test_warmup_compiles_every_kernel_and_later_commands_compile_none(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    warm = subprocess.run([sys.executable, "-c", _WARM_AND_LIST], env=env, capture_output=True, text=True,
                          timeout=900)
    assert warm.returncode == 0, warm.stderr[-3000:]
    listed = json.loads(warm.stdout.strip().splitlines()[-1])
    assert listed["kernels"] > 50  # the walk found the packages' kernels
    assert listed["missing"] == []
    assert start_message() in warm.stderr  # the cache was empty: warmup compiled
    assert "bloomspan: warmup 8/8" in warm.stderr

    crawl = str(tmp_path / "crawl.jsonl")
    steps = [
        ("corpus", "web", "--docs", "600", "--seed", "3", "--out", crawl),
        ("mine", "--jsonl", crawl, "--site-field", "site", "--url-field", "url", "--out", str(tmp_path / "run")),
        ("clean", "--phrases", str(tmp_path / "run" / "phrases.jsonl"), "--in", crawl,
         "--out", str(tmp_path / "clean.jsonl"), "--site-field", "site", "--url-field", "url"),
    ]
    for args in steps:
        done = _bloomspan(env, *args)
        assert done.returncode == 0, done.stderr[-3000:]
        assert start_message() not in done.stderr, f"`{args[0]}` compiled after warmup:\n{done.stderr[-2000:]}"


def test_an_unwritable_cache_dir_is_refused_in_one_line(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(blocker / "numba"))  # a directory under a file
    result = CliRunner().invoke(cli, ["warmup"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert f"NUMBA_CACHE_DIR={blocker / 'numba'}: not writable" in lines[0]
    assert "Traceback" not in result.output


def test_serve_loads_only_the_kernels_a_request_can_reach_before_it_is_ready():
    # Before /readyz: cleaning (and its input, a small mining run) and, when it is on, the
    # emerging-shingle detector; not paragraph deduplication (dedup-index), the other engines,
    # snapshots or the Dask workers, which no request to serve runs.
    names = [name for name, _ in STEPS]
    assert serving_steps(False) == ("crawl", "mine", "clean")
    assert serving_steps(True) == ("crawl", "mine", "clean", "emerging")
    assert set(serving_steps(True)) <= set(names)
    assert [n for n in names if n in serving_steps(True)] == list(serving_steps(True))  # in STEPS' order
